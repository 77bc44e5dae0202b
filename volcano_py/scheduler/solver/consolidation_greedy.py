"""The greedy baseline of ``consolidate`` (``planner: greedy``): empty the emptiest nodes until the gang fits.

This is what a scheduler without a move model does (KAI-Scheduler's consolidation works this way): while
the waiting gang does not fit, take, among the nodes where one of its pods would fit once every movable pod
there left, the one with the fewest GPUs in use, and evict all its movable pods. It reads the same
``MoveProblem`` as the CP-SAT model, so the same pods may move in the same units: a job's pods on the node go
as single units when the job runs enough pods above its ``minAvailable`` to spare them all, else as the
job's whole unit (every pod it holds, wherever it runs), and pods no unit covers stay. Nothing is planned for
the moved pods: they are made again by their controllers and wait for room like any pod, which is the
difference the benchmark measures. The plan's ``moved`` is therefore empty.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .consolidation import IntArray, MoveAnswer, MovePlan, MoveProblem, fit_counts, place_gang


@dataclass(frozen=True, slots=True)
class _Index:
    """The problem's units by the node their pods run on and by job."""

    on_node: dict[int, list[int]]
    of_job: dict[str, list[int]]

    @classmethod
    def of(cls, problem: MoveProblem) -> _Index:
        on_node: dict[int, list[int]] = {}
        of_job: dict[str, list[int]] = {}
        for u, unit in enumerate(problem.units):
            of_job.setdefault(unit.job, []).append(u)
            for home in dict.fromkeys(g.home for g in unit.groups if g.home >= 0):
                on_node.setdefault(home, []).append(u)
        return cls(on_node, of_job)


def emptying(problem: MoveProblem, node: int, chosen: set[int], index: _Index | None = None) -> set[int]:
    """``chosen`` with the units that take every movable pod off ``node``: per job there, its single units
    on the node when they are all its pods there, else its whole unit (replacing its chosen single ones),
    else the single units alone (the job's other pods there stay)."""
    units = problem.units
    index = index or _Index.of(problem)
    out = set(chosen)
    for job in sorted({units[u].job for u in index.on_node.get(node, ())}):
        members = index.of_job[job]
        whole = next((u for u in members if units[u].whole), None)
        if whole is not None and whole in out:
            continue
        singles = [u for u in members if not units[u].whole and units[u].groups[0].home == node]
        here = sum(g.count for g in units[whole].groups if g.home == node) if whole is not None else 0
        if whole is None or sum(units[u].pods for u in singles) >= here:
            out.update(singles)
        else:
            out.difference_update(members)
            out.add(whole)
    return out


def _room(problem: MoveProblem, chosen: set[int]) -> IntArray:
    """What is free on each node once the chosen units left."""
    room = problem.free.copy()
    for u in chosen:
        for group in problem.units[u].groups:
            if group.home >= 0:
                room[group.home] += group.count * group.vec
    return room


def plan_greedy(problem: MoveProblem, in_use: IntArray) -> MoveAnswer:
    """Empty the node with the fewest GPUs in use (``in_use[n]``; ties: the lower node) among those where
    one of the gang's pods fits once it is emptied, until ``need`` of the gang's pods fit, within
    ``max_moves`` pods. Status ``FEASIBLE`` with a plan, else ``INFEASIBLE``."""
    started = time.perf_counter()
    index = _Index.of(problem)
    order = sorted(index.on_node, key=lambda n: (int(in_use[n]), n))
    chosen: set[int] = set()
    while (gang := place_gang(_room(problem, chosen), problem.gang, problem.need)) is None:
        for node in order:
            after = emptying(problem, node, chosen, index)
            if after == chosen:
                continue  # emptied already, or nothing on it may move
            room = problem.free[node : node + 1].copy()
            for u in after:
                for group in problem.units[u].groups:
                    if group.home == node:
                        room[0] += group.count * group.vec
            if any(part.ok[node] and fit_counts(part.vec, room)[0] > 0 for part in problem.gang):
                chosen = after
                break
        else:
            return _none(started)
        if sum(problem.units[u].pods for u in chosen) > problem.max_moves:
            return _none(started)
    units = tuple(sorted(chosen))
    plan = MovePlan(
        units=units,
        gang=gang,
        moved=(),
        moves=sum(problem.units[u].pods for u in units),
        cost=sum(problem.units[u].cost for u in units),
    )
    return MoveAnswer(plan, "FEASIBLE", (time.perf_counter() - started) * 1000.0)


def _none(started: float) -> MoveAnswer:
    return MoveAnswer(None, "INFEASIBLE", (time.perf_counter() - started) * 1000.0)
