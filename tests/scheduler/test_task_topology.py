"""task-topology: buckets, task order and node scores (pure), and what one session does with an annotated job
under Volcano's greedy conf and under the default (cpsat) conf."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod
from tests.scheduler.harness import NOW, Scenario, run
from volcano_py.api import constants as c
from volcano_py.api.task_topology import TaskTopology
from volcano_py.scheduler.builtin import default_registry
from volcano_py.scheduler.core import load_conf
from volcano_py.scheduler.framework.conf import _VOLCANO_BUILTIN_CONF, DEFAULT_CONF, with_plugin
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.framework.task import TaskInfo
from volcano_py.scheduler.plugins.tasktopology import TaskTopologyPlugin
from volcano_py.scheduler.plugins.tasktopology_buckets import JobBuckets, Relations

AFF, ANTI, ORDER = (
    c.TASK_TOPOLOGY_AFFINITY_KEY,
    c.TASK_TOPOLOGY_ANTI_AFFINITY_KEY,
    c.TASK_TOPOLOGY_TASK_ORDER_KEY,
)
GREEDY = with_plugin(_VOLCANO_BUILTIN_CONF, "task-topology")
CPSAT = with_plugin(DEFAULT_CONF, "task-topology")
# Volcano's TensorFlow example: the parameter servers apart, each with its share of workers.
TF = {AFF: "ps,worker", ANTI: "ps"}


def _pod(name: str, task: str, *, cpu: int = 2, node: str = "") -> TaskInfo:
    builder = make_pod(name).req(cpu=cpu).group("tf", task)
    return TaskInfo.from_pod((builder.running(node) if node else builder).obj())


def _vec(task: TaskInfo) -> np.ndarray:
    return np.array([1, task.resreq.amount("cpu")], dtype=np.int64)


def _buckets(topology: TaskTopology, tasks: list[TaskInfo]) -> JobBuckets:
    return JobBuckets(Relations.of(topology), tasks, _vec, 2)


def _tf_pods(ps: int = 2, workers: int = 4) -> list[TaskInfo]:
    return [_pod(f"ps-{i}", "ps") for i in range(ps)] + [
        _pod(f"worker-{i}", "worker") for i in range(workers)
    ]


def _dealt(buckets: JobBuckets, tasks: list[TaskInfo]) -> list[list[str]]:
    out: list[list[str]] = [[] for _ in buckets.buckets]
    for task in tasks:
        bucket = buckets.bucket(task)
        if bucket is not None:
            out[bucket.index].append(task.name)
    return [sorted(names) for names in out]


# --- buckets ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topology", "tasks", "dealt"),
    [
        pytest.param(
            TaskTopology((("ps", "worker"),), (("ps",),)),
            _tf_pods(),
            [["ps-0", "worker-0", "worker-2"], ["ps-1", "worker-1", "worker-3"]],
            id="ps-apart-workers-shared-out",
        ),
        pytest.param(
            TaskTopology((("worker",),)),
            _tf_pods(),
            [["worker-0", "worker-1", "worker-2", "worker-3"]],
            id="self-affinity-one-bucket-ps-out",
        ),
        pytest.param(
            TaskTopology((), (("worker",),)),
            _tf_pods(ps=0, workers=3),
            [["worker-0"], ["worker-1"], ["worker-2"]],
            id="self-anti-affinity-a-bucket-each",
        ),
        pytest.param(
            TaskTopology((("worker",),)),
            [_pod("worker-0", "worker", node="n1"), _pod("worker-1", "worker"), _pod("worker-2", "worker")],
            [["worker-0", "worker-1", "worker-2"]],
            id="waiting-pods-join-the-bucket-of-their-running-mate",
        ),
        pytest.param(
            TaskTopology((), (), ("worker", "ps")), _tf_pods(), [], id="task-order-alone-deals-no-bucket"
        ),
        pytest.param(
            # "ps," is a group of two names (ps and an empty one), so not ps with itself: Volcano's reading.
            TaskTopology((("ps", ""),)),
            _tf_pods(ps=2, workers=0),
            [["ps-0", "ps-1"]],
            id="a-stray-comma-makes-no-self-affinity",
        ),
    ],
)
def test_pods_are_dealt_into_buckets(
    topology: TaskTopology, tasks: list[TaskInfo], dealt: list[list[str]]
) -> None:
    assert _dealt(_buckets(topology, tasks), tasks) == dealt


# --- task order ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topology", "order"),
    [
        pytest.param(
            TaskTopology((("ps", "worker"),), (("ps",),)),
            ["ps-0", "worker-0", "worker-2", "ps-1", "worker-1", "worker-3", "chief-0"],
            id="bucket-by-bucket-strongest-relation-first",
        ),
        pytest.param(
            # Workers dealt first share one bucket, which then draws both ps (4 affine, 1 anti-affine):
            # the order decides the buckets too, as in Volcano.
            TaskTopology((("ps", "worker"),), (("ps",),), ("worker", "ps")),
            ["worker-0", "worker-1", "worker-2", "worker-3", "ps-0", "ps-1", "chief-0"],
            id="task-order-annotation-first",
        ),
    ],
)
def test_task_order(topology: TaskTopology, order: list[str]) -> None:
    tasks = [*_tf_pods(), _pod("chief-0", "chief")]
    buckets = _buckets(topology, tasks)
    ranked = sorted(tasks, key=functools.cmp_to_key(buckets.order))
    assert [t.name for t in ranked] == order


def test_a_fuller_bucket_goes_first_once_the_other_got_pods() -> None:
    tasks = _tf_pods()
    buckets = _buckets(TaskTopology((("ps", "worker"),), (("ps",),)), tasks)
    buckets.placed(tasks[0], "n0")  # ps-0 of bucket 0 placed: bucket 1 now has more waiting
    ps1, worker0 = tasks[1], tasks[2]
    assert buckets.order(ps1, worker0) == -1


# --- node scores --------------------------------------------------------------------------------------------

NODES = ["n0", "n1", "n2"]
ROWS = np.arange(3, dtype=np.int64)
ROW_OF = {name: row for row, name in enumerate(NODES)}


@pytest.mark.parametrize(
    ("placed", "role", "bucket", "room_pods", "scores"),
    [
        # Bucket 0 = ps-0, worker-0, worker-2: nothing placed, the whole bucket fits everywhere.
        pytest.param([], "ps", 0, [8, 8, 8], [3, 3, 3], id="empty-nodes-score-alike"),
        # ps-0 on n0: its bucket's workers score n0 higher (one mate there, two waiting).
        pytest.param([("ps-0", "n0")], "worker", 0, [8, 8, 8], [3, 2, 2], id="affine-mate-draws-the-worker"),
        # ps-1 (bucket 1) scores n0 lower: an anti-affine ps is there.
        pytest.param([("ps-0", "n0")], "ps", 1, [8, 8, 8], [2, 3, 3], id="anti-affine-pod-repels"),
        # n1 holds only 2 of the bucket's 3 pods (one counted out), n2 not even one (zero).
        pytest.param([], "ps", 0, [8, 2, 0], [3, 2, 0], id="room-for-part-of-the-bucket"),
    ],
)
def test_node_scores(
    placed: list[tuple[str, str]], role: str, bucket: int, room_pods: list[int], scores: list[float]
) -> None:
    tasks = _tf_pods()
    by_name = {t.name: t for t in tasks}
    buckets = _buckets(TaskTopology((("ps", "worker"),), (("ps",),)), tasks)
    for name, node in placed:
        buckets.placed(by_name[name], node)
    room = np.array([[pods, pods * 2000] for pods in room_pods], dtype=np.int64)
    vec = np.array([1, 2000], dtype=np.int64)
    got = buckets.scores(bucket, role, vec, ROWS, ROW_OF, room, np.zeros(3, dtype=np.int64))
    assert got.tolist() == scores


def test_placed_then_unplaced_restores_the_scores() -> None:
    tasks = _tf_pods()
    buckets = _buckets(TaskTopology((("ps", "worker"),), (("ps",),)), tasks)
    room = np.full((3, 2), 16000, dtype=np.int64)
    vec, none = np.array([1, 2000], dtype=np.int64), np.zeros(3, dtype=np.int64)
    before = [
        buckets.scores(b, r, vec, ROWS, ROW_OF, room, none).tolist() for b, r in ((0, "worker"), (1, "ps"))
    ]
    buckets.placed(tasks[0], "n0")
    buckets.unplaced(tasks[0], "n0")
    after = [
        buckets.scores(b, r, vec, ROWS, ROW_OF, room, none).tolist() for b, r in ((0, "worker"), (1, "ps"))
    ]
    assert after == before


# --- one session ---------------------------------------------------------------------------------------


def _tf_job(annotations: dict[str, str], *, ps: int = 2, workers: int = 4) -> tuple[list[Any], Any]:
    pg = make_pg("tf", ps + workers).obj()
    pg["metadata"]["annotations"] = dict(annotations)
    pods = [make_pod(f"tf-ps-{i}").req(cpu=2).group("tf", "ps").obj() for i in range(ps)]
    pods += [make_pod(f"tf-worker-{i}").req(cpu=2).group("tf", "worker").obj() for i in range(workers)]
    return pods, pg


def _layout(annotations: dict[str, str], conf: str, nodes: int = 3, cpu: int = 8) -> list[list[str]]:
    pods, pg = _tf_job(annotations)
    result = run(Scenario(nodes=[make_node(f"n{i}", cpu=cpu).obj() for i in range(nodes)], pods=pods,
                          podgroups=[pg], conf=conf))  # fmt: skip
    on: dict[str, list[str]] = {}
    for bind in result.binds:
        on.setdefault(bind.node, []).append(bind.name.rsplit("-", 1)[0].removeprefix("tf-"))
    assert sum(len(v) for v in on.values()) == 6, on
    return sorted(sorted(v) for v in on.values())


PS_APART_WITH_WORKERS = [["ps", "worker", "worker"], ["ps", "worker", "worker"]]


def _ps_apart_each_with_workers(layout: list[list[str]]) -> bool:
    return all(node.count("ps") == 1 for node in layout)


@pytest.mark.parametrize("conf", [GREEDY, CPSAT], ids=["greedy", "cpsat"])
def test_ps_apart_each_with_its_workers(conf: str) -> None:
    # The baseline: without the annotations both confs leave a node without a ps (and cpsat packs both ps).
    assert not _ps_apart_each_with_workers(_layout({}, conf))
    assert _ps_apart_each_with_workers(_layout(TF, conf))


def test_greedy_shares_the_workers_out_bucket_by_bucket() -> None:
    assert _layout(TF, GREEDY) == PS_APART_WITH_WORKERS


@pytest.mark.parametrize("conf", [GREEDY, CPSAT], ids=["greedy", "cpsat"])
def test_self_affinity_keeps_the_workers_on_one_node(conf: str) -> None:
    # Without it the default scores spread (greedy: least requested) or pack anywhere; with it the
    # workers share one node and the ps (anti-affine to them) keep off it.
    layout = _layout({AFF: "worker", ANTI: "ps,worker"}, conf, nodes=3, cpu=8)
    assert ["worker", "worker", "worker", "worker"] in layout
    assert all("ps" not in node or "worker" not in node for node in layout)


@pytest.mark.parametrize("conf", [GREEDY, CPSAT], ids=["greedy", "cpsat"])
def test_a_bad_annotation_is_ignored_whole_as_volcano_does(conf: str) -> None:
    # One bad annotation drops all three for the job (Volcano logs it and places the job without them).
    assert _layout({**TF, ORDER: "ps,chef"}, conf) == _layout({}, conf)


def test_a_discarded_allocation_is_taken_back_out_of_the_counts() -> None:
    pods, pg = _tf_job(TF)
    snapshot = Snapshot.build(nodes=[make_node("n0").obj(), make_node("n1").obj()], pods=pods, podgroups=[pg])
    ssn = Session(snapshot, load_conf(GREEDY), default_registry(), now=NOW)
    ssn.open()
    plugin = ssn.plugin("task-topology")
    assert isinstance(plugin, TaskTopologyPlugin)
    job = ssn.jobs["default/tf"]
    worker = next(t for t in job.pending_tasks if t.role == "worker")
    klass = ssn.task_class(worker)
    rows = ssn.table.rows
    zero = np.zeros(len(rows), dtype=np.int64)
    before = plugin.node_order(ssn, klass, rows, zero).tolist()
    ps = next(t for t in job.pending_tasks if t.name == "tf-ps-0")
    with ssn.statement() as stmt:
        stmt.allocate(ps, 0)
        assert plugin.node_order(ssn, klass, rows, zero).tolist() != before
        stmt.discard()
    assert plugin.node_order(ssn, klass, rows, zero).tolist() == before
    ssn.close()
