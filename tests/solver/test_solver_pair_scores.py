"""Pair scores (task-topology's wish that some pods share a node and others keep apart) in the solver: they
rank below pods placed and above GPU packing and nodes touched."""

from __future__ import annotations

import pytest
from solver_builders import ProblemBuilder, violations

from volcano_py.resources import Resource
from volcano_py.scheduler.solver import Gang, ProblemError, SolverBudget, TaskClass, solve

ROOMY = SolverBudget(time_ms=5_000)
CPU_NODE = Resource.of(cpu=4, memory="16Gi", pods=110)


def _layout(plan_nodes: dict[str, list[str]]) -> list[list[str]]:
    """Each used node's pods by task, sorted: what shares a node with what."""
    return sorted(sorted(tasks) for tasks in plan_nodes.values())


def _solve(
    builder: ProblemBuilder, tasks: tuple[TaskClass, ...], pairs: tuple[tuple[str, str, int], ...]
) -> list[list[str]]:
    builder.gangs.append(Gang("job", tasks, sum(t.count for t in tasks), pair_scores=pairs))
    problem = builder.obj()
    plan = solve(problem, ROOMY)
    assert violations(problem, plan) == []
    on: dict[str, list[str]] = {}
    for a in plan.placed["job"].assignments:
        on.setdefault(a.node, []).extend([a.task] * a.count)
    return _layout(on)


def _cpu_task(name: str, count: int) -> TaskClass:
    return TaskClass(name, Resource.of(cpu=1), count, count)


@pytest.mark.parametrize(
    ("pairs", "layout"),
    [
        pytest.param((), [["a", "a"]], id="no-wish-packs-one-node"),
        pytest.param((("a", "a", -1),), [["a"], ["a"]], id="self-anti-affinity-spreads"),
        pytest.param((("a", "a", 1),), [["a", "a"]], id="self-affinity-packs"),
    ],
)
def test_pairs_of_one_task(pairs: tuple[tuple[str, str, int], ...], layout: list[list[str]]) -> None:
    builder = ProblemBuilder().nodes("n", 3, CPU_NODE)
    assert _solve(builder, (_cpu_task("a", 2),), pairs) == layout


@pytest.mark.parametrize(
    ("pairs", "layout"),
    [
        pytest.param((), [["ps", "worker"]], id="no-wish-packs-one-node"),
        pytest.param((("ps", "worker", -1),), [["ps"], ["worker"]], id="anti-affine-tasks-apart"),
        pytest.param((("worker", "ps", -1),), [["ps"], ["worker"]], id="either-order-names-one-pair"),
    ],
)
def test_pairs_of_two_tasks(pairs: tuple[tuple[str, str, int], ...], layout: list[list[str]]) -> None:
    builder = ProblemBuilder().nodes("n", 2, CPU_NODE)
    assert _solve(builder, (_cpu_task("ps", 1), _cpu_task("worker", 1)), pairs) == layout


@pytest.mark.parametrize(
    ("pairs", "layout"),
    [
        # Packing alone keeps the 4-GPU node's gap filled and the idle node whole for the next 8-GPU pod.
        pytest.param((), [["ps"], ["worker"]], id="packing-puts-them-apart"),
        pytest.param((("ps", "worker", 1),), [["ps", "worker"]], id="affinity-outranks-packing"),
    ],
)
def test_affinity_outranks_gpu_packing(
    pairs: tuple[tuple[str, str, int], ...], layout: list[list[str]]
) -> None:
    # "gap": 4 of 8 GPUs free and cpu for one pod; "idle": 8 GPUs free. The likely request is 8 GPUs.
    builder = (
        ProblemBuilder()
        .nodes("gap", 1, Resource.of(cpu=1, gpu=4, pods=110), Resource.of(cpu=8, gpu=8, pods=110))
        .nodes("idle", 1, Resource.of(cpu=8, gpu=8, pods=110))
        .likely(8)
    )
    tasks = (TaskClass("ps", Resource.of(cpu=1), 1, 1), TaskClass("worker", Resource.of(cpu=1, gpu=4), 1, 1))
    assert _solve(builder, tasks, pairs) == layout


def test_a_pair_score_naming_an_unknown_task_is_refused() -> None:
    with pytest.raises(ProblemError, match="pair score names unknown task 'chief'"):
        Gang("job", (_cpu_task("ps", 1),), 1, pair_scores=(("ps", "chief", 1),))
