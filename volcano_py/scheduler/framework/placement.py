"""Greedy placement of one job's pending tasks, class by class, vectorised over nodes.

This is the seam the CP-SAT solver replaces for gangs: a ``JobPlacer`` plugin gets the same
``(session, statement, job)`` and returns ``Placed``; ``place_job`` tries placers first, then this.

Per class the nodes passing the predicates are scanned once: which fit a pod now (idle), which will once
releasing pods are gone (future idle), and each node's score. Then pods are placed one at a time on the
best-scoring node, as Volcano does, but after each pod only the chosen node's fit and score are
recomputed, so a pod costs an argmax plus O(1) work instead of a pass over every node.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from .classes import TaskClass
from .explain import node_reasons
from .extension import Placed
from .job import JobInfo
from .nodetable import FloatArray, IntArray
from .task import TaskInfo

if TYPE_CHECKING:
    from .session import Session
    from .statement import Statement

_NONE = -np.inf


def class_runs(ssn: Session, tasks: Iterable[TaskInfo]) -> list[tuple[TaskClass, list[TaskInfo]]]:
    """Consecutive tasks of one class, in task order (a class may recur after tasks of another)."""
    runs: list[tuple[TaskClass, list[TaskInfo]]] = []
    for task in tasks:
        klass = ssn.task_class(task)
        if runs and runs[-1][0] is klass:
            runs[-1][1].append(task)
        else:
            runs.append((klass, [task]))
    return runs


class _Candidates:
    """Nodes passing the predicates for one class, with masked scores for idle and future-idle fit."""

    def __init__(self, ssn: Session, klass: TaskClass) -> None:
        self.ssn = ssn
        self.klass = klass
        self.rows: IntArray = np.flatnonzero(ssn.predicate(klass).ok)
        table = ssn.table
        rows = self.rows
        idle = table.allocatable[rows] - table.used[rows]
        future = idle + table.releasing[rows] - table.pipelined[rows]
        scores = ssn.node_scores(klass, rows)
        self.now: FloatArray = np.where((idle >= klass.vec).all(axis=1), scores, _NONE)
        self.later: FloatArray = np.where((future >= klass.vec).all(axis=1), scores, _NONE)

    def best(self) -> tuple[int, bool] | None:
        """(table row, fits now) of the best node, preferring nodes where the pod fits now."""
        if self.rows.size == 0:
            return None
        i = int(np.argmax(self.now))
        if self.now[i] != _NONE:
            return int(self.rows[i]), True
        i = int(np.argmax(self.later))
        if self.later[i] != _NONE:
            return int(self.rows[i]), False
        return None

    def refresh(self, row: int) -> None:
        """Recompute one node after a pod went there."""
        i = int(np.searchsorted(self.rows, row))
        table = self.ssn.table
        vec = self.klass.vec
        idle = table.allocatable[row] - table.used[row]
        future = idle + table.releasing[row] - table.pipelined[row]
        score = float(self.ssn.node_scores(self.klass, self.rows[i : i + 1])[0])
        self.now[i] = score if (idle >= vec).all() else _NONE
        self.later[i] = score if (future >= vec).all() else _NONE


def place_greedy(ssn: Session, stmt: Statement, job: JobInfo, *, until_ready: bool = True) -> Placed:
    """Place the job's pending tasks that have requests, in task order; stop once the job is ready
    (so other jobs get their turn, as Volcano does) when ``until_ready``. Records why tasks did not fit."""
    queue = ssn.queues[job.queue]
    tasks = ssn.sorted_tasks([t for t in job.pending_tasks if not t.best_effort])
    allocated = pipelined = 0
    was_ready = ssn.job_ready(job)
    for klass, run in class_runs(ssn, tasks):
        candidates = _Candidates(ssn, klass)
        dynamic = ssn.is_dynamic(klass)
        for n, task in enumerate(run):
            if not ssn.allocatable(queue, task):
                # When no node could take the pod either, the nodes are the fact to act on.
                if candidates.best() is None:
                    reasons = node_reasons(ssn, klass)
                else:
                    reasons = [
                        ssn.explain("explain_allocatable", queue, task) or f"queue {queue.name} is full"
                    ]
                ssn.fit_failures_of(job).add(len(run) - n, reasons)
                break
            if dynamic and n:
                candidates = _Candidates(ssn, klass)
            choice = candidates.best()
            if choice is None:
                ssn.fit_failures_of(job).add(len(run) - n, node_reasons(ssn, klass))
                break
            row, now = choice
            if now:
                stmt.allocate(task, row)
                allocated += 1
            else:
                stmt.pipeline(task, row)
                pipelined += 1
            if not dynamic:
                candidates.refresh(row)
            if until_ready and not was_ready and ssn.job_ready(job):
                return Placed(allocated, pipelined)
            if was_ready and until_ready:
                return Placed(allocated, pipelined)
    return Placed(allocated, pipelined)


def place_job(ssn: Session, stmt: Statement, job: JobInfo) -> Placed:
    """Plugins implementing ``place_job`` first (tier order); the greedy placement when none takes it."""
    for tier in ssn.points("place_job"):
        for placer in tier:
            placed: Placed | None = placer(ssn, stmt, job)
            if placed is not None:
                return placed
    return place_greedy(ssn, stmt, job)
