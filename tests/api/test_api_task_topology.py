"""Reading a Job's task-topology annotations: the cases of Volcano's own parser test, in our words."""

from __future__ import annotations

import pytest

from volcano_py.api import constants as c
from volcano_py.api.task_topology import TaskTopology, TaskTopologyError, ignored_because, task_topology_of

AFF, ANTI, ORDER = (
    c.TASK_TOPOLOGY_AFFINITY_KEY,
    c.TASK_TOPOLOGY_ANTI_AFFINITY_KEY,
    c.TASK_TOPOLOGY_TASK_ORDER_KEY,
)
TF = {"ps", "worker", "chief", "evaluator"}


@pytest.mark.parametrize(
    ("annotations", "tasks", "topology"),
    [
        pytest.param(
            {AFF: "ps,worker;ps,chief", ANTI: "ps;worker,chief", ORDER: "ps,worker,chief,evaluator"},
            TF,
            TaskTopology(
                (("ps", "worker"), ("ps", "chief")),
                (("ps",), ("worker", "chief")),
                ("ps", "worker", "chief", "evaluator"),
            ),
            id="all-three",
        ),
        pytest.param(
            {AFF: "ps-some,worker-a-b", ORDER: "worker-a-b"},
            {"ps-some", "worker-a-b"},
            TaskTopology((("ps-some", "worker-a-b"),), (), ("worker-a-b",)),
            id="names-with-dashes",
        ),
        pytest.param({}, TF, None, id="none"),
        pytest.param({"volcano.sh/task-topology": "x"}, TF, None, id="the-unused-bare-key-is-no-topology"),
        pytest.param(
            # Empty names name no task and are kept where they fall: "ps," is a pair, not ps alone.
            {AFF: "ps,worker;ps,,chief,;", ANTI: "ps;;", ORDER: "ps,,"},
            TF,
            TaskTopology(
                (("ps", "worker"), ("ps", "", "chief", ""), ("",)), (("ps",), ("",), ("",)), ("ps", "", "")
            ),
            id="stray-separators",
        ),
        pytest.param({AFF: ""}, TF, TaskTopology((("",),), (), ()), id="empty-value"),
    ],
)
def test_annotations_read(
    annotations: dict[str, str], tasks: set[str], topology: TaskTopology | None
) -> None:
    assert task_topology_of(annotations, tasks) == topology


@pytest.mark.parametrize(
    ("annotations", "key", "words"),
    [
        pytest.param({AFF: "$%GF$^"}, AFF, "task '$%GF$^' is not a task of this job", id="garbage"),
        pytest.param(
            {AFF: "ps,worker", ORDER: "ps,worker,chief"}, ORDER, "task 'chief'", id="unknown-in-order"
        ),
        pytest.param({ANTI: "ps,ps"}, ANTI, "task 'ps' appears twice in the group 'ps,ps'", id="duplicate"),
        pytest.param({ORDER: "worker,ps,worker"}, ORDER, "appears twice", id="duplicate-in-order"),
    ],
)
def test_bad_annotations_name_the_key_and_the_task(annotations: dict[str, str], key: str, words: str) -> None:
    with pytest.raises(TaskTopologyError) as err:
        task_topology_of(annotations, {"ps", "worker"})
    assert err.value.key == key
    assert str(err.value).startswith(f"{key}: ")
    assert words in str(err.value)


def test_why_says_the_topology_is_ignored_and_how_to_fix_it() -> None:
    said = ignored_because({AFF: "ps,chef"}, {"ps", "worker"})
    assert said is not None
    assert (
        "volcano.sh/task-topology-affinity: task 'chef' is not a task of this job (its tasks: ps, worker)"
        in said
    )
    assert "placed as if it had none" in said
    assert ignored_because({AFF: "ps,worker"}, {"ps", "worker"}) is None
