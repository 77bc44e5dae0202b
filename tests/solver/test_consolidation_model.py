"""The move model on its own: fewest pods moved, each moved pod placed on another node, whole units only."""

from __future__ import annotations

import numpy as np
import pytest

from volcano_py.scheduler.solver.consolidation import (
    GangPart,
    MovedGroup,
    MoveProblem,
    MoveProblemError,
    MoveUnit,
    plan_moves,
)

EVERYWHERE = np.ones(3, dtype=np.bool_)


def _vec(gpus: int) -> np.ndarray:
    return np.array([gpus], dtype=np.int64)


def _single(job: str, home: int, gpus: int, cost: int = 1, *, whole: bool = True) -> MoveUnit:
    return MoveUnit(job, whole, (MovedGroup(home, _vec(gpus), 1, EVERYWHERE),), cost)


def _problem(units: tuple[MoveUnit, ...], free: list[int], *, max_moves: int = 8) -> MoveProblem:
    return MoveProblem(
        np.array([[f] for f in free], dtype=np.int64),
        (GangPart(_vec(8), 1, EVERYWHERE),),
        1,
        units,
        max_moves,
    )


CASES = [
    pytest.param(
        (_single("a", 0, 6), _single("b", 1, 4), _single("c", 1, 2)),
        [2, 2, 4],
        (1, 2),
        id="two-small-over-one",
    ),
    pytest.param(
        (_single("a", 0, 2, cost=50), _single("b", 1, 2, cost=5), _single("c", 1, 4)),
        [6, 2, 2],
        (2,),  # 4-GPU c off n1 would not do: n1 still holds b; a off n0 opens n0 (6 + 2)
        id="cheapest-single-move",
    ),
]


@pytest.mark.parametrize(("units", "free", "moved"), CASES)
def test_fewest_moves_each_placed_elsewhere(
    units: tuple[MoveUnit, ...], free: list[int], moved: tuple[int, ...]
) -> None:
    answer = plan_moves(_problem(units, free), time_limit_s=5)
    assert answer.plan is not None and answer.status == "OPTIMAL"
    chosen = answer.plan.units
    assert len(chosen) == len(moved)
    placed = {(u, g) for u, g, _, _ in answer.plan.moved}
    assert placed == {(u, 0) for u in chosen}
    for u, g, node, count in answer.plan.moved:
        assert node != units[u].groups[g].home and count == units[u].groups[g].count


def test_no_plan_when_moved_pods_have_nowhere_to_go() -> None:
    answer = plan_moves(_problem((_single("a", 0, 6),), [2, 0, 0]), time_limit_s=5)
    assert answer.plan is None and answer.status == "INFEASIBLE"


def test_a_whole_unit_and_its_single_ones_are_exclusive_and_max_moves_bounds_the_pods() -> None:
    whole = MoveUnit("j", True, (MovedGroup(0, _vec(2), 3, EVERYWHERE),), 3)
    single = MoveUnit("j", False, (MovedGroup(0, _vec(2), 1, EVERYWHERE),), 1)
    problem = _problem((whole, single), [2, 6, 0], max_moves=3)
    answer = plan_moves(problem, time_limit_s=5)
    assert answer.plan is not None and answer.plan.units == (0,) and answer.plan.moves == 3
    assert plan_moves(_problem((whole, single), [2, 6, 0], max_moves=2), time_limit_s=5).plan is None


def test_a_negative_cost_is_a_caller_error() -> None:
    with pytest.raises(MoveProblemError, match="cost -1 is negative"):
        _problem((_single("a", 0, 2, cost=-1),), [0, 0, 0])
