"""Random problems through an independent checker: no plan breaks a resource, predicate or gang rule."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from solver_builders import hypernode, member, stranded_after, violations

from volcano_py.api.meta import NetworkTopologyMode
from volcano_py.api.topology import MemberType
from volcano_py.resources import Resource
from volcano_py.scheduler.solver import (
    Gang,
    NodeClass,
    PlacementProblem,
    SolverBudget,
    TaskClass,
    greedy,
    solve,
)
from volcano_py.scheduler.solver.hypernode_tree import (
    NetworkTopology,
    build_tree,
)

ROOMY = SolverBudget(time_ms=10_000)


@st.composite
def problems(draw: st.DrawFn, max_gangs: int = 3) -> PlacementProblem:
    classes = []
    node_names: list[str] = []
    for c in range(draw(st.integers(1, 5))):
        gpus = draw(st.sampled_from([0, 2, 4, 8]))
        used = draw(st.integers(0, gpus))
        cpu = draw(st.sampled_from([16, 64]))
        used_cpu = draw(st.integers(0, cpu // 2))
        alloc = Resource.of(cpu=cpu, memory="256Gi", gpu=gpus)
        free = alloc - Resource.of(cpu=used_cpu, gpu=used)
        names = tuple(f"c{c}-n{i}" for i in range(draw(st.integers(1, 4))))
        classes.append(NodeClass(f"c{c}", free, alloc, names))
        node_names.extend(names)
    rack_size = draw(st.integers(1, 4))
    racks = [node_names[i : i + rack_size] for i in range(0, len(node_names), rack_size)]
    specs = [
        hypernode(
            f"rack{i}",
            1,
            tuple(member(MemberType.NODE, exact_name=n) for n in members),
        )
        for i, members in enumerate(racks)
    ]
    specs.append(
        hypernode(
            "spine",
            2,
            tuple(member(MemberType.HYPERNODE, exact_name=f"rack{i}") for i in range(len(racks))),
        )
    )
    tree = build_tree(specs, {n: {} for n in node_names}) if draw(st.booleans()) else None
    class_ids = [c.id for c in classes]
    gangs = []
    for g in range(draw(st.integers(1, max_gangs))):
        tasks = []
        for t in range(draw(st.integers(1, 2))):
            count = draw(st.integers(1, 6))
            request = Resource.of(cpu=draw(st.integers(1, 8)), gpu=draw(st.sampled_from([0, 1, 2, 4])))
            feasible = (
                frozenset(draw(st.lists(st.sampled_from(class_ids), min_size=1, unique=True)))
                if draw(st.booleans())
                else None
            )
            tasks.append(TaskClass(f"t{t}", request, count, draw(st.integers(0, count)), feasible))
        total = sum(t.count for t in tasks)
        floor = max(1, sum(t.min_member for t in tasks))
        topology = None
        if tree is not None:
            topology = draw(
                st.sampled_from(
                    [
                        None,
                        NetworkTopology(NetworkTopologyMode.SOFT),
                        NetworkTopology(NetworkTopologyMode.HARD, highest_tier_allowed=1),
                        NetworkTopology(NetworkTopologyMode.HARD, highest_tier_allowed=2),
                    ]
                )
            )
        gangs.append(
            Gang(f"g{g}", tuple(tasks), draw(st.integers(floor, total)), draw(st.integers(0, 3)), topology)
        )
    sizes = tuple(
        Resource.of(cpu=1, gpu=g) for g in draw(st.lists(st.sampled_from([1, 2, 4, 8]), max_size=3))
    )
    return PlacementProblem(tuple(classes), tuple(gangs), tree, sizes)


PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(problems())
def test_no_plan_violates_resources_predicates_gangs_or_hard_topology(problem: PlacementProblem) -> None:
    for plan in (solve(problem, ROOMY), greedy(problem)):
        assert violations(problem, plan) == []
        assert set(plan.placed) | set(plan.unplaced) == {g.name for g in problem.gangs}
        assert not set(plan.placed) & set(plan.unplaced)
        assert all(u.reason for u in plan.unplaced.values())


@PROPERTY
@given(problems(max_gangs=1))
def test_solver_never_does_worse_than_greedy_on_one_gang(problem: PlacementProblem) -> None:
    by_solver, by_greedy = solve(problem, ROOMY), greedy(problem)
    gang = problem.gangs[0].name
    if gang in by_greedy.placed:
        assert gang in by_solver.placed
        s, g = by_solver.placed[gang], by_greedy.placed[gang]
        assert s.tier <= g.tier
        if s.tier == g.tier and s.pods() == g.pods():
            assert stranded_after(problem, by_solver) <= stranded_after(problem, by_greedy)


@settings(max_examples=30, deadline=None)
@given(problems())
def test_same_problem_same_plan(problem: PlacementProblem) -> None:
    first, second = solve(problem, ROOMY), solve(problem, ROOMY)
    assert first.placed == second.placed and first.unplaced == second.unplaced
