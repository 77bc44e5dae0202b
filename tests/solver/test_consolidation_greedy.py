"""The greedy baseline planner on its own: empty the emptiest node where the gang's pod fits, until it fits.

Nodes of 8 GPUs (one resource column); the waiting gang is one or two 8-GPU pods unless a case says
otherwise. ``in_use`` is what each node runs, so the emptiest node is the one with the fewest GPUs in use.
"""

from __future__ import annotations

import numpy as np
import pytest

from volcano_py.scheduler.solver.consolidation import GangPart, MovedGroup, MoveProblem, MoveUnit, place_gang
from volcano_py.scheduler.solver.consolidation_greedy import emptying, plan_greedy


def _vec(gpus: int) -> np.ndarray:
    return np.array([gpus], dtype=np.int64)


def _ok(nodes: int, only: tuple[int, ...] | None = None) -> np.ndarray:
    ok = np.ones(nodes, dtype=np.bool_) if only is None else np.zeros(nodes, dtype=np.bool_)
    if only is not None:
        ok[list(only)] = True
    return ok


def unit(job: str, homes: tuple[int, ...], gpus: int, *, whole: bool = True, cost: int = 1) -> MoveUnit:
    """One unit of ``job``: a pod of ``gpus`` on each node in ``homes`` (repeats: several pods there)."""
    counts: dict[int, int] = {}
    for home in homes:
        counts[home] = counts.get(home, 0) + 1
    groups = tuple(MovedGroup(home, _vec(gpus), n, _ok(4)) for home, n in counts.items())
    return MoveUnit(job, whole, groups, cost)


def problem(
    units: tuple[MoveUnit, ...],
    free: list[int],
    *,
    pods: int = 1,
    gang_gpus: int = 8,
    max_moves: int = 8,
    gang_on: tuple[int, ...] | None = None,
) -> MoveProblem:
    return MoveProblem(
        np.array([[f] for f in free], dtype=np.int64),
        (GangPart(_vec(gang_gpus), pods, _ok(len(free), gang_on)),),
        pods,
        units,
        max_moves,
    )


def in_use(free: list[int]) -> np.ndarray:
    return np.array([8 - f for f in free], dtype=np.int64)


CASES = [
    pytest.param(
        # n0 runs 6 GPUs in one pod, n1 4 in two pods, n2 6 in three: n1 is the emptiest.
        (
            unit("a", (0,), 6),
            unit("b", (1,), 2),
            unit("c", (1,), 2),
            unit("d", (2,), 2),
            unit("e", (2,), 2),
            unit("f", (2,), 2),
        ),
        [2, 4, 2, 8 - 0],
        dict(gang_on=(0, 1, 2)),
        (1, 2),
        [(0, 1, 1)],
        id="emptiest-node-emptied",
    ),
    pytest.param(
        # The emptiest node, n0 (4 GPUs in use), runs a movable 2-GPU pod beside an immovable one: emptied
        # it frees 6, too few, so n1 (6 in use) is emptied instead.
        (unit("x", (0,), 2), unit("b", (1,), 2), unit("c", (1,), 2), unit("c2", (1,), 2)),
        [4, 2, 0, 0],
        dict(gang_on=(0, 1, 2)),
        (1, 2, 3),
        [(0, 1, 1)],
        id="a-node-that-cannot-hold-the-pod-once-emptied-is-passed",
    ),
    pytest.param(
        # Two 8-GPU pods: n1 (4 in use) then n2 (6 in use) are emptied; n0 (8 in use) is the fullest.
        (unit("a", (0,), 8), unit("b", (1,), 4), unit("c", (2,), 2), unit("d", (2,), 4)),
        [0, 4, 2, 0],
        dict(pods=2, gang_on=(0, 1, 2)),
        (1, 2, 3),
        [(0, 1, 1), (0, 2, 1)],
        id="nodes-emptied-until-the-gang-fits",
    ),
    pytest.param(
        # Job j runs one pod above its minimum on n1 and one on n2: its single unit on n1 is enough.
        (unit("j", (1, 2), 4), unit("j", (1,), 4, whole=False), unit("k", (1,), 4)),
        [8, 0, 4, 8],
        dict(gang_on=(1,)),
        (1, 2),
        [(0, 1, 1)],
        id="the-single-units-of-an-elastic-job-when-they-cover-the-node",
    ),
    pytest.param(
        # Gang job j (no pod to spare) has two pods on n1 and one on n2: all three go, freeing n2 too.
        (unit("j", (1, 1, 2), 2), unit("k", (1,), 4)),
        [8, 0, 4, 8],
        dict(gang_on=(1,)),
        (0, 1),
        [(0, 1, 1)],
        id="a-gang-goes-whole-never-in-part",
    ),
]


@pytest.mark.parametrize(("units", "free", "shape", "chosen", "gang"), CASES)
def test_greedy_empties_the_emptiest_nodes_until_the_gang_fits(
    units: tuple[MoveUnit, ...],
    free: list[int],
    shape: dict[str, object],
    chosen: tuple[int, ...],
    gang: list[tuple[int, int, int]],
) -> None:
    answer = plan_greedy(problem(units, free, **shape), in_use(free))  # type: ignore[arg-type]
    assert answer.status == "FEASIBLE" and answer.plan is not None
    assert answer.plan.units == chosen
    assert list(answer.plan.gang) == gang
    assert answer.plan.moved == ()  # no new place is planned for the moved pods
    assert answer.plan.moves == sum(units[u].pods for u in chosen)
    assert answer.plan.cost == sum(units[u].cost for u in chosen)


NO_PLAN = [
    # n1 runs a movable 4-GPU pod beside an immovable one: emptied it frees 4 of the 8 asked.
    pytest.param((unit("a", (1,), 4),), [2, 0, 0, 0], dict(), id="immovable-pods-keep-the-room-short"),
    pytest.param(
        (unit("b", (1,), 2), unit("c", (1,), 2), unit("d", (1,), 2)),
        [8, 2, 0, 0],
        dict(pods=2, max_moves=2),
        id="more-moves-than-maxMoves",
    ),
    pytest.param((unit("a", (0,), 8),), [0, 8, 0, 0], dict(gang_gpus=16), id="the-pod-fits-no-node"),
]


@pytest.mark.parametrize(("units", "free", "shape"), NO_PLAN)
def test_no_plan(units: tuple[MoveUnit, ...], free: list[int], shape: dict[str, object]) -> None:
    answer = plan_greedy(problem(units, free, **shape), in_use(free))  # type: ignore[arg-type]
    assert answer.plan is None and answer.status == "INFEASIBLE"


def test_a_whole_unit_replaces_the_single_ones_chosen_before() -> None:
    # j runs one pod to spare: its single unit on n0 went when n0 was emptied; emptying n1, where two of its
    # pods run, takes the whole job instead, never a pod twice.
    units = (unit("j", (0, 1, 1), 2), unit("j", (0,), 2, whole=False))
    p = problem(units, [6, 4, 8, 8])
    assert emptying(p, 0, set()) == {1}
    assert emptying(p, 1, {1}) == {0}


PLACES = [
    pytest.param([8, 8], 2, [(0, 0, 1), (0, 1, 1)], id="one-per-node"),
    pytest.param([16, 0], 2, [(0, 0, 2)], id="two-on-one-node"),
    pytest.param([7, 8], 2, None, id="short-of-one"),
]


@pytest.mark.parametrize(("free", "need", "placed"), PLACES)
def test_place_gang_puts_whole_pods_in_node_order(
    free: list[int], need: int, placed: list[tuple[int, int, int]] | None
) -> None:
    gang = (GangPart(_vec(8), 2, np.ones(2, dtype=np.bool_)),)
    answer = place_gang(np.array([[f] for f in free], dtype=np.int64), gang, need)
    assert (list(answer) if answer is not None else None) == placed
