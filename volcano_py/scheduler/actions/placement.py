"""Greedy placement of one job's pending tasks, class by class, vectorised over nodes.

This is the seam the CP-SAT solver replaces for gangs: a ``JobPlacer`` plugin gets the same
``(session, statement, job)`` and returns ``Placed``; ``place_job`` tries placers first, then this.

Pods are placed one at a time on the best-scoring node, as Volcano does, but without re-scoring after each
pod: for a class, one vectorised call scores every candidate node's 1st, 2nd, ... k-th pod (a node's score
depends only on its own usage), so each pod then costs an argmax and an O(1) update. Pods that only fit
once releasing pods are gone (pipelining) take the slower path that re-checks the chosen node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..framework.classes import TaskClass
from ..framework.explain import node_reasons
from ..framework.extension import Gradients, HyperNodeWalk, Placed, SubJobWalk
from ..framework.job import JobInfo
from ..framework.nodetable import BoolArray, FloatArray, IntArray
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo
from .subgroups import place_by_sub_groups

if TYPE_CHECKING:
    from ..framework.session import Session
    from ..framework.statement import Statement

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


class Candidates:
    """Nodes passing the predicates for one class, each with its score sequence for the next pods.

    Only the ``wanted`` best nodes by first-pod score get a sequence: a node is first picked when its
    first-pod score is the best still unpicked, so placing ``wanted`` pods never touches a node outside
    that prefix (ties broken by node order, as argmax does). That keeps the scoring independent of
    cluster size beyond one first-pod pass.
    """

    def __init__(self, ssn: Session, klass: TaskClass, wanted: int) -> None:
        self.ssn = ssn
        self.klass = klass
        table = ssn.table
        ok = ssn.predicate(klass).ok
        asked = klass.asked
        room = table.room_now
        everywhere = bool(ok.all())
        # Feasibility first (a comparison); pod counts only for the sampled nodes (a division).
        if everywhere:
            self.all_rows: IntArray = table.rows
            fits = ok.copy()
            for column, amount in klass.needs:  # one contiguous column of the table at a time
                fits &= room[:, column] >= amount
            fitting = fits.nonzero()[0]
        else:
            self.all_rows = ok.nonzero()[0]
            free = room[np.ix_(self.all_rows, asked)]
            passing: BoolArray = np.all(free >= klass.vec[asked], axis=1)
            fitting = passing.nonzero()[0]
        wanted = max(wanted, 1)
        fitting = fitting[
            ssn.sampling.pick(fitting if everywhere else self.all_rows[fitting], len(table), wanted)
        ]
        self._later: FloatArray | None = None
        if wanted == 1:
            self._one(fitting if everywhere else self.all_rows[fitting])
            return
        fit = table.fit_counts(klass.vec, room[self.all_rows[fitting]])
        first: FloatArray | None = None
        if fitting.size > wanted:
            first = ssn.node_scores(klass, self.all_rows[fitting])
            order = np.sort(np.lexsort((fitting, -first))[:wanted])
            first, fitting, fit = first[order], fitting[order], fit[order]
        self.rows: IntArray = self.all_rows[fitting]
        depth = int(min(wanted, fit.max())) if fit.size else 0
        self.depth = depth
        self.ladder: FloatArray
        if depth == 1 and first is not None:
            self.ladder = first[:, None].copy()
        elif depth:
            extra = np.tile(np.arange(depth, dtype=np.int64), len(self.rows))
            scores = ssn.node_scores(klass, np.repeat(self.rows, depth), extra).reshape(len(self.rows), depth)
            # The m-th further pod only goes where m + 1 pods fit.
            self.ladder = np.where(np.arange(depth) < fit[:, None], scores, _NONE)
        else:
            self.ladder = np.full((len(self.rows), 1), _NONE)
        self.placed: IntArray = np.zeros(len(self.rows), dtype=np.int64)
        self.now: FloatArray = self.ladder[:, 0].copy()

    def _one(self, rows: IntArray) -> None:
        """The sequence for one pod (most jobs): only the best node by score, the first of equal ones."""
        if rows.size > 1:
            scores = self.ssn.node_scores(self.klass, rows)
            i = int(scores.argmax())
            rows, scores = rows[i : i + 1], scores[i : i + 1]
        elif rows.size:
            scores = self.ssn.node_scores(self.klass, rows)
        else:
            scores = np.full(0, _NONE)
        self.rows = rows
        self.depth = int(rows.size)
        self.ladder = scores[:, None] if rows.size else np.full((0, 1), _NONE)
        self.placed = np.zeros(rows.size, dtype=np.int64)
        self.now = scores.copy()

    def _later_scores(self) -> FloatArray:
        """Scores of nodes where one more pod fits once releasing pods are gone (computed on demand)."""
        if self._later is None:
            table = self.ssn.table
            rows = self.all_rows
            future = (
                table.allocatable[rows] - table.used[rows] + table.releasing[rows] - table.pipelined[rows]
            )
            scores = self.ssn.node_scores(self.klass, rows)
            self._later = np.where(np.all(future >= self.klass.vec, axis=1), scores, _NONE)
        return self._later

    def best(self) -> tuple[int, bool] | None:
        """(table row, fits now) of the best node, preferring nodes where the pod fits now."""
        if self.rows.size:
            i = int(self.now.argmax())
            if self.now[i] != _NONE:
                return int(self.rows[i]), True
        if self.all_rows.size == 0:
            return None
        later = self._later_scores()
        i = int(later.argmax())
        if later[i] != _NONE:
            return int(self.all_rows[i]), False
        return None

    def took(self, row: int, now: bool) -> None:
        """A pod went to ``row``: advance that node's sequence (or re-check it after a pipeline)."""
        self._later = None if now else self._later
        if now:
            i = int(np.searchsorted(self.rows, row))
            self.placed[i] += 1
            step = int(self.placed[i])
            self.now[i] = self.ladder[i, step] if step < self.depth else _NONE
            return
        i = int(np.searchsorted(self.all_rows, row))
        table = self.ssn.table
        future = table.allocatable[row] - table.used[row] + table.releasing[row] - table.pipelined[row]
        later = self._later_scores()
        fits = bool(np.all(future >= self.klass.vec))
        later[i] = float(self.ssn.node_scores(self.klass, self.all_rows[i : i + 1])[0]) if fits else _NONE


def place_greedy(
    ssn: Session,
    stmt: Statement,
    job: JobInfo,
    *,
    until_ready: bool = True,
    only: Sequence[TaskInfo] | None = None,
) -> Placed:
    """Place the job's pending tasks that have requests (or those of ``only``), in task order; stop once the
    job is ready (so other jobs get their turn, as Volcano does) when ``until_ready``. Records why tasks did
    not fit."""
    queue = ssn.queues[job.queue]
    pending = job.pending_tasks if only is None else [t for t in only if t.status is TaskStatus.PENDING]
    tasks = ssn.sorted_tasks([t for t in pending if not t.best_effort])
    allocated = pipelined = 0
    was_ready = ssn.job_ready(job)
    for klass, run in class_runs(ssn, tasks):
        dynamic = ssn.pod_by_pod(klass)
        candidates = Candidates(ssn, klass, 1 if dynamic or (was_ready and until_ready) else len(run))
        for n, task in enumerate(run):
            if dynamic and n:
                candidates = Candidates(ssn, klass, 1)
            choice = candidates.best()
            if not ssn.allocatable(queue, task):
                # When no node could take the pod either, the nodes are the fact to act on.
                if choice is None:
                    reasons = node_reasons(ssn, klass)
                else:
                    reasons = [ssn.explain_allocatable(queue, task) or f"queue {queue.name} is full"]
                ssn.fit_failures_of(job).add(len(run) - n, reasons)
                break
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
            candidates.took(row, now)
            if until_ready and (was_ready or ssn.job_ready(job)):
                return Placed(allocated, pipelined)
    return Placed(allocated, pipelined)


def _best_in(
    ssn: Session,
    gradients: Gradients,
    score: Callable[[Sequence[str]], Mapping[str, float]],
    attempt: Callable[[Statement, str], bool],
) -> tuple[str, BoolArray, float] | None:
    """The first tier where ``attempt`` succeeds inside some HyperNode (each try taken back), and of those
    HyperNodes the best by ``score``; among equals the first by name (Volcano picks one at random)."""
    for tier in gradients:
        fitted: list[str] = []
        for name, mask in tier:
            with ssn.within(mask, f"outside HyperNode {name}"), ssn.statement() as trial:
                if attempt(trial, name):
                    fitted.append(name)
                trial.discard()
        if fitted:
            scores = score(fitted)
            best = min(fitted, key=lambda name: (-scores.get(name, 0.0), name))
            mask = next(m for name, m in tier if name == best)
            return best, mask, scores.get(best, 0.0)
    return None


def _gang_met(ssn: Session, job: JobInfo, placed: Placed) -> bool:
    return bool(placed.allocated + placed.pipelined) and (ssn.job_ready(job) or ssn.job_pipelined(job))


def _place_subjobs(
    ssn: Session, stmt: Statement, job: JobInfo, subjobs: Sequence[SubJobWalk], at: str
) -> tuple[Placed, float]:
    """Inside the job's HyperNode ``at`` (already narrowed to it), each sub-group in turn into the best of
    its HyperNodes where at least its ``subGroupSize`` fits (else not at all), until the job is ready; what
    was placed, and the sum of the chosen HyperNodes' scores."""
    total = 0.0
    allocated = pipelined = 0
    for sub in subjobs:
        # As Volcano: once the job is ready, the sub-group just placed is the last of this round.
        if (allocated or pipelined) and ssn.job_ready(job):
            break
        waiting = [t for t in sub.tasks if t.status is TaskStatus.PENDING and not t.best_effort]
        if not waiting:
            continue

        need = max(job.sub_group_missing(sub.key, sub.tasks), 1) if job.sub_group_policies else len(waiting)

        def whole(trial: Statement, _: str, waiting: list[TaskInfo] = waiting, need: int = need) -> bool:
            placed = place_greedy(ssn, trial, job, until_ready=False, only=waiting)
            return placed.allocated + placed.pipelined >= need

        chosen = _best_in(ssn, sub.gradients(at), sub.score, whole)
        ssn.fit_failures.pop(job.uid, None)
        if chosen is None:
            continue
        name, mask, score = chosen
        with ssn.within(mask, f"outside HyperNode {name}"):
            placed = place_greedy(ssn, stmt, job, until_ready=False, only=waiting)
        allocated, pipelined = allocated + placed.allocated, pipelined + placed.pipelined
        total += score
    return Placed(allocated, pipelined), total


def place_in_hypernodes(ssn: Session, stmt: Statement, job: JobInfo, walk: HyperNodeWalk) -> Placed | None:
    """Volcano's walk for a job with a network topology: tier by tier from the lowest, place the job in each
    HyperNode of the tier and take it back; the best-scoring HyperNode where it fitted gets it for real.
    A job with sub-groups is placed sub-group by sub-group inside each HyperNode, scored by their sum.
    None when it fits nowhere and ``walk.unplaced`` gives no reason to wait (the usual placement follows)."""
    # Each trial's misfits are its own (a node outside the HyperNode is no reason to tell the user).
    told = ssn.fit_failures.pop(job.uid, None)
    sums: dict[str, float] = {}

    def attempt(trial: Statement, at: str) -> bool:
        if walk.subjobs:
            placed, sums[at] = _place_subjobs(ssn, trial, job, walk.subjobs, at)
        else:
            placed = place_greedy(ssn, trial, job)
        ssn.fit_failures.pop(job.uid, None)
        return _gang_met(ssn, job, placed)

    def score(fitted: Sequence[str]) -> Mapping[str, float]:
        return {name: sums.get(name, 0.0) for name in fitted} if walk.subjobs else walk.score(fitted)

    chosen = _best_in(ssn, walk.gradients, score, attempt)
    if told is not None:
        ssn.fit_failures[job.uid] = told
    if chosen is not None:
        best, mask, _ = chosen
        with ssn.within(mask, f"outside HyperNode {best}"):
            if walk.subjobs:
                return _place_subjobs(ssn, stmt, job, walk.subjobs, best)[0]
            return place_greedy(ssn, stmt, job)
    if walk.unplaced is None:
        return None
    pending = [t for t in job.pending_tasks if not t.best_effort]
    ssn.fit_failures_of(job).add(len(pending), [walk.unplaced])
    return Placed(0, 0)


def place_job(ssn: Session, stmt: Statement, job: JobInfo) -> Placed:
    """Plugins implementing ``place_job`` first (tier order), then the first HyperNode walk offered for
    the job; the greedy placement when none takes it."""
    for tier in ssn.points.place_job:
        for placer in tier:
            placed: Placed | None = placer(ssn, stmt, job)
            if placed is not None:
                return placed
    for walks in ssn.points.hypernode_walk:
        for offer in walks:
            walk = offer(ssn, job)
            if walk is None:
                continue
            placed = place_in_hypernodes(ssn, stmt, job, walk)
            if placed is not None:
                return placed
            return _place_plain(ssn, stmt, job)
    return _place_plain(ssn, stmt, job)


def _place_plain(ssn: Session, stmt: Statement, job: JobInfo) -> Placed:
    """Outside any HyperNode walk: a job with sub-groups sub-group by sub-group, any other pod by pod."""
    if job.sub_group_policies:
        return place_by_sub_groups(ssn, stmt, job, place_greedy)
    return place_greedy(ssn, stmt, job)
