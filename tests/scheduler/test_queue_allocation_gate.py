"""Volcano's queue-allocation gate (``SchedulingGatesQueueAdmission``): allocate removes the gate of a pod
that opted in once its queue takes it, and capacity holds that pod's room until it is placed, so the next
gated pod is judged after it. Scenarios as Volcano's e2e ``schedulinggates`` suite walks them, a session
each."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.builders import PodBuilder, make_node, make_pg, make_pod, make_queue
from tests.scheduler.harness import Scenario, check
from volcano_py.api import constants as k
from volcano_py.api.features import SCHEDULING_GATES_QUEUE_ADMISSION

ON = f"{SCHEDULING_GATES_QUEUE_ADMISSION}=true"
OTHER = "example.com/other-gate"
CAPACITY_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: capacity}, {name: nodeorder}]
"""
PROPORTION_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}]
"""
NODES = [make_node("n0", cpu="8", memory="8Gi").obj()]
# A queue with room for one pod of one CPU, as the e2e suite's "slot".
QUEUES = [make_queue("q").capability(cpu="1", memory="1Gi").obj()]


def slot(name: str, group: str = "pg") -> PodBuilder:
    return make_pod(name).req(cpu="1", memory="1Gi").group(group)


def unschedulable(name: str) -> PodBuilder:
    """Past its gate (it opted in, the gate is gone) but no node matches it: it holds its queue room."""
    return slot(name).queue_gate(gated=False).node_selector({"kubernetes.io/fake-node": "fake"})


def groups(*names: str) -> list[dict[str, Any]]:
    return [
        make_pg(name, 1, phase="Inqueue").queue("q").min_res(cpu="1", memory="1Gi").obj() for name in names
    ]


def scenario(pods: list[PodBuilder], **kwargs: Any) -> Scenario:
    kwargs.setdefault("conf", CAPACITY_CONF)
    kwargs.setdefault("features", ON)
    return Scenario(
        nodes=NODES,
        queues=QUEUES,
        podgroups=kwargs.pop("podgroups", groups("pg")),
        pods=[p.obj() for p in pods],
        **kwargs,
    )


CASES = [
    pytest.param(
        scenario([slot("pod-1").queue_gate()], ungated=["pod-1"], bind_count=0),
        # Ungated this session, placed by a later one once the API server shows it without the gate.
        id="room-in-the-queue-removes-the-gate",
    ),
    pytest.param(
        scenario([make_pod("plain").req(cpu="1").queue_gate()], podgroups=[], ungated=["plain"]),
        id="pod-without-a-podgroup-too",
    ),
    pytest.param(
        scenario([slot("pod-1").queue_gate()], features="", ungated=[], bind_count=0),
        id="feature-off-leaves-the-gate",
    ),
    pytest.param(
        scenario([slot("pod-1").queue_gate(gated=False)], ungated=[], bound=["pod-1"]),
        # Its own reservation is the room it takes.
        id="opted-in-pod-past-its-gate-is-placed",
    ),
    pytest.param(
        scenario([slot("pod-1").gates(OTHER).queue_gate()], ungated=[], bind_count=0),
        id="another-gate-too-leaves-both",
    ),
    pytest.param(
        scenario([slot("pod-1").gates(k.QUEUE_ALLOCATION_GATE_KEY)], ungated=[], bind_count=0),
        # Nothing says the pod wants queue admission: Volcano leaves such a gate (and warns).
        id="our-gate-without-the-annotation-stays",
    ),
    pytest.param(
        scenario([make_pod("be").group("pg").queue_gate()], ungated=[], bind_count=0),
        id="best-effort-pod-is-not-ungated",
    ),
    pytest.param(
        scenario(
            [unschedulable("pod-2"), slot("pod-3", "pg3").queue_gate()],
            podgroups=groups("pg", "pg3"),
            ungated=[],
            bind_count=0,
            explains={
                "pg3": [
                    "1 pod keeps the queue-allocation gate until queue q has room: queue quota exceeded",
                    "counting the room held for pods let past their queue-allocation gate",
                ]
            },
        ),
        # The e2e's second step: pod-2 passed its queue but fits no node; it keeps the queue's one slot.
        id="room-held-by-an-unplaced-admitted-pod-keeps-the-next-gated",
    ),
    pytest.param(
        scenario([slot("pod-3", "pg3").queue_gate()], podgroups=groups("pg3"), ungated=["pod-3"]),
        id="once-the-holder-is-deleted-the-next-is-ungated",
    ),
    pytest.param(
        scenario(
            [slot("a").queue_gate(), slot("b", "pg2").queue_gate()],
            podgroups=groups("pg", "pg2"),
            ungated=["a"],
        ),
        # The first one admitted holds the slot within the same session.
        id="two-gated-pods-one-slot-one-ungated",
    ),
    pytest.param(
        Scenario(
            nodes=NODES,
            queues=[make_queue("q").capability(cpu="2", memory="2Gi").obj()],
            podgroups=[
                make_pg("gang", 2, phase="Inqueue").queue("q").obj(),
                make_pg("late", 1, phase="Inqueue").queue("q").obj(),
            ],
            pods=[
                slot("a", "gang").queue_gate(gated=False).obj(),
                slot("b", "gang")
                .queue_gate(gated=False)
                .node_selector({"kubernetes.io/fake-node": "fake"})
                .obj(),
                slot("c", "late").queue_gate().obj(),
            ],
            conf=CAPACITY_CONF,
            features=ON,
            ungated=[],
            bind_count=0,
        ),
        # The gang's try (one pod finds a node, the other none) is undone; both hold their room again.
        id="an-undone-gang-placement-holds-its-room-again",
    ),
    pytest.param(
        scenario(
            [unschedulable("held"), make_pod("plain").req(cpu="1", memory="1Gi").group("pg2")],
            podgroups=groups("pg", "pg2"),
            bind_count=0,
            explains={"pg2": ["queue quota exceeded", "queue-allocation gate"]},
        ),
        id="held-room-is-not-given-to-another-pod",
    ),
    pytest.param(
        scenario(
            [
                make_pod("running").req(cpu="1", memory="1Gi").group("pg").running("n0"),
                slot("gated", "pg2").queue_gate(),
            ],
            podgroups=[*groups("pg2"), make_pg("pg", 1, phase="Running").queue("q").obj()],
            conf=PROPORTION_CONF,
            ungated=[],
        ),
        # The queue's own check decides (here proportion's capability), whatever the quota plugin.
        id="full-queue-under-proportion-keeps-the-gate",
    ),
    pytest.param(
        scenario([slot("pod-1").queue_gate()], conf=PROPORTION_CONF, ungated=["pod-1"]),
        id="room-under-proportion-removes-the-gate",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_queue_allocation_gate(case: Scenario) -> None:
    check(case)


def test_ungate_names_the_pod_and_its_podgroup() -> None:
    result = check(scenario([slot("pod-1").queue_gate()], ungated=["pod-1"]))
    [ungate] = result.ungates
    assert (ungate.namespace, ungate.name, ungate.uid, ungate.job) == (
        "default",
        "pod-1",
        "uid-default-pod-1",
        "default/pg",
    )
