"""Volcano's HyperNode placement under ``network-topology-aware``, one session per case, on the cluster of
Volcano's hypernode e2e suite (test/e2e/hypernode/network_topology_test.go): 8 nodes of 8 cpu / 8Gi, each
running a 100m / 50Mi DaemonSet pod (kind's CNI), in three tiers of HyperNodes:

                    s6
           s4               s5
       s0      s1       s2       s3
     n0  n1  n2  n3   n4  n5   n6  n7
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.snapshot import Snapshot

from .builders import make_node, make_pg, make_pod

NOW = "2026-01-01T00:00:00Z"
# Volcano's CI scheduler conf (installer/helm/chart/volcano/config/volcano-scheduler-ci.conf).
VOLCANO_CI = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}, {name: sla}]
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
%s
"""
TIERS = {
    "s0": (1, ["n0", "n1"]),
    "s1": (1, ["n2", "n3"]),
    "s2": (1, ["n4", "n5"]),
    "s3": (1, ["n6", "n7"]),
    "s4": (2, ["s0", "s1"]),
    "s5": (2, ["s2", "s3"]),
    "s6": (3, ["s4", "s5"]),
}


def _hypernodes() -> list[dict[str, Any]]:
    return [
        {
            "metadata": {"name": name},
            "spec": {
                "tier": tier,
                "members": [
                    {"type": "Node" if tier == 1 else "HyperNode", "selector": {"exactMatch": {"name": m}}}
                    for m in members
                ],
            },
        }
        for name, (tier, members) in TIERS.items()
    ]


def _cpu_mem(cpu: int) -> dict[str, str]:
    return {"cpu": str(cpu), "memory": f"{cpu}Gi"}


def _session(
    busy: list[tuple[str, int]],
    job: dict[str, Any] | None,
    *,
    size: int,
    cpu: int,
    running: list[str] = (),  # type: ignore[assignment]
    arguments: str = "",
) -> SessionResult:
    """``busy``: (node, cpu and Gi) pods of another scheduler; ``job``: the PodGroup's networkTopology;
    ``size`` pods of ``cpu``, the first ones already running on the nodes of ``running``."""
    nodes = [make_node(f"n{i}", cpu="8", memory="8Gi").obj() for i in range(8)]
    pods = [
        make_pod(f"kindnet-{i}").req(cpu="100m", memory="50Mi").running(f"n{i}").scheduler("other").obj()
        for i in range(8)
    ]
    pods += [
        make_pod(f"busy-{i}").req(**_cpu_mem(c)).running(node).scheduler("other").obj()
        for i, (node, c) in enumerate(busy)
    ]
    pg = make_pg("job", size).obj()
    if job is not None:
        pg["spec"]["networkTopology"] = job
    for i in range(size):
        pod = make_pod(f"job-{i}").req(**_cpu_mem(cpu)).group("job")
        if i < len(running):
            pod = pod.running(running[i])
        pods.append(pod.obj())
    snapshot = Snapshot.build(nodes=nodes, pods=pods, podgroups=[pg], hypernodes=_hypernodes())
    return run_session(snapshot, load_conf(VOLCANO_CI % arguments), NOW)


HARD_1 = {"mode": "hard", "highestTierAllowed": 1}
HARD_2 = {"mode": "hard", "highestTierAllowed": 2}
SOFT = {"mode": "soft"}


@pytest.mark.parametrize(
    ("busy", "topology", "cpu", "running", "nodes"),
    [
        pytest.param(
            [("n2", 1), ("n3", 1)], HARD_1, 2, [], {"n2", "n3"}, id="1.1-the-loaded-s1-not-an-empty-one"
        ),
        pytest.param(
            [("n2", 4), ("n3", 4), ("n4", 1)],
            HARD_1,
            4,
            [],
            {"n4", "n5"},
            id="1.2-s1-too-full-s2-fuller-than-s0",
        ),
        pytest.param(
            [("n0", 4), ("n2", 4), ("n4", 4), ("n6", 4), ("n5", 1)],
            HARD_2,
            2,
            [],
            {"n5"},
            id="2.1-s2-scores-best-in-tier-1",
        ),
        pytest.param([("n0", 1)], HARD_1, 2, [], {"n0", "n1"}, id="2.3-s0-holds-the-busy-pod"),
        pytest.param([], HARD_1, 2, ["n1"], {"n0", "n1"}, id="2.3-a-killed-pod-comes-back-to-s0"),
        pytest.param(
            [("n0", 6), ("n2", 6), ("n4", 6), ("n6", 6), ("n1", 4), ("n3", 4), ("n5", 5), ("n7", 4)],
            SOFT,
            2,
            [],
            {"n5", "n7"},
            id="3.1-soft-no-tier-1-fits-s5-fuller-than-s4",
        ),
    ],
)
def test_volcano_e2e_hypernode_choice(
    busy: list[tuple[str, int]], topology: dict[str, Any], cpu: int, running: list[str], nodes: set[str]
) -> None:
    result = _session(busy, topology, size=2, cpu=cpu, running=running)
    placed = {b.name: b.node for b in result.binds}
    assert len(placed) == 2 - len(running), placed
    assert set(placed.values()) <= nodes, placed


def test_a_hard_gang_that_fits_no_allowed_hypernode_waits_and_says_so() -> None:
    # 2.2: tier 1 and tier 2 are too full for two 2-cpu pods; only s6 (tier 3) would hold them.
    busy = [("n0", 4), ("n1", 4), ("n2", 4), ("n4", 4), ("n5", 6), ("n6", 6), ("n3", 6), ("n7", 6)]
    result = _session(busy, HARD_2, size=2, cpu=4)
    assert not result.binds
    assert "no HyperNode up to tier 2 holds the gang" in result.explanations["default/job"].message


@pytest.mark.parametrize(
    ("arguments", "nodes"),
    [
        pytest.param("", {"n0", "n1"}, id="cpu-and-memory-by-default"),
        # Weighted by GPUs alone, s1 (its GPUs already half taken) is the fullest after the gang.
        pytest.param(
            "    arguments: {hypernode.binpack.cpu: 0, hypernode.binpack.memory: 0, "
            "hypernode.binpack.resources: nvidia.com/gpu}",
            {"n2", "n3"},
            id="gpu-only-weights",
        ),
    ],
)
def test_binpack_weights_choose_the_hypernode(arguments: str, nodes: set[str]) -> None:
    node_objs = [make_node(f"n{i}", cpu="8", memory="8Gi", gpu=4).obj() for i in range(4)]
    busy = [
        make_pod("cpu-heavy").req(cpu="6", memory="6Gi").running("n0").scheduler("other").obj(),
        make_pod("gpu-heavy").req(cpu="1", memory="1Gi", gpu=2).running("n2").scheduler("other").obj(),
    ]
    hypernodes = [
        {
            "metadata": {"name": name},
            "spec": {
                "tier": 1,
                "members": [{"type": "Node", "selector": {"exactMatch": {"name": m}}} for m in ms],
            },
        }
        for name, ms in (("s0", ["n0", "n1"]), ("s1", ["n2", "n3"]))
    ]
    pg = make_pg("job", 2).obj()
    pg["spec"]["networkTopology"] = HARD_1
    pods = [make_pod(f"job-{i}").req(cpu="1", memory="1Gi", gpu=1).group("job").obj() for i in range(2)]
    snapshot = Snapshot.build(nodes=node_objs, pods=[*busy, *pods], podgroups=[pg], hypernodes=hypernodes)
    result = run_session(snapshot, load_conf(VOLCANO_CI % arguments), NOW)
    assert {b.node for b in result.binds} <= nodes and len(result.binds) == 2, result.binds


@pytest.mark.parametrize(
    ("arguments", "node"),
    [
        pytest.param("", "n2", id="enabled-the-fuller-hypernode"),
        pytest.param(
            "    arguments: {hypernode.binpack.normal-pod.enable: false}", "n0", id="disabled-a-tie"
        ),
    ],
)
def test_a_pod_without_topology_goes_to_the_fuller_hypernode(arguments: str, node: str) -> None:
    # n0 and n2 are alike and the only nodes the pod may use; s1 (n2's) already runs more than s0 (n0's).
    nodes = [make_node(f"n{i}", cpu="8", memory="8Gi").obj() for i in range(4)]
    for i in (0, 2):
        nodes[i]["metadata"]["labels"]["pick"] = "yes"
    busy = [
        make_pod("b1").req(cpu="2", memory="2Gi").running("n1").scheduler("other").obj(),
        make_pod("b3").req(cpu="4", memory="4Gi").running("n3").scheduler("other").obj(),
    ]
    hypernodes = [
        {
            "metadata": {"name": name},
            "spec": {
                "tier": 1,
                "members": [{"type": "Node", "selector": {"exactMatch": {"name": m}}} for m in ms],
            },
        }
        for name, ms in (("s0", ["n0", "n1"]), ("s1", ["n2", "n3"]))
    ]
    pod = make_pod("p").req(cpu="1", memory="1Gi").selector(pick="yes").obj()
    snapshot = Snapshot.build(nodes=nodes, pods=[*busy, pod], hypernodes=hypernodes)
    result = run_session(snapshot, load_conf(VOLCANO_CI % arguments), NOW)
    assert [(b.name, b.node) for b in result.binds] == [("p", node)]


def _partitioned(
    busy: list[tuple[str, int]],
    job: dict[str, Any] | None,
    partition: dict[str, Any] | None,
    *,
    size: int,
    cpu: int,
    partition_size: int = 2,
    min_member: int | None = None,
    running: Sequence[str] = (),
) -> SessionResult:
    """A Job's task ``t`` of ``size`` pods in partitions of ``partition_size`` as the Job controller writes
    them: pods labelled with their partition id, the PodGroup's subGroupPolicy selecting them."""
    nodes = [make_node(f"n{i}", cpu="8", memory="8Gi").obj() for i in range(8)]
    pods = [
        make_pod(f"kindnet-{i}").req(cpu="100m", memory="50Mi").running(f"n{i}").scheduler("other").obj()
        for i in range(8)
    ]
    pods += [
        make_pod(f"busy-{i}").req(**_cpu_mem(c)).running(node).scheduler("other").obj()
        for i, (node, c) in enumerate(busy)
    ]
    pg = make_pg("job", size if min_member is None else min_member).obj()
    if job is not None:
        pg["spec"]["networkTopology"] = job
    policy: dict[str, Any] = {
        "name": "t",
        "subGroupSize": partition_size,
        "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "t"}},
        "matchLabelKeys": ["volcano.sh/partition-id"],
    }
    if partition is not None:
        policy["networkTopology"] = partition
    pg["spec"]["subGroupPolicy"] = [policy]
    for i in range(size):
        pod = make_pod(f"job-{i}").req(**_cpu_mem(cpu)).group("job")
        if i < len(running):
            pod = pod.running(running[i])
        pods.append(
            pod.label("volcano.sh/task-spec", "t")
            .label("volcano.sh/partition-id", str(i // partition_size))
            .obj()
        )
    snapshot = Snapshot.build(nodes=nodes, pods=pods, podgroups=[pg], hypernodes=_hypernodes())
    return run_session(snapshot, load_conf(VOLCANO_CI % ""), NOW)


def _per_hypernode(result: SessionResult) -> dict[str, int]:
    leaf = {m: name for name, (tier, members) in TIERS.items() if tier == 1 for m in members}
    counts: dict[str, int] = {}
    for bind in result.binds:
        counts[leaf[bind.node]] = counts.get(leaf[bind.node], 0) + 1
    return counts


@pytest.mark.parametrize(
    ("busy", "job", "partition", "cpu", "size", "min_member", "split"),
    [
        pytest.param([("n2", 1), ("n3", 1)], HARD_1, HARD_1, 2, 4, None, {"s1": 4}, id="4.1"),
        pytest.param([("n2", 1), ("n3", 1)], HARD_2, HARD_1, 2, 4, None, {"s1": 4}, id="5.1"),
        pytest.param(
            [("n0", 3), ("n2", 3), ("n4", 6), ("n5", 6), ("n6", 6), ("n7", 6)],
            HARD_2,
            HARD_1,
            3,
            4,
            None,
            {"s0": 2, "s1": 2},
            id="5.2-one-partition-per-rack",
        ),
        pytest.param(
            [("n0", 6), ("n1", 6), ("n2", 1), ("n3", 1)], HARD_2, HARD_1, 2, 4, None, {"s1": 4}, id="5.4"
        ),
        pytest.param([("n2", 1), ("n3", 1)], HARD_2, SOFT, 2, 4, None, {"s1": 4}, id="6.1"),
        pytest.param(
            [("n0", 3), ("n1", 3), ("n2", 3), ("n3", 5), ("n4", 2), ("n6", 2)],
            HARD_2,
            SOFT,
            4,
            4,
            None,
            {"s2": 2, "s3": 2},
            id="6.2-into-s5",
        ),
        pytest.param(
            [("n0", 4), ("n4", 4), ("n2", 6), ("n3", 6), ("n6", 6), ("n7", 6)],
            SOFT,
            HARD_1,
            3,
            4,
            None,
            {"s0": 2, "s2": 2},
            id="7.1",
        ),
        pytest.param(
            [("n0", 4), ("n4", 4), ("n2", 6), ("n3", 6), ("n6", 6), ("n7", 6)],
            None,
            HARD_1,
            3,
            4,
            None,
            {"s0": 2, "s2": 2},
            id="8.1-partitions-without-a-job-topology",
        ),
        pytest.param([("n2", 1), ("n3", 1)], HARD_1, HARD_1, 3, 4, 4, {"s1": 4}, id="9.1"),
        pytest.param([("n2", 1), ("n3", 1)], HARD_2, HARD_1, 3, 8, 4, {"s0": 4, "s1": 4}, id="9.2"),
    ],
)
def test_volcano_e2e_partitions(
    busy: list[tuple[str, int]],
    job: dict[str, Any] | None,
    partition: dict[str, Any],
    cpu: int,
    size: int,
    min_member: int | None,
    split: dict[str, int],
) -> None:
    result = _partitioned(busy, job, partition, size=size, cpu=cpu, min_member=min_member)
    assert _per_hypernode(result) == split


@pytest.mark.parametrize(
    ("busy", "job", "partition", "cpu", "size"),
    [
        pytest.param([(f"n{i}", 6) for i in range(8)], HARD_1, HARD_1, 4, 2, id="4.2-no-room"),
        # 4.3: every rack has room for one 4-cpu pod, but the job must stay in one rack.
        pytest.param(
            [(f"n{i}", 6 if i % 2 == 0 else 2) for i in range(8)], HARD_1, HARD_1, 4, 2, id="4.3-one-per-rack"
        ),
    ],
)
def test_volcano_e2e_partitions_that_wait(
    busy: list[tuple[str, int]], job: dict[str, Any] | None, partition: dict[str, Any], cpu: int, size: int
) -> None:
    result = _partitioned(busy, job, partition, size=size, cpu=cpu, partition_size=1)
    assert not result.binds


@pytest.mark.parametrize(
    ("running", "nodes"),
    [
        pytest.param((), {"n6", "n7"}, id="5.3-s3-the-loaded-rack"),
        # A killed pod of partition 1 comes back to s3, where its partition and its job run.
        pytest.param(("n6", "n7", "n6"), {"n6", "n7"}, id="5.3-a-killed-pod-comes-back"),
    ],
)
def test_a_partitioned_job_stays_where_it_runs(running: tuple[str, ...], nodes: set[str]) -> None:
    result = _partitioned([("n6", 1), ("n7", 1)], HARD_2, HARD_1, size=4, cpu=2, running=running)
    assert len(result.binds) == 4 - len(running) and {b.node for b in result.binds} <= nodes, result.binds
