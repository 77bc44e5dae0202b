"""What a user sees from the solver: where gangs land, when they stay pending, and why."""

from __future__ import annotations

import pytest
from solver_builders import ProblemBuilder, stranded_after, violations

from volcano_py.resources import Resource
from volcano_py.scheduler.solver import (
    Gang,
    PlanSource,
    ProblemError,
    SolverBudget,
    TaskClass,
    greedy,
    solve,
)
from volcano_py.scheduler.solver.hypernode_tree import ROOT

ROOMY = SolverBudget(time_ms=5_000)


def two_racks(free_gpus_r0: tuple[int, int], free_gpus_r1: tuple[int, int]) -> ProblemBuilder:
    b = ProblemBuilder()
    for rack, frees in (("r0", free_gpus_r0), ("r1", free_gpus_r1)):
        for i, free in enumerate(frees):
            b.gpu_nodes(f"{rack}n{i}", 1, 8, used=8 - free)
        b.rack(rack, f"{rack}n0-0", f"{rack}n1-0")
    return b.spine("s0", "r0", "r1")


def test_gang_that_fits_only_one_way_is_found() -> None:
    # Four 3-GPU pods on nodes with 6, 3 and 3 free GPUs: only 2 + 1 + 1 works.
    b = ProblemBuilder().gpu_nodes("six", 1, 8, used=2).gpu_nodes("three", 2, 8, used=5)
    problem = b.gang("train", 4, gpu=3).likely(3).obj()
    plan = solve(problem, ROOMY)
    placement = plan.placed["train"]
    assert sorted((a.node, a.count) for a in placement.assignments) == [
        ("six-0", 2),
        ("three-0", 1),
        ("three-1", 1),
    ]
    assert violations(problem, plan) == []


def test_gang_that_cannot_fit_places_nothing_and_says_by_how_much() -> None:
    problem = ProblemBuilder().gpu_nodes("n", 2, 8, used=3).gang("big", 12).obj()
    plan = solve(problem, ROOMY)
    assert plan.placed == {}
    reason = plan.unplaced["big"].reason
    assert "room for 10 of the 12 pods" in reason
    assert "needs 12 GPUs" in reason and "has 10 free" in reason


def test_hard_topology_stays_inside_one_rack() -> None:
    # 6 GPUs in r0 (4 + 2) and 8 in r1 (5 + 3): a gang of 8 hard at tier 1 must take r1 whole.
    problem = two_racks((4, 2), (5, 3)).gang("ring", 8, hard_tier=1).obj()
    plan = solve(problem, ROOMY)
    placement = plan.placed["ring"]
    assert placement.hypernode == "r1" and placement.tier == 1
    assert {a.node for a in placement.assignments} == {"r1n0-0", "r1n1-0"}
    assert violations(problem, plan) == []


def test_hard_topology_leaves_gang_pending_with_the_best_domain_named() -> None:
    problem = two_racks((8, 4), (8, 2)).gang("ring", 16, hard_tier=1).obj()
    plan = solve(problem, ROOMY)
    assert "ring" not in plan.placed
    reason = plan.unplaced["ring"].reason
    assert "no HyperNode of tier <= 1 has room for 16 pods" in reason
    assert "the best, r0, has room for 12" in reason
    assert "needs 16 GPUs" in reason and "has 12 free" in reason


def test_hard_topology_by_tier_name() -> None:
    b = two_racks((8, 4), (8, 2))
    b.gang("ring", 16)
    gang = b.gangs.pop()
    from volcano_py.scheduler.solver.hypernode_tree import NetworkTopology

    b.gangs.append(
        Gang(gang.name, gang.tasks, gang.min_available, topology=NetworkTopology(highest_tier_name="spine"))
    )
    plan = solve(b.obj(), ROOMY)
    assert plan.placed["ring"].hypernode == "s0" and plan.placed["ring"].tier == 2
    b.gangs[-1] = Gang(
        gang.name, gang.tasks, gang.min_available, topology=NetworkTopology(highest_tier_name="pod")
    )
    plan = solve(b.obj(), ROOMY)
    assert (
        "highestTierName 'pod' matches no HyperNode tierName (known: rack, spine)"
        in plan.unplaced["ring"].reason
    )


def test_soft_topology_prefers_the_lowest_tier_that_fits() -> None:
    # r0 has 8 free GPUs on two nodes; r1 has 12. A soft gang of 10 must cross racks, a gang of 8 must not.
    b = two_racks((4, 4), (8, 4))
    plan = solve(b.gang("eight", 8, soft=True).obj(), ROOMY)
    assert plan.placed["eight"].tier == 1
    b = two_racks((4, 4), (4, 4))
    plan = solve(b.gang("ten", 10, soft=True).obj(), ROOMY)
    assert plan.placed["ten"].hypernode == "s0" and plan.placed["ten"].tier == 2


def test_predicates_limit_the_nodes_used() -> None:
    b = ProblemBuilder().gpu_nodes("a100", 1, 8).gpu_nodes("t4", 2, 8)
    problem = b.gang("infer", 4, feasible=frozenset({"t4"})).obj()
    plan = solve(problem, ROOMY)
    assert {a.node for a in plan.placed["infer"].assignments} <= {"t4-0", "t4-1"}
    b = ProblemBuilder().gpu_nodes("a100", 1, 8).gpu_nodes("t4", 1, 8, used=8)
    plan = solve(b.gang("infer", 1, feasible=frozenset({"t4"})).obj(), ROOMY)
    assert "task 'worker': no node has room for one pod" in plan.unplaced["infer"].reason
    b = ProblemBuilder().gpu_nodes("a100", 1, 8).nodes("cpu", 1, Resource.of(cpu=8))
    plan = solve(b.gang("infer", 1, gpu=0, feasible=frozenset({"cpu"})).obj(), ROOMY)
    assert plan.placed["infer"].assignments[0].node == "cpu-0"


def test_one_millisecond_budget_keeps_the_greedy_answer() -> None:
    b = two_racks((8, 8), (8, 8)).gang("a", 6, hard_tier=1).gang("b", 6, soft=True).gang("c", 4)
    problem = b.likely(1, 2, 8).obj()
    fast = solve(problem, SolverBudget(time_ms=1))
    baseline = greedy(problem)
    assert {p.source for p in fast.placed.values()} == {PlanSource.GREEDY}
    assert fast.placed == baseline.placed
    assert fast.stats.get("models", 0) == 0


def test_greedy_strands_gpus_where_the_solver_does_not() -> None:
    # Likely requests are 4-GPU pods. Binpack sends both 1-GPU pods to the fuller node (4 free -> 2),
    # where no 4-GPU pod fits any more; the solver takes the 6-free node down to 4 instead.
    b = ProblemBuilder().gpu_nodes("six", 1, 8, used=2).gpu_nodes("four", 1, 8, used=4)
    problem = b.gang("pair", 2).likely(4).obj()
    by_greedy = greedy(problem)
    by_solver = solve(problem, ROOMY)
    assert {a.node for a in by_greedy.placed["pair"].assignments} == {"four-0"}
    assert stranded_after(problem, by_greedy) == 2000
    assert {a.node for a in by_solver.placed["pair"].assignments} == {"six-0"}
    assert stranded_after(problem, by_solver) == 0


def test_higher_priority_gang_is_placed_first() -> None:
    b = ProblemBuilder().gpu_nodes("n", 1, 8)
    problem = b.gang("low", 8, priority=1).gang("high", 8, priority=10).obj()
    plan = solve(problem, ROOMY)
    assert set(plan.placed) == {"high"} and set(plan.unplaced) == {"low"}


def test_min_task_member_and_min_available_across_task_classes() -> None:
    ps = TaskClass("ps", Resource.of(cpu=4), count=2, min_member=1)
    worker = TaskClass("worker", Resource.of(cpu=1, gpu=2), count=6, min_member=4)
    b = ProblemBuilder().gpu_nodes("n", 1, 8)
    b.gangs.append(Gang("tf", (ps, worker), min_available=5))
    plan = solve(b.obj(), ROOMY)
    counts: dict[str, int] = {}
    for a in plan.placed["tf"].assignments:
        counts[a.task] = counts.get(a.task, 0) + a.count
    assert counts == {"ps": 2, "worker": 4}  # 8 GPUs cap workers at 4; ps pods fit beside them


def test_single_pod_is_scored_exactly_without_a_model() -> None:
    b = ProblemBuilder().gpu_nodes("five", 1, 8, used=3).gpu_nodes("four", 1, 8, used=4)
    plan = solve(b.gang("one", 1).likely(4).obj(), ROOMY)
    assert plan.placed["one"].source is PlanSource.EXACT
    assert plan.placed["one"].assignments[0].node == "five-0"  # 5 -> 4 usable; 4 -> 3 would strand 3


def test_plan_without_hypernodes_reports_the_cluster() -> None:
    plan = solve(ProblemBuilder().gpu_nodes("n", 2, 8).gang("g", 12).obj(), ROOMY)
    assert plan.placed["g"].hypernode == ROOT


@pytest.mark.parametrize(
    ("build", "message"),
    [
        pytest.param(lambda: TaskClass("w", Resource.of(gpu=1), count=0), "count is 0", id="empty-task"),
        pytest.param(
            lambda: TaskClass("w", Resource.of(gpu=1), count=2, min_member=3),
            "minTaskMember is 3",
            id="min-member",
        ),
        pytest.param(
            lambda: Gang("g", (TaskClass("w", Resource.of(gpu=1), count=2),), min_available=3),
            "minAvailable is 3",
            id="min-available",
        ),
        pytest.param(
            lambda: ProblemBuilder().gpu_nodes("n", 1, 8).gang("g", 1, feasible=frozenset({"x"})).obj(),
            "unknown node class 'x'",
            id="unknown-class",
        ),
    ],
)
def test_bad_input_names_the_field(build: object, message: str) -> None:
    with pytest.raises(ProblemError, match=message):
        build()  # type: ignore[operator]


def test_keeps_whole_the_only_node_a_queued_big_pod_fits() -> None:
    # A 120-core 8-GPU pod is queued; only "big" can ever hold it. Binpack scores "big" fuller after a
    # small pod (less memory) and breaks it; the solver puts the small pod on "mid" instead.
    big = Resource.of(cpu=128, memory="256Gi", gpu=8)
    mid = Resource.of(cpu=96, memory="512Gi", gpu=8)
    b = ProblemBuilder().nodes("big", 1, big).nodes("mid", 1, mid)
    b.gangs.append(Gang("small", (TaskClass("w", Resource.of(cpu=4, memory="64Gi", gpu=1), 1, 1),), 1))
    b.sizes.extend([Resource.of(cpu=120, memory="200Gi", gpu=8), Resource.of(cpu=4, memory="64Gi", gpu=1)])
    problem = b.obj()
    assert greedy(problem).placed["small"].assignments[0].node == "big-0"
    assert solve(problem, ROOMY).placed["small"].assignments[0].node == "mid-0"


def test_a_clean_greedy_answer_is_kept_without_a_model() -> None:
    # Whole 8-GPU nodes for 8-GPU pods: greedy strands and fragments nothing, so no model is built.
    problem = ProblemBuilder().gpu_nodes("n", 4, 8).gang("whole", 2, gpu=8).likely(8).obj()
    plan = solve(problem, ROOMY)
    assert plan.placed["whole"].source is PlanSource.GREEDY
    assert plan.placed == greedy(problem).placed
    assert plan.stats.get("models", 0) == 0 and plan.stats["models_skipped_greedy_clean"] == 1


def test_a_gang_with_topology_still_gets_a_model() -> None:
    problem = two_racks((8, 8), (8, 8)).gang("ring", 4, gpu=8, soft=True).likely(8).obj()
    plan = solve(problem, ROOMY)
    assert plan.stats.get("models_skipped_greedy_clean", 0) == 0 and plan.stats["models"] >= 1
