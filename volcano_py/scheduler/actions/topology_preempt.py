"""preempt with ``enableTopologyAwarePreemption``: victims chosen node by node, by who they are.

The gang plan (``gangplan``) frees resources: it is exact when a pod's only obstacle is room. A pod kept off
a node by the pods already there (required pod anti-affinity to them, or theirs to it; a host port) needs
particular pods gone, and which ones is learnt only by trying. So, for a preemptor whose predicates change
with placements (the session's "dynamic" classes), each candidate node gets a dry run, as kube-scheduler's
default preemption does and Volcano's preempt does with this argument on:

1. the permitted victims on the node are taken one by one, most preferred victim first, until the pod fits:
   resources, its queue, and every predicate evaluated again without them;
2. then each is given back, least preferred first, and kept if the pod still fits without it.

Among the nodes where that worked the node with the lowest highest-priority victim wins, then the lowest sum
of victim priorities, then the fewest victims, then the latest-started highest-priority victims (the
kube-scheduler order Volcano uses). The search ends after ``CandidateLimits.count`` successful nodes
(Volcano's ``minCandidateNodesPercentage``, ``minCandidateNodesAbsolute``, ``maxCandidateNodesAbsolute``).

The whole gang is planned in one statement, committed only when it became placeable, as with the gang plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..framework.classes import TaskClass
from ..framework.job import JobInfo
from ..framework.session import Session
from ..framework.task import TaskInfo, started_at
from .victims import EVICTABLE, Permits, by_preference, gang_met, note, permitted_by_job, protected, to_place


@dataclass(frozen=True, slots=True)
class CandidateLimits:
    """How many successful nodes the dry run looks for (Volcano's three arguments, with its defaults)."""

    percentage: int = 10
    minimum: int = 1
    maximum: int = 100

    def count(self, nodes: int) -> int:
        wanted = max(nodes * self.percentage // 100, self.minimum)
        return max(min(wanted, self.maximum, nodes), 1)


@dataclass(frozen=True, slots=True)
class NodeCandidate:
    row: int
    victims: tuple[TaskInfo, ...]

    def key(self) -> tuple[int, int, int, float]:
        """Smaller is better: the kube-scheduler order of preemption candidates."""
        highest = max(v.priority for v in self.victims)
        latest_start = min(started_at(v) for v in self.victims if v.priority == highest)
        return (highest, sum(v.priority for v in self.victims), len(self.victims), -latest_start)


class NodeDryRun:
    """The dry run for one preemptor pod. ``admit`` is the queue's word on the pod (``ssn.allocatable``)."""

    def __init__(self, ssn: Session, task: TaskInfo, admit: Callable[[TaskInfo], bool], reason: str) -> None:
        self.ssn = ssn
        self.task = task
        self.klass: TaskClass = ssn.task_class(task)
        self.admit = admit
        self.reason = reason

    def fits(self, row: int) -> bool:
        ssn = self.ssn
        if not (ssn.table.future_idle[row] >= self.klass.vec).all() or not self.admit(self.task):
            return False
        return bool(ssn.predicate(self.klass).ok[row])

    def fits_without(self, row: int, victims: Iterable[TaskInfo]) -> bool:
        with self.ssn.statement() as trial:
            for victim in victims:
                trial.evict(victim, self.reason, self.task)
            verdict = self.fits(row)
            trial.discard()
        return verdict

    def reachable(self, candidates: dict[int, list[TaskInfo]]) -> set[int]:
        """Nodes that pass every predicate once all candidate victims are gone: a node failing even then
        (a node selector, a taint) is not worth a dry run. One evaluation for all nodes."""
        with self.ssn.statement() as trial:
            for victims in candidates.values():
                for victim in victims:
                    trial.evict(victim, self.reason, self.task)
            ok = self.ssn.predicate(self.klass).ok.copy()
            trial.discard()
        return {row for row in candidates if ok[row]}

    def victims_on(self, row: int, permitted: list[TaskInfo]) -> NodeCandidate | None:
        """The fewest of ``permitted`` (most preferred victim first) whose eviction lets the pod fit."""
        table = self.ssn.table
        room = table.future_idle[row] + sum((table.vector(v.resreq) for v in permitted), np.int64(0))
        if not (room >= self.klass.vec).all():
            return None
        taken: list[TaskInfo] = []
        for victim in permitted:
            taken.append(victim)
            if self.fits_without(row, taken):
                break
        else:
            return None
        needed = list(taken)
        for victim in reversed(taken):
            rest = [v for v in needed if v is not victim]
            if self.fits_without(row, rest):
                needed = rest
        # With no victim needed the pod fits as things are: that is allocate's placement, not preemption.
        return NodeCandidate(row, tuple(needed)) if needed else None


def preempt_node_by_node(
    ssn: Session,
    job: JobInfo,
    *,
    victim_jobs: Callable[[], Iterable[JobInfo]],
    permits: Permits,
    admit: Callable[[TaskInfo], bool],
    limits: CandidateLimits,
    reason: str,
    no_plan: str,
) -> list[TaskInfo] | None:
    """Make the gang ``job`` placeable with victims found by dry runs; the evicted pods, or None (nothing
    evicted, ``no_plan`` noted on the job)."""
    by_row: dict[int, list[TaskInfo]] = {}
    for other in victim_jobs():
        for victim in other.tasks_in(*EVICTABLE):
            if victim.node_name and not protected(victim):
                by_row.setdefault(ssn.node_of(victim), []).append(victim)
    evicted: list[TaskInfo] = []
    with ssn.statement() as stmt:
        for task in to_place(ssn, job):
            if gang_met(ssn, job):
                break
            run = NodeDryRun(ssn, task, admit, reason)
            row = _idle_row(run)
            if row is None:
                chosen = _best_candidate(run, by_row, permits, limits)
                if chosen is None:
                    continue  # another pod of the gang may have a different shape that does fit
                for victim in chosen.victims:
                    stmt.evict(victim, reason, task)
                evicted += chosen.victims
                row = chosen.row
            stmt.pipeline(task, row)
        if gang_met(ssn, job):
            stmt.commit()
            return evicted
        stmt.discard()
    note(ssn, job, no_plan)
    return None


def _idle_row(run: NodeDryRun) -> int | None:
    """The best node where the pod fits without evicting anyone (room freed earlier in this plan counts)."""
    ssn = run.ssn
    ok = ssn.predicate(run.klass).ok & (ssn.table.future_idle >= run.klass.vec).all(axis=1)
    rows = np.flatnonzero(ok)
    if not rows.size or not run.admit(run.task):
        return None
    return int(rows[int(np.argmax(ssn.node_scores(run.klass, rows)))])


def _best_candidate(
    run: NodeDryRun, by_row: dict[int, list[TaskInfo]], permits: Permits, limits: CandidateLimits
) -> NodeCandidate | None:
    live = {
        row: by_preference((t for t in tasks if t.status in EVICTABLE), run.ssn)
        for row, tasks in by_row.items()
    }
    live = {row: tasks for row, tasks in live.items() if tasks}
    wanted = limits.count(len(run.ssn.nodes))
    found: list[NodeCandidate] = []
    for row in sorted(run.reachable(live)):
        permitted = permitted_by_job(run.ssn, permits, run.task, live[row])
        candidate = run.victims_on(row, permitted) if permitted else None
        if candidate is not None:
            found.append(candidate)
            if len(found) >= wanted:
                break
    return min(found, key=NodeCandidate.key, default=None)
