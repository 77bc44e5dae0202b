"""Pods held by ``spec.schedulingGates``: never placed, still members of their gang (as Volcano counts them),
and a gang short of its minimum because of them waits with NotEnoughResources, saying so."""

from __future__ import annotations

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod, make_priority_class
from tests.scheduler.harness import Scenario, check
from volcano_py.scheduler.framework.snapshot import Records, Snapshot
from volcano_py.scheduler.framework.status import TaskStatus

GATE = "example.com/g1"
GANG_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}]
"""
PREEMPT_CONF = """
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}]
"""


def member(name: str, group: str, *gates: str, cpu: str = "1") -> dict[str, object]:
    pod = make_pod(name).req(cpu=cpu).group(group)
    return (pod.gates(*gates) if gates else pod).obj()


CASES = [
    pytest.param(
        Scenario(
            nodes=[make_node("n0", cpu="8").obj()],
            pods=[member("w0", "pg"), member("w1", "pg", GATE), member("w2", "pg", GATE)],
            podgroups=[make_pg("pg", 3).obj()],
            conf=GANG_CONF,
            bind_count=0,
            phases={"pg": "Inqueue"},
            reasons={"pg": "NotEnoughResources"},
            explains={"pg": ["3/3 tasks in gang unschedulable: 2 pods held by spec.schedulingGates"]},
        ),
        # Gated pods count as valid members (the gang is not short of pods), so it waits for resources
        # as Volcano's gang says, and the one free pod is not bound alone.
        id="gang-short-because-of-gated-pods-waits-whole",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("n0", cpu="8").obj()],
            pods=[member("w0", "pg", GATE), member("w1", "pg", GATE)],
            podgroups=[make_pg("pg", 2).obj()],
            conf=GANG_CONF,
            bind_count=0,
            reasons={"pg": "NotEnoughResources"},
            explains={"pg": ["2/2 tasks in gang unschedulable: 2 pods held by spec.schedulingGates"]},
        ),
        id="gang-of-gated-pods-only",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("n0", cpu="8").obj()],
            pods=[member("w0", "pg"), member("w1", "pg"), member("w2", "pg", GATE)],
            podgroups=[make_pg("pg", 2).obj()],
            conf=GANG_CONF,
            bound=["w0", "w1"],
            phases={"pg": "Running"},
            reasons={"pg": "Scheduled"},
        ),
        # minAvailable met without it: the gated pod waits for its gate and nothing is said of the gang.
        id="gang-met-without-its-gated-pod-runs",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("n0", cpu="8").obj()],
            pods=[member("w0", "pg"), member("w1", "pg"), member("w2", "pg")],
            podgroups=[make_pg("pg", 3).obj()],
            conf=GANG_CONF,
            bind_count=3,
            reasons={"pg": "Scheduled"},
        ),
        id="the-same-gang-with-its-gates-removed-is-placed",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("n0", cpu="8").obj()],
            pods=[make_pod("solo").req(cpu="1").gates(GATE).obj(), make_pod("be").gates(GATE).obj()],
            conf=GANG_CONF,
            bind_count=0,
        ),
        # A plain pod and a best-effort one (backfill's) alike.
        id="gated-plain-and-best-effort-pods-are-not-placed",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("n0", cpu="4").obj()],
            pods=[
                *(make_pod(f"low{i}").req(cpu="1").group("low").running("n0").obj() for i in range(4)),
                *(
                    make_pod(f"high{i}").req(cpu="1").group("high").priority(100, "high").gates(GATE).obj()
                    for i in range(2)
                ),
            ],
            podgroups=[
                make_pg("low", 1, phase="Running").obj(),
                make_pg("high", 2).priority_class("high").obj(),
            ],
            priority_classes=[make_priority_class("high", 100)],
            conf=PREEMPT_CONF,
            bind_count=0,
            pipelined={},
        ),
        # No room is made for pods that could not be bound anyway.
        id="gated-pods-preempt-nothing",
    ),
]

# A Job as the e2e "gated task will not consume inqueue resources" builds it: a gang admitted for the whole
# cluster whose pods are all gated, then a smaller Job that needs half of it.
ENQUEUE_CONFS = {
    "proportion": GANG_CONF,
    "capacity": """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: capacity}, {name: nodeorder}]
""",
    "overcommit": """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: overcommit, arguments: {overcommit-factor: 1.0}}, {name: nodeorder}]
""",
}
for plugin, conf in ENQUEUE_CONFS.items():
    CASES.append(
        pytest.param(
            Scenario(
                nodes=[make_node("n0", cpu="4").obj()],
                pods=[
                    *(member(f"g{i}", "gated", GATE) for i in range(4)),
                    *(member(f"j{i}", "job1") for i in range(2)),
                ],
                podgroups=[
                    make_pg("gated", 4).min_res(cpu="4").obj(),
                    make_pg("job1", 2, phase="Pending").min_res(cpu="2").obj(),
                ],
                conf=conf,
                bound=["j0", "j1"],
                phases={"gated": "Inqueue", "job1": "Running"},
            ),
            # The gated gang's minimum (the whole node) is not held for pods that wait behind their gates, so
            # the next Job is admitted and placed (Volcano's DeductSchGatedResources).
            id=f"gated-pods-hold-no-queue-room-{plugin}",
        )
    )


@pytest.mark.parametrize("scenario", CASES)
def test_scenario(scenario: Scenario) -> None:
    result = check(scenario)
    if scenario.conf == PREEMPT_CONF:
        assert result.evictions == ()


def test_removing_the_gates_is_a_new_version_read_again() -> None:
    records = Records()
    gated = make_pod("w0").req(cpu="1").group("pg").gates(GATE).obj()
    ungated = {**gated, "spec": {k: v for k, v in gated["spec"].items() if k != "schedulingGates"}}
    first = Snapshot.build(pods=[gated], podgroups=[make_pg("pg").obj()], records=records)
    second = Snapshot.build(pods=[ungated], podgroups=[make_pg("pg").obj()], records=records)
    assert [t.name for t in first.jobs["default/pg"].pending_tasks] == []
    assert first.jobs["default/pg"].count(TaskStatus.PENDING) == 1
    assert [t.name for t in second.jobs["default/pg"].pending_tasks] == ["w0"]
