"""The CP-SAT model behind ``consolidate``: the fewest moves of running pods that open a place for a gang.

A move evicts a running pod and puts it on another node at once, so the model places the waiting gang and
every moved pod together. Its inputs are plain arrays over a candidate set of nodes (the caller picks them
and answers every predicate beforehand), independent of the scheduler's session:

* ``m[u]`` (Boolean): unit ``u`` moves. A unit is what a gang survives losing: one pod of a job running
  above its ``minAvailable``, or every pod the job holds. A job's whole unit excludes its single ones.
* ``z[g, n]`` (integer): pods of group ``g`` (identical pods of one unit on one node) re-placed on node ``n``;
  they sum to the group's size when the unit moves and to 0 when it does not, and never to the pods' own
  node (a move goes elsewhere).
* ``x[c, n]`` (integer): pods of the gang's class ``c`` put on node ``n``; together at least ``need``.

Per node and resource: what the gang and the moved pods put there fits in what is free plus what the moves
away from it free. The objective is lexicographic, folded into one sum: fewest pods moved, then the fewest
GPU-minutes given up (a unit's ``cost``). ``max_moves`` bounds the pods moved.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
# A fit count for a pod that asks nothing of a node's resources: no bound, without overflow.
UNBOUNDED = 1 << 40


class MoveProblemError(ValueError):
    """A move problem that cannot be solved as written (a programming error in the caller)."""


@dataclass(frozen=True, slots=True)
class GangPart:
    """``count`` identical pods of the waiting gang, each asking ``vec``, allowed on the nodes in ``ok``."""

    vec: IntArray
    count: int
    ok: BoolArray


@dataclass(frozen=True, slots=True)
class MovedGroup:
    """``count`` identical pods of one unit on node ``home`` (-1: a node outside the problem), each asking
    ``vec``, re-placeable on the nodes in ``ok``."""

    home: int
    vec: IntArray
    count: int
    ok: BoolArray


@dataclass(frozen=True, slots=True)
class MoveUnit:
    """Pods that move together; ``cost``: the GPU-minutes moving them gives up."""

    job: str
    whole: bool
    groups: tuple[MovedGroup, ...]
    cost: int

    @property
    def pods(self) -> int:
        return sum(g.count for g in self.groups)


@dataclass(frozen=True, slots=True)
class MoveProblem:
    """``free[n]``: room on candidate node ``n`` now, one column per resource."""

    free: IntArray
    gang: tuple[GangPart, ...]
    need: int
    units: tuple[MoveUnit, ...]
    max_moves: int

    def __post_init__(self) -> None:
        nodes = self.free.shape[0]
        for part in self.gang:
            if part.ok.shape != (nodes,) or part.vec.shape != self.free.shape[1:]:
                raise MoveProblemError("a gang part's ok or vec does not match the nodes' shape")
        for unit in self.units:
            if unit.cost < 0:
                raise MoveProblemError(f"unit of job {unit.job}: cost {unit.cost} is negative")
            for group in unit.groups:
                if group.ok.shape != (nodes,) or not -1 <= group.home < nodes:
                    raise MoveProblemError(f"unit of job {unit.job}: a group does not match the nodes")


@dataclass(frozen=True, slots=True)
class MovePlan:
    """The chosen units, where the gang's pods go ``(part, node, count)`` and where each moved group goes
    ``(unit, group, node, count)``."""

    units: tuple[int, ...]
    gang: tuple[tuple[int, int, int], ...]
    moved: tuple[tuple[int, int, int, int], ...]
    moves: int
    cost: int


@dataclass(frozen=True, slots=True)
class MoveAnswer:
    plan: MovePlan | None
    status: str  # CP-SAT's: OPTIMAL, FEASIBLE, INFEASIBLE, UNKNOWN, MODEL_INVALID
    wall_ms: float

    @property
    def proven(self) -> bool:
        """The plan moves provably the fewest pods (or, without a plan, none exists within the bound)."""
        return self.status in ("OPTIMAL", "INFEASIBLE")


def fit_counts(vec: IntArray, free: IntArray) -> IntArray:
    """How many pods asking ``vec`` each row of ``free`` holds (resources the pod does not ask are no
    bound)."""
    asked = np.flatnonzero(vec)
    if asked.size == 0:
        return np.full(free.shape[0], UNBOUNDED, dtype=np.int64)
    counts: IntArray = np.maximum((free[:, asked] // vec[asked]).min(axis=1), 0)
    return counts


def place_gang(
    free: IntArray, gang: Sequence[GangPart], need: int
) -> tuple[tuple[int, int, int], ...] | None:
    """Where ``need`` of the gang's pods go in ``free`` without moving anything: part by part, whole pods
    per node in node order, each part's pods on its ``ok`` nodes. ``(part, node, count)``, or None when
    they do not all fit."""
    room = np.maximum(free, 0)
    placed: list[tuple[int, int, int]] = []
    left = need
    for c, part in enumerate(gang):
        per_node = np.where(part.ok, fit_counts(part.vec, room), 0)
        budget = min(part.count, left)
        for n in np.flatnonzero(per_node).tolist():
            if budget <= 0:
                break
            take = min(int(per_node[n]), budget)
            room[n] -= take * part.vec
            placed.append((c, n, take))
            budget -= take
            left -= take
    return tuple(placed) if left <= 0 else None


def plan_moves(problem: MoveProblem, *, time_limit_s: float, seed: int = 0) -> MoveAnswer:
    # CP-SAT (and the pandas it loads) only once a plan is asked for: a second of start-up otherwise.
    from ortools.sat.python import cp_model

    from volcano_py.scheduler.solver.model import LeanModel, new_solver

    started = time.perf_counter()
    model = LeanModel()
    free = problem.free
    nodes, dims = free.shape
    units = problem.units
    moving = [model.new_bool_var(f"m_{u}") for u in range(len(units))]
    # Per node and resource, the linear terms of what lands there and of what leaves.
    lands: list[list[list[tuple[int, cp_model.IntVar]]]] = [[[] for _ in range(dims)] for _ in range(nodes)]
    leaves: list[list[list[tuple[int, cp_model.IntVar]]]] = [[[] for _ in range(dims)] for _ in range(nodes)]

    def charge(
        where: list[list[tuple[int, cp_model.IntVar]]], vec: IntArray, var: cp_model.IntVar, k: int
    ) -> None:
        """Add ``k`` times ``vec`` times ``var`` to the node's per-resource terms."""
        for d in np.flatnonzero(vec).tolist():
            where[d].append((k * int(vec[d]), var))

    placed: dict[tuple[int, int], cp_model.IntVar] = {}
    for c, part in enumerate(problem.gang):
        of_part = []
        for n in np.flatnonzero(part.ok).tolist():
            var = model.new_int_var(0, part.count, f"x_{c}_{n}")
            placed[(c, n)] = var
            of_part.append(var)
            charge(lands[n], part.vec, var, 1)
        if of_part:
            model.add(sum(of_part) <= part.count)
    if not placed:
        return MoveAnswer(None, "INFEASIBLE", (time.perf_counter() - started) * 1000.0)
    model.add(sum(placed.values()) >= problem.need)

    moved: dict[tuple[int, int, int], cp_model.IntVar] = {}
    for u, unit in enumerate(units):
        for g, group in enumerate(unit.groups):
            targets = [n for n in np.flatnonzero(group.ok).tolist() if n != group.home]
            here = []
            for n in targets:
                var = model.new_int_var(0, group.count, f"z_{u}_{g}_{n}")
                moved[(u, g, n)] = var
                here.append(var)
                charge(lands[n], group.vec, var, 1)
            model.add(sum(here) == group.count * moving[u])
            if group.home >= 0:
                charge(leaves[group.home], group.vec, moving[u], group.count)
    by_job: dict[str, list[int]] = {}
    for u, unit in enumerate(units):
        by_job.setdefault(unit.job, []).append(u)
    for members in by_job.values():
        for w in (u for u in members if units[u].whole):
            for s in (u for u in members if not units[u].whole):
                model.add(moving[w] + moving[s] <= 1)
    for n in range(nodes):
        for d in range(dims):
            if not lands[n][d]:
                continue
            land = sum(k * var for k, var in lands[n][d])
            leave = sum(k * var for k, var in leaves[n][d])
            model.add(land <= int(free[n, d]) + leave)
    pods = [unit.pods for unit in units]
    if units:
        model.add(sum(p * m for p, m in zip(pods, moving, strict=True)) <= problem.max_moves)
    # Fewest pods first: one pod more outweighs every GPU-minute the plan could save.
    weight = sum(unit.cost for unit in units) + 1
    model.minimize(sum((p * weight + unit.cost) * m for p, unit, m in zip(pods, units, moving, strict=True)))

    solver = new_solver(time_limit_s, seed)
    # Presolve found nothing to remove but unused variables and took the whole 1 s default budget on
    # openb-sized models (64 nodes, 91 units: ~1.0 s of presolve, no solution); without it the same models
    # are solved to optimality in ~0.7 s (benchmarks/bench_consolidation.py, docs/solver.md).
    solver.parameters.cp_model_presolve = False
    status = solver.solve(model)
    name = solver.status_name(status)
    wall_ms = (time.perf_counter() - started) * 1000.0
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return MoveAnswer(None, name, wall_ms)
    chosen = tuple(u for u, m in enumerate(moving) if solver.boolean_value(m))
    plan = MovePlan(
        units=chosen,
        gang=tuple((c, n, v) for (c, n), var in placed.items() if (v := int(solver.value(var)))),
        moved=tuple((u, g, n, v) for (u, g, n), var in moved.items() if (v := int(solver.value(var)))),
        moves=sum(units[u].pods for u in chosen),
        cost=sum(units[u].cost for u in chosen),
    )
    return MoveAnswer(plan, name, wall_ms)
