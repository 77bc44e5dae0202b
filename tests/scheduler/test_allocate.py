"""Scenario table for enqueue + allocate + backfill: gangs, queues, priorities, packing, pipelining."""

from __future__ import annotations

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod, make_priority_class, make_queue
from tests.scheduler.harness import Scenario, check

BINPACK = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
    arguments: {leastrequested.weight: 0, balancedresource.weight: 0}
  - name: binpack
    arguments: {binpack.weight: 10}
"""
OVERCOMMIT_ONLY = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: gang}, {name: overcommit}, {name: predicates}]
"""
# Volcano's gang-eviction e2e conf shape: no enqueue action, so allocate admits Pending groups itself.
WITHOUT_ENQUEUE = """
actions: "allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}]
"""
NO_JOB_ORDER_PRIORITY = """
actions: "allocate"
tiers:
- plugins: [{name: priority, enableJobOrder: false}, {name: gang}]
- plugins: [{name: predicates}, {name: nodeorder}]
"""


def pods(prefix: str, count: int, group: str, **req: object) -> list[dict[str, object]]:
    return [make_pod(f"{prefix}{i}").req(**req).group(group).obj() for i in range(count)]  # type: ignore[arg-type]


def nodes(count: int, **cap: object) -> list[dict[str, object]]:
    return [make_node(f"n{i}", **cap).obj() for i in range(count)]  # type: ignore[arg-type]


CASES = [
    pytest.param(
        Scenario(
            nodes=nodes(2),
            pods=pods("w", 4, "pg", cpu=2),
            podgroups=[make_pg("pg", 4).obj()],
            bind_count=4,
            phases={"pg": "Running"},
            reasons={"pg": "Scheduled"},
        ),
        id="gang-that-fits-binds-whole",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2),
            pods=pods("w", 4, "pg", cpu=5),
            podgroups=[make_pg("pg", 4).obj()],
            bind_count=0,
            phases={},
            reasons={"pg": "NotEnoughResources"},
            explains={
                "pg": ["2/4 tasks unschedulable", "2 nodes insufficient cpu (need 5, best node has 3 free)"]
            },
        ),
        id="gang-that-does-not-fit-binds-nothing",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2),
            pods=pods("w", 4, "pg", cpu=5),
            podgroups=[make_pg("pg", 2).obj()],
            bind_count=2,
            phases={"pg": "Running"},
            explains={"pg": ["2/4 tasks unschedulable"]},
        ),
        id="elastic-gang-binds-min-and-explains-rest",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2),
            pods=[make_pod("ps").req(cpu=10).group("pg", "ps").obj()]
            + [make_pod(f"w{i}").req(cpu=2).group("pg", "worker").obj() for i in range(2)],
            podgroups=[make_pg("pg", 2).task_min(ps=1, worker=1).obj()],
            bind_count=0,
            reasons={"pg": "NotEnoughResources"},
            explains={"pg": ["insufficient cpu (need 10"]},
        ),
        id="min-task-member-blocks-gang-without-its-ps",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2),
            pods=[make_pod("ps").req(cpu=4).group("pg", "ps").obj()]
            + [make_pod(f"w{i}").req(cpu=4).group("pg", "worker").obj() for i in range(3)],
            podgroups=[make_pg("pg", 3).task_min(ps=1, worker=2).obj()],
            bind_count=4,
            reasons={"pg": "Scheduled"},
        ),
        id="min-task-member-met-binds",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=4),
            pods=pods("low", 1, "low", cpu=4) + pods("high", 1, "high", cpu=4),
            podgroups=[make_pg("low").obj(), make_pg("high").priority_class("urgent").obj()],
            priority_classes=[make_priority_class("urgent", 1000)],
            bound=["high0"],
            reasons={"low": "NotEnoughResources", "high": "Scheduled"},
        ),
        id="higher-priority-job-first",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=4),
            pods=pods("low", 1, "low", cpu=4) + pods("high", 1, "high", cpu=4),
            podgroups=[make_pg("low").obj(), make_pg("high").priority_class("urgent").obj()],
            priority_classes=[make_priority_class("urgent", 1000)],
            conf=NO_JOB_ORDER_PRIORITY,
            bound=["low0"],
        ),
        id="enableJobOrder-false-falls-back-to-creation-order",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=4),
            pods=[
                make_pod("a").req(cpu=4).group("pg").priority(1).obj(),
                make_pod("b").req(cpu=4).group("pg").priority(50).obj(),
            ],
            podgroups=[make_pg("pg", 1).obj()],
            bound=["b"],
        ),
        id="task-order-by-pod-priority",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=12),
            pods=pods("a", 12, "ja", cpu=1) + pods("b", 12, "jb", cpu=1),
            podgroups=[make_pg("ja").queue("qa").obj(), make_pg("jb").queue("qb").obj()],
            queues=[make_queue("qa", 2).obj(), make_queue("qb", 1).obj()],
            bound=[f"a{i}" for i in range(8)] + [f"b{i}" for i in range(4)],
        ),
        id="two-queues-share-by-weight",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=pods("a", 8, "ja", cpu=1) + pods("b", 8, "jb", cpu=1),
            podgroups=[make_pg("ja").queue("qa").obj(), make_pg("jb").queue("qb").obj()],
            queues=[make_queue("qa", 1).guarantee(cpu=6).obj(), make_queue("qb", 3).obj()],
            bound=[f"a{i}" for i in range(6)] + [f"b{i}" for i in range(2)],
        ),
        id="guarantee-overrides-weight",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=pods("a", 4, "ja", cpu=1),
            podgroups=[make_pg("ja").queue("qa").obj()],
            queues=[make_queue("qa").capability(cpu=2).obj()],
            bound=["a0", "a1"],
            explains={"ja": ["queue qa over capability on cpu: 2 allocated + 1 requested > 2"]},
        ),
        id="queue-capability-caps-allocation",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            podgroups=[make_pg("ja", 2, phase="Pending").queue("qa").min_res(cpu=6).obj()],
            queues=[make_queue("qa").capability(cpu=4).obj()],
            bind_count=0,
            phases={},
            reasons={"ja": "NotInqueueable"},
            explains={"ja": ["queue qa over capability on cpu: 0 allocated or admitted + 6 requested > 4"]},
        ),
        id="capability-rejects-enqueue",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            podgroups=[make_pg("big", 2, phase="Pending").min_res(cpu=20).obj()],
            reasons={"big": "NotInqueueable"},
            explains={"big": ["cluster over-commit limit on cpu", "+ 20 requested > 9600m (1.2 x capacity)"]},
        ),
        id="overcommit-rejects-enqueue",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            podgroups=[make_pg("fits", 2, phase="Pending").min_res(cpu=9).obj()],
            conf=OVERCOMMIT_ONLY,
            phases={"fits": "Inqueue"},
        ),
        id="overcommit-admits-within-factor",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            podgroups=[
                make_pg("first", 1, phase="Pending").min_res(cpu=6).obj(),
                make_pg("second", 1, phase="Pending").min_res(cpu=6).obj(),
            ],
            phases={"first": "Inqueue"},
            reasons={"second": "NotInqueueable"},
        ),
        id="overcommit-counts-jobs-admitted-this-session",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            podgroups=[make_pg("pg", 1, phase="Pending").queue("shut").obj()],
            queues=[make_queue("shut").state("Closed").obj()],
            reasons={"pg": "NotInqueueable"},
            explains={"pg": ["queue shut is Closed"]},
        ),
        id="closed-queue-admits-nothing",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            podgroups=[make_pg("pg", 2, phase="Pending").obj()],
            conf=WITHOUT_ENQUEUE,
            phases={"pg": "Inqueue"},
        ),
        # The Job controller creates pods only for an Inqueue group: without enqueue, allocate admits it.
        id="without-enqueue-allocate-admits-a-group-before-its-pods-exist",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=pods("w", 2, "pg", cpu=1),
            podgroups=[make_pg("pg", 2, phase="Pending").obj()],
            conf=WITHOUT_ENQUEUE,
            bind_count=2,
            phases={"pg": "Running"},
        ),
        id="without-enqueue-a-pending-group-with-its-pods-is-placed-at-once",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            podgroups=[make_pg("big", 2, phase="Pending").min_res(cpu=20).obj()],
            conf=WITHOUT_ENQUEUE,
            phases={"big": "Inqueue"},
        ),
        # Volcano's allocate asks no enqueueable vote: minResources beyond the cluster still goes Inqueue.
        id="without-enqueue-min-resources-are-not-weighed",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=pods("w", 1, "pg", cpu=1),
            podgroups=[make_pg("pg", 1, phase="Pending").queue("shut").obj()],
            queues=[make_queue("shut").state("Closed").obj()],
            conf=WITHOUT_ENQUEUE,
            bind_count=0,
            phases={"pg": "Inqueue"},
            explains={"pg": ["queue shut is Closed"]},
        ),
        # Nor a queue state: the group is admitted, and the closed queue then allocates nothing.
        id="without-enqueue-a-closed-queue-still-places-nothing",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=pods("w", 2, "pg", cpu=1),
            podgroups=[make_pg("pg", 2, phase="Pending").obj()],
            conf="""
actions: "allocate, enqueue"
tiers:
- plugins: [{name: gang}, {name: predicates}, {name: proportion}]
""",
            bind_count=0,
            phases={"pg": "Inqueue"},
        ),
        # With enqueue configured anywhere, allocate leaves Pending groups to it (here it runs after).
        id="enqueue-after-allocate-still-gates-allocate",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=pods("w", 2, "pg", cpu=1),
            podgroups=[make_pg("pg", 2, phase="Pending").obj()],
            bind_count=2,
            phases={"pg": "Running"},
        ),
        # As in Volcano: enqueue admits it and, its pods existing already, allocate places it in the same
        # session (proportion counts a Pending job's pods in its queue's request).
        id="enqueued-job-with-its-pods-is-placed-in-the-same-session",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=pods("w", 2, "pg", cpu=1),
            podgroups=[make_pg("pg", 3, phase="Pending").obj()],
            bind_count=0,
            phases={"pg": "Inqueue"},
            reasons={"pg": "NotEnoughTasks"},
            explains={"pg": ["valid: 2, min: 3"]},
        ),
        # Admitted, but short of its pods: it says so in the session that admits it, as the next would.
        id="enqueued-job-short-of-pods-says-so-at-once",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=[
                make_pod("old").req(cpu=8).group("old").running("n0").terminating().obj(),
                make_pod("new").req(cpu=4).group("new").obj(),
            ],
            podgroups=[make_pg("old", 1, phase="Running").obj(), make_pg("new").obj()],
            bind_count=0,
            pipelined={"new": "n0"},
        ),
        id="pipelined-onto-releasing-resources",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2, cpu=8),
            pods=[
                make_pod("old").req(cpu=8).group("old").running("n0").terminating().obj(),
                *pods("g", 2, "gang", cpu=6),
            ],
            podgroups=[make_pg("old", 1, phase="Running").obj(), make_pg("gang", 2).obj()],
            bind_count=0,
            pipelined={"g0": "n1", "g1": "n0"},
            reasons={"gang": "NotEnoughResources"},
        ),
        id="gang-half-on-idle-half-on-releasing-waits-whole",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=[
                make_pod("other").req(cpu=6).scheduler("default-scheduler").running("n0").obj(),
                make_pod("mine").req(cpu=4).group("pg").obj(),
            ],
            podgroups=[make_pg("pg").obj()],
            bind_count=0,
            explains={"pg": ["1 node insufficient cpu (need 4, best node has 2 free)"]},
        ),
        id="pods-of-other-schedulers-count",
    ),
    pytest.param(
        Scenario(
            nodes=[
                make_node("plain").obj(),
                make_node("fpga").cap(cpu=8, memory="32Gi", example_com__fpga=2).obj(),
            ],
            pods=[make_pod("p").req(cpu=1, example_com__fpga=1).group("pg").obj()],
            podgroups=[make_pg("pg").obj()],
            binds={"p": "fpga"},
        ),
        id="extended-resource-goes-where-offered",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2),
            pods=[make_pod("p").req(cpu=1, example_com__bar=1).group("pg").obj()],
            podgroups=[make_pg("pg").obj()],
            bind_count=0,
            explains={"pg": ["offers example.com/bar"]},
        ),
        id="extended-resource-nobody-offers",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("n0", pods=1).obj()],
            pods=[
                make_pod("old").req(cpu=1).running("n0").scheduler("default-scheduler").obj(),
                make_pod("p").req(cpu=1).group("pg").obj(),
            ],
            podgroups=[make_pg("pg").obj()],
            bind_count=0,
            explains={"pg": ["1 node at their pod limit"]},
        ),
        id="max-pods-per-node",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("n0", cpu=4, pods=3).obj()],
            pods=[
                make_pod("full").req(cpu=4).group("full").running("n0").obj(),
                make_pod("be").group("be").obj(),
            ],
            podgroups=[make_pg("full", phase="Running").obj(), make_pg("be").obj()],
            binds={"be": "n0"},
        ),
        id="best-effort-backfilled-on-full-node",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2),
            pods=pods("a", 1, "ja", cpu=1) + pods("b", 1, "jb", cpu=1),
            podgroups=[make_pg("ja").obj(), make_pg("jb").obj()],
            binds={"a0": "n0", "b0": "n1"},
        ),
        id="default-conf-spreads",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2),
            pods=pods("a", 1, "ja", cpu=1) + pods("b", 1, "jb", cpu=1),
            podgroups=[make_pg("ja").obj(), make_pg("jb").obj()],
            conf=BINPACK,
            binds={"a0": "n0", "b0": "n0"},
        ),
        id="binpack-packs",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2, gpu=8),
            pods=[
                make_pod("run").req(cpu=1, gpu=6).group("r").running("n1").obj(),
                *pods("g", 1, "pg", cpu=1, gpu=2),
            ],
            podgroups=[make_pg("r", phase="Running").obj(), make_pg("pg").obj()],
            conf=BINPACK,
            binds={"g0": "n1"},
        ),
        id="binpack-fills-the-partly-used-gpu-node",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(2, gpu=8),
            pods=[
                make_pod("run").req(cpu=1, gpu=6).group("r").running("n1").obj(),
                *pods("g", 1, "pg", cpu=1, gpu=2),
            ],
            podgroups=[make_pg("r", phase="Running").obj(), make_pg("pg").obj()],
            binds={"g0": "n0"},
        ),
        id="spread-prefers-the-empty-node",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=4),
            pods=[
                make_pod("r0").req(cpu=2).group("busy").running("n0").obj(),
                *pods("busy-new", 1, "busy", cpu=1),
                *pods("idle", 1, "idle", cpu=1),
            ],
            podgroups=[make_pg("busy", 1, phase="Running").obj(), make_pg("idle").obj()],
            bound=["idle0", "busy-new0"],
        ),
        id="drf-serves-smaller-share-first",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=2),
            pods=[
                make_pod("r0").req(cpu=2).group("busy").running("n0").obj(),
                make_pod("x").req(cpu=1).group("other").obj(),
            ],
            podgroups=[make_pg("busy", 1, phase="Running").obj(), make_pg("other").obj()],
            bind_count=0,
            phases={"busy": "Running"},
        ),
        id="running-job-stays-running",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=pods("w", 2, "pg", cpu=1),
            podgroups=[make_pg("pg", 3).obj()],
            bind_count=0,
            reasons={"pg": "NotEnoughTasks"},
            explains={"pg": ["valid: 2, min: 3"]},
        ),
        id="too-few-pods-for-min-member",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=[make_pod(f"w{i}").req(cpu=1).group("pg", "worker").obj() for i in range(3)],
            podgroups=[make_pg("pg", 3).task_min(ps=1, worker=2).obj()],
            bind_count=0,
            reasons={"pg": "NotEnoughPodsOfTask"},
            explains={"pg": ["task ps lacks 1"]},
        ),
        id="missing-pods-of-a-task-role",
    ),
    pytest.param(
        # Volcano's task-start-dependency shape: minAvailable 1 below the roles' sum (1+5+5), and only the
        # first task's pod exists yet (the controller creates the others once it runs). The per-role check is
        # skipped, as Volcano's CheckTaskValid/Ready/Pipelined do, so the first pod starts.
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=[make_pod("nginx1-0").req(cpu="100m").group("pg", "nginx1").obj()],
            podgroups=[make_pg("pg", 1).task_min(nginx1=1, nginx2=5, nginx3=5).obj()],
            binds={"nginx1-0": "n0"},
            reasons={"pg": "Scheduled"},
        ),
        id="depends-on-chain-starts-its-first-task",
    ),
    pytest.param(
        # The MPI shape: minAvailable 3 below 1+10; the workers exist, the master waits for them.
        Scenario(
            nodes=nodes(2, cpu=8),
            pods=[make_pod(f"w{i}").req(cpu=1).group("pg", "mpiworker").obj() for i in range(10)],
            podgroups=[make_pg("pg", 3).task_min(mpimaster=1, mpiworker=10).obj()],
            bind_count=10,
            reasons={"pg": "Scheduled"},
        ),
        id="mpi-workers-start-before-their-master",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            podgroups=[make_pg("nomin", 4, phase="Pending").obj()],
            phases={"nomin": "Inqueue"},
        ),
        id="podgroup-without-min-resources-is-admitted",
    ),
    pytest.param(
        Scenario(nodes=nodes(1), pods=[make_pod("solo").req(cpu=1).obj()], binds={"solo": "n0"}),
        id="pod-without-podgroup-gets-shadow-job",
    ),
    pytest.param(
        Scenario(nodes=nodes(1), pods=[make_pod("lost").req(cpu=1).group("missing").obj()], bind_count=0),
        id="pod-naming-missing-podgroup-is-skipped",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=[make_pod(f"r{i}").req(cpu=2).group("pg").running("n0").obj() for i in range(2)]
            + pods("extra", 1, "pg", cpu=2),
            podgroups=[make_pg("pg", 2, phase="Running").obj()],
            binds={"extra0": "n0"},
        ),
        id="running-gang-grows-by-elastic-pod",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=[
                make_pod(f"r{i}").req(cpu=2).group("pg").node("n0").phase("Succeeded").obj() for i in range(2)
            ],
            podgroups=[make_pg("pg", 2, phase="Running").obj()],
            phases={"pg": "Completed"},
        ),
        id="all-succeeded-completes",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(1, cpu=8),
            pods=[make_pod(f"r{i}").req(cpu=2).group("pg").running("n0").obj() for i in range(2)]
            + pods("big", 1, "pg", cpu=7),
            podgroups=[make_pg("pg", 3, phase="Running").obj()],
            phases={"pg": "Unknown"},
            reasons={"pg": "NotEnoughResources"},
        ),
        id="running-but-short-gang-is-unknown",
    ),
    pytest.param(
        Scenario(
            nodes=nodes(3, gpu=8),
            pods=pods("a", 4, "pga", cpu=1, gpu=4) + pods("b", 3, "pgb", cpu=1, gpu=8),
            podgroups=[make_pg("pga", 4).obj(), make_pg("pgb", 3).obj()],
            bound=[f"a{i}" for i in range(4)],
            # cpsat (on by default) packs gang a onto two nodes, so one node stays whole: b gets one pod's
            # room and is short two, on nodes with nothing left.
            explains={
                "pgb": [
                    "2/3 tasks unschedulable: "
                    "3 nodes insufficient nvidia.com/gpu (need 8, best node has 0 free)"
                ]
            },
        ),
        id="gpu-gangs-second-explained",
    ),
]


@pytest.mark.parametrize("scenario", CASES)
def test_scenario(scenario: Scenario) -> None:
    check(scenario)
