"""numa-aware: CPU-pinned pods go where their NUMA policy can be met, and a refusal says why."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api import constants as k
from volcano_py.scheduler.plugins.numatopo import Hint, best_hint, node_numa, place

from .builders import make_node, make_pg, make_pod
from .harness import Scenario, check

CONF = (
    'actions: "allocate"\ntiers:\n- plugins: [{name: gang}, {name: predicates}, '
    "{name: numa-aware, arguments: {weight: 1}}]"
)


def topo(
    node: str,
    cells: int = 2,
    per_cell: int = 4,
    *,
    policy: str = "single-numa-node",
    cpu_manager: str = "static",
    allocatable: str | None = None,
) -> dict[str, Any]:
    cpus = cells * per_cell
    return {
        "apiVersion": k.NODEINFO_API_VERSION,
        "kind": k.NUMATOPOLOGY_KIND,
        "metadata": {"name": node},
        "spec": {
            "policies": {k.CPU_MANAGER_POLICY: cpu_manager, k.TOPOLOGY_MANAGER_POLICY: policy},
            "numares": {"cpu": {"allocatable": allocatable or f"0-{cpus - 1}", "capacity": cpus}},
            "cpuDetail": {
                str(c): {"numa": c // per_cell, "socket": c // per_cell, "core": c} for c in range(cpus)
            },
        },
    }


def pinned(name: str, cpus: int, policy: str = "single-numa-node") -> Any:
    pod = make_pod(name).group(name).annotate(k.NUMA_POLICY_KEY, policy)
    pod.req(cpu=cpus, memory="1Gi").limits(cpu=str(cpus), memory="1Gi")
    return pod


def test_single_numa_node_refuses_a_node_whose_cells_cannot_hold_the_pod_and_says_why() -> None:
    # small: 2 cells x 4 CPUs (8 CPUs in total, enough by the node's numbers); big: 2 cells x 8 CPUs.
    check(
        Scenario(
            nodes=[make_node("small", cpu="8").obj(), make_node("big", cpu="16").obj()],
            numatopologies=[topo("small", per_cell=4), topo("big", per_cell=8)],
            pods=[pinned("p", 6).obj()],
            podgroups=[make_pg("p").obj()],
            conf=CONF,
            binds={"p": "big"},
        )
    )
    check(
        Scenario(
            nodes=[make_node("small", cpu="8").obj()],
            numatopologies=[topo("small", per_cell=4)],
            pods=[pinned("p", 6).obj()],
            podgroups=[make_pg("p").obj()],
            conf=CONF,
            bind_count=0,
            explains={
                "p": [
                    "1 node have no NUMA node with 6 free CPUs for container main "
                    "(policy single-numa-node; the freest NUMA node has 4)"
                ]
            },
        )
    )


def test_cpus_taken_in_the_session_count_for_the_next_pod() -> None:
    # One node, 2 cells x 4: two 3-CPU pods take one cell each; a third has no cell with 3 free.
    check(
        Scenario(
            nodes=[make_node("n", cpu="8").obj()],
            numatopologies=[topo("n")],
            pods=[pinned(f"p{i}", 3).obj() for i in range(3)],
            podgroups=[make_pg(f"p{i}").obj() for i in range(3)],
            conf=CONF,
            bound=["p0", "p1"],
            explains={"p2": ["have no NUMA node with 3 free CPUs"]},
        )
    )


@pytest.mark.parametrize(
    ("node_topo", "reason"),
    [
        pytest.param(None, "have no Numatopology (nodeinfo.volcano.sh)", id="no-numatopology"),
        pytest.param(
            topo("n", cpu_manager="none"), "run CPU manager policy 'none', not static", id="not-static"
        ),
        pytest.param(
            topo("n", policy="best-effort"),
            "run topology manager policy 'best-effort', not the pod's 'single-numa-node'",
            id="other-policy",
        ),
    ],
)
def test_node_refusals_are_explained(node_topo: dict[str, Any] | None, reason: str) -> None:
    check(
        Scenario(
            nodes=[make_node("n").obj()],
            numatopologies=[node_topo] if node_topo else [],
            pods=[pinned("p", 2).obj()],
            podgroups=[make_pg("p").obj()],
            conf=CONF,
            bind_count=0,
            explains={"p": [reason]},
        )
    )


def test_pods_without_policy_or_not_guaranteed_are_not_checked() -> None:
    burstable = make_pod("b").group("b").annotate(k.NUMA_POLICY_KEY, "single-numa-node").req(cpu=6)
    check(
        Scenario(
            nodes=[make_node("n", cpu="16").obj()],
            numatopologies=[topo("n", per_cell=4)],
            pods=[burstable.obj(), make_pod("plain").group("plain").req(cpu=6).obj()],
            podgroups=[make_pg("b").obj(), make_pg("plain").obj()],
            conf=CONF,
            bound=["b", "plain"],
        )
    )


def test_score_prefers_the_node_where_the_pod_spans_fewer_numa_nodes() -> None:
    # restricted on both: "split" has 3 free CPUs per cell (6 CPUs span two cells); "whole" has a free cell.
    check(
        Scenario(
            nodes=[make_node("split", cpu="16").obj(), make_node("whole", cpu="16").obj()],
            numatopologies=[
                topo("split", per_cell=8, policy="best-effort", allocatable="0-2,8-10"),
                topo("whole", per_cell=8, policy="best-effort"),
            ],
            pods=[pinned("p", 6, policy="best-effort").obj()],
            podgroups=[make_pg("p").obj()],
            conf=CONF,
            binds={"p": "whole"},
        )
    )


# --- the hint math ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("free", "capacity", "cpus", "expected"),
    [
        pytest.param({0: 4, 1: 4}, {0: 4, 1: 4}, 3, Hint((0,), True), id="one-cell"),
        pytest.param({0: 2, 1: 4}, {0: 4, 1: 4}, 3, Hint((1,), True), id="second-cell"),
        pytest.param({0: 2, 1: 2}, {0: 4, 1: 4}, 3, Hint((0, 1), False), id="split-not-preferred"),
        pytest.param({0: 4, 1: 4}, {0: 4, 1: 4}, 6, Hint((0, 1), True), id="needs-two-preferred"),
        pytest.param({0: 1, 1: 1}, {0: 4, 1: 4}, 3, None, id="nothing-free"),
    ],
)
def test_best_hint(free: dict[int, int], capacity: dict[int, int], cpus: int, expected: Hint | None) -> None:
    assert best_hint(free, capacity, cpus) == expected


@pytest.mark.parametrize(
    ("policy", "cpus", "admitted"),
    [
        ("single-numa-node", 4, True),
        ("single-numa-node", 5, False),
        ("restricted", 5, True),
        ("restricted", 9, False),
        ("best-effort", 9, True),
    ],
)
def test_place_by_policy(policy: str, cpus: int, admitted: bool) -> None:
    numa = node_numa(topo("n", cells=2, per_cell=4, policy=policy))
    assert numa is not None
    outcome = place(numa, policy, [("c", cpus)])
    assert hasattr(outcome, "cpus") is admitted
