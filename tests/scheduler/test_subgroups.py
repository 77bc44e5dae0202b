"""Sub-groups (PodGroup ``spec.subGroupPolicy``): gang readiness with ``minSubGroups``, and placement that
never leaves a sub-group below its ``subGroupSize``, under the default conf (cpsat), a greedy conf, and
Volcano's conf with network-topology-aware."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.plugins.gang import GangPlugin

NOW = "2026-01-01T00:00:00Z"
IDX = "leaderworkerset.sigs.k8s.io/group-index"
GREEDY = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}]
"""
TOPOLOGY = GREEDY.replace("{name: binpack}]", "{name: binpack}, {name: network-topology-aware}]")
CONFS = [
    pytest.param(None, id="default-cpsat"),
    pytest.param(GREEDY, id="greedy"),
    pytest.param(TOPOLOGY, id="network-topology-aware"),
]
Obj = dict[str, Any]


def _pods(groups: int, size: int, *, cpu: str = "1", running_on: dict[int, str] | None = None) -> list[Obj]:
    """An LWS-like workload: ``groups`` groups of ``size`` pods, labelled with their group index."""
    out = []
    for g in range(groups):
        for i in range(size):
            pod = make_pod(f"g{g}-{i}").req(cpu=cpu).group("lws").label(IDX, str(g))
            if running_on and g in running_on:
                pod = pod.running(running_on[g])
            out.append(pod.obj())
    return out


def _run(
    pods: list[Obj], pg: Obj, nodes: list[Obj], conf: str | None, hypernodes: list[Obj] | None = None
) -> SessionResult:
    snapshot = Snapshot.build(nodes=nodes, pods=pods, podgroups=[pg], hypernodes=hypernodes or [])
    return run_session(snapshot, load_conf(conf), NOW)


def _bound_groups(result: SessionResult) -> Counter[str]:
    return Counter(bind.name.split("-")[0] for bind in result.binds)


# --- readiness and validity (JobInfo and gang) ------------------------------------------------------------


def _job(pg: Obj, pods: list[Obj]) -> Any:
    snapshot = Snapshot.build(nodes=[make_node("n0", cpu="64").obj()], pods=pods, podgroups=[pg])
    return snapshot.jobs["default/lws"]


@pytest.mark.parametrize(
    ("min_groups", "running", "groups", "ready", "short"),
    [
        pytest.param(2, {0: "n0", 1: "n0"}, 3, True, {}, id="two-running-groups-meet-two"),
        pytest.param(2, {0: "n0"}, 3, False, {0: (1, 2)}, id="one-running-group-of-two"),
        pytest.param(0, {}, 3, False, {}, id="no-min-sub-groups-only-min-member"),
        pytest.param(1, {0: "n0"}, 1, True, {}, id="the-one-group"),
    ],
)
def test_job_ready_counts_ready_sub_groups_per_policy(
    min_groups: int, running: dict[int, str], groups: int, ready: bool, short: dict[int, tuple[int, int]]
) -> None:
    pg = make_pg("lws", 4).sub_group("workers", [IDX], size=4, min_groups=min_groups).obj()
    job = _job(pg, _pods(groups, 4, running_on=running))
    assert job.is_ready() is ready
    assert job.sub_groups_short() == short


def test_a_half_running_sub_group_is_not_ready() -> None:
    pg = make_pg("lws", 1).sub_group("workers", [IDX], size=4, min_groups=1).obj()
    pods = _pods(1, 4)
    for pod in pods[:3]:
        pod["spec"]["nodeName"], pod["status"]["phase"] = "n0", "Running"
    job = _job(pg, pods)
    assert job.ready_task_num == 3 and not job.is_ready()
    assert job.sub_groups_short() == {0: (0, 1)}


@pytest.mark.parametrize(
    ("groups", "min_groups", "valid"),
    [
        pytest.param(2, 3, False, id="two-groups-of-three"),
        pytest.param(3, 3, True, id="three-groups-of-three"),
    ],
)
def test_gang_refuses_a_job_whose_pods_form_too_few_sub_groups(
    groups: int, min_groups: int, valid: bool
) -> None:
    pg = make_pg("lws", 4).sub_group("workers", [IDX], size=4, min_groups=min_groups).obj()
    invalid = GangPlugin(Arguments("gang", {})).job_valid(_job(pg, _pods(groups, 4)))
    if valid:
        assert invalid is None
    else:
        assert invalid is not None
        assert invalid.message == (
            "Not enough valid subGroups for gang-scheduling: spec.subGroupPolicy[0] ('workers') has 2 of "
            "minSubGroups 3"
        )


# --- placement ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("conf", CONFS)
def test_only_whole_groups_bind(conf: str | None) -> None:
    # 3 groups of 4 one-CPU pods on 10 CPUs: a pod-by-pod placement binds 10, leaving group 2 half placed.
    nodes = [make_node(f"n{i}", cpu="5").obj() for i in range(2)]
    pg = make_pg("lws", 4).sub_group("workers", [IDX], size=4).obj()
    result = _run(_pods(3, 4), pg, nodes, conf)
    assert sorted(_bound_groups(result).items()) == [("g0", 4), ("g1", 4)]


@pytest.mark.parametrize("conf", CONFS)
def test_min_sub_groups_binds_nothing_until_enough_groups_fit(conf: str | None) -> None:
    pg = make_pg("lws", 4).sub_group("workers", [IDX], size=4, min_groups=3).obj()
    small = [make_node(f"n{i}", cpu="5").obj() for i in range(2)]  # room for two groups
    waits = _run(_pods(3, 4), pg, small, conf)
    assert not waits.binds
    explanation = waits.explanations["default/lws"].message
    assert "sub-group workers[group-index=2]: 2 of the 4 pods it needs fit, so none is placed" in explanation
    assert explanation.endswith(
        "spec.subGroupPolicy[0] ('workers'): 0/3 sub-groups ready (minSubGroups 3, each needs 4 pods placed "
        "together)"
    ), explanation
    big = [make_node(f"n{i}", cpu="6").obj() for i in range(2)]  # room for three
    runs = _run(_pods(3, 4), pg, big, conf)
    assert sorted(_bound_groups(runs).items()) == [("g0", 4), ("g1", 4), ("g2", 4)]


@pytest.mark.parametrize("conf", CONFS)
def test_running_groups_count_toward_min_sub_groups(conf: str | None) -> None:
    # Group 0 runs; minSubGroups 2 needs one more whole group, and only group 1 fits whole.
    nodes = [make_node("n0", cpu="4").obj(), make_node("n1", cpu="6").obj()]
    pg = make_pg("lws", 4).sub_group("workers", [IDX], size=4, min_groups=2).obj()
    result = _run(_pods(3, 4, running_on={0: "n0"}), pg, nodes, conf)
    assert sorted(_bound_groups(result).items()) == [("g1", 4)]


@pytest.mark.parametrize("conf", CONFS)
def test_pods_beyond_the_size_follow_one_by_one(conf: str | None) -> None:
    # Groups of 6 pods with subGroupSize 4: each group places 4 together, the other 2 as room allows.
    nodes = [make_node("n0", cpu="9").obj()]
    pg = make_pg("lws", 4).sub_group("workers", [IDX], size=4).obj()
    result = _run(_pods(2, 6), pg, nodes, conf)
    counts = _bound_groups(result)
    assert sum(counts.values()) == 9
    assert all(n >= 4 for n in counts.values()), counts


def _racks() -> tuple[list[Obj], list[Obj]]:
    nodes = [make_node(f"n{i}", cpu="3").label("rack", "a" if i < 2 else "b").obj() for i in range(4)]
    hypernodes = [
        {
            "metadata": {"name": f"rack-{r}"},
            "spec": {
                "tier": 1,
                "members": [{"type": "Node", "selector": {"exactMatch": {"name": f"n{i}"}}} for i in members],
            },
        }
        for r, members in (("a", (0, 1)), ("b", (2, 3)))
    ]
    return nodes, hypernodes


@pytest.mark.parametrize("conf", [CONFS[0], CONFS[2]])
def test_hard_sub_group_topology_keeps_each_group_in_one_rack(conf: str | None) -> None:
    # Two racks of 6 CPUs; 3 groups of 4 fit by CPU (12) but only two fit one rack each.
    nodes, hypernodes = _racks()
    pg = (
        make_pg("lws", 4)
        .sub_group("workers", [IDX], size=4, topology={"mode": "hard", "highestTierAllowed": 1})
        .obj()
    )
    result = _run(_pods(3, 4), pg, nodes, conf, hypernodes)
    racks: dict[str, set[str]] = {}
    for bind in result.binds:
        racks.setdefault(bind.name.split("-")[0], set()).add("a" if bind.node in ("n0", "n1") else "b")
    assert len(racks) == 2 and all(len(r) == 1 for r in racks.values()), racks
    assert sum(_bound_groups(result).values()) == 8


def test_hard_sub_group_topology_is_refused_where_pods_go_one_by_one() -> None:
    nodes, hypernodes = _racks()
    pg = (
        make_pg("lws", 4)
        .sub_group("workers", [IDX], size=4, topology={"mode": "hard", "highestTierAllowed": 1})
        .obj()
    )
    result = _run(_pods(2, 4), pg, nodes, GREEDY, hypernodes)
    assert not result.binds
    message = result.explanations["default/lws"].message
    assert "spec.subGroupPolicy[0].networkTopology is hard" in message
    assert "network-topology-aware" in message


@pytest.mark.parametrize("conf", [CONFS[0], CONFS[2]])
@pytest.mark.parametrize(
    ("groups", "bound"),
    [
        pytest.param(2, 6, id="both-groups-in-one-rack"),
        pytest.param(3, 6, id="a-third-group-has-no-room-in-that-rack"),
    ],
)
def test_hard_job_topology_keeps_every_sub_group_in_one_rack(
    conf: str | None, groups: int, bound: int
) -> None:
    # Racks of 6 CPUs, groups of 3 one-CPU pods, the job (minSubGroups 2) inside one rack.
    nodes, hypernodes = _racks()
    pg = make_pg("lws", 6).sub_group("workers", [IDX], size=3, min_groups=2).obj()
    pg["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}
    result = _run(_pods(groups, 3), pg, nodes, conf, hypernodes)
    assert len({"a" if b.node in ("n0", "n1") else "b" for b in result.binds}) == 1, result.binds
    assert sorted(_bound_groups(result).values()) == [3, 3]
    assert len(result.binds) == bound


def test_hard_job_topology_that_no_rack_holds_waits() -> None:
    nodes, hypernodes = _racks()
    pg = make_pg("lws", 8).sub_group("workers", [IDX], size=4, min_groups=2).obj()
    pg["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}
    result = _run(_pods(2, 4), pg, nodes, None, hypernodes)
    assert not result.binds
    message = result.explanations["default/lws"].message
    assert "none of the 2 HyperNodes PodGroup spec.networkTopology (hard) allows holds" in message, message


def test_explanation_names_the_sub_group_that_does_not_fit_whole() -> None:
    nodes = [make_node("n0", cpu="3").obj()]
    pg = make_pg("lws", 4).sub_group("workers", [IDX], size=4).obj()
    result = _run(_pods(1, 4), pg, nodes, GREEDY)
    assert not result.binds
    message = result.explanations["default/lws"].message
    assert "sub-group workers[group-index=0]: 3 of the 4 pods it needs fit, so none is placed" in message
