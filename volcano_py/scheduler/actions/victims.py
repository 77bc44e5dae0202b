"""Gang-aware eviction planning, shared by ``preempt`` (within a queue) and ``reclaim`` (across queues).

Victims come in units a gang survives: a single pod of a job running above its ``minAvailable``, or every
pod a job holds at once. Evicting part of a gang below its minimum would leave it holding resources while
unable to run, so no plan ever does that.

A plan is built and tried in one ``Statement``: for each pod of the preemptor's gang, in task order, pick
the node where it fits once the cheapest victims there are gone (fewest pods, then the lowest priority,
then the youngest), evict them, and pipeline the pod there (its nominated node). If the gang as a whole
cannot become placeable, the caller discards the statement and nothing is evicted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from ..framework.classes import TaskClass
from ..framework.job import JobInfo
from ..framework.nodetable import BoolArray, IntArray
from ..framework.session import Session
from ..framework.statement import Statement
from ..framework.status import ALLOCATED_STATUSES, TaskStatus
from ..framework.task import TaskInfo

# Pods a plan may evict: they run (or are bound) and were not placed by this very session.
EVICTABLE = frozenset({TaskStatus.RUNNING, TaskStatus.BOUND})


def _timestamp(created: str) -> float:
    try:
        return datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def never_preempts(job: JobInfo) -> bool:
    """PriorityClass ``preemptionPolicy: Never`` (copied onto the pod's spec at admission)."""
    return any((t.pod.get("spec") or {}).get("preemptionPolicy") == "Never" for t in job.pending_tasks)


def protected(task: TaskInfo) -> bool:
    """Never a victim: ``volcano.sh/preemptable: "false"``, kube-system, system-critical priority classes."""
    return not task.preemptable or task.system_critical


def to_place(ssn: Session, job: JobInfo) -> list[TaskInfo]:
    """The job's pending pods that need room, in task order."""
    return ssn.sorted_tasks([t for t in job.pending_tasks if not t.best_effort])


def gang_met(ssn: Session, job: JobInfo) -> bool:
    """The gang will start once releasing pods are gone: ``minAvailable`` counting pipelined pods."""
    return job.is_pipelined() and ssn.job_pipelined(job)


@dataclass(eq=False, slots=True)
class VictimUnit:
    """Pods that go together: one elastic pod, or a whole gang (``whole``)."""

    job: str
    tasks: tuple[TaskInfo, ...]
    whole: bool
    priority: int
    youngest: float
    on_row: dict[int, list[tuple[TaskInfo, IntArray]]] = field(default_factory=dict)

    @property
    def pods(self) -> int:
        return len(self.tasks)

    def frees(self, row: int) -> IntArray | None:
        """What evicting the unit frees on ``row``, counting only pods not already leaving."""
        vecs = [vec for task, vec in self.on_row.get(row, ()) if task.status in EVICTABLE]
        return sum(vecs[1:], vecs[0]) if vecs else None


def build_units(ssn: Session, permitted: Iterable[TaskInfo]) -> list[VictimUnit]:
    """Group the permitted victims into units a gang survives, most preferred victims first."""
    by_job: dict[str, list[TaskInfo]] = {}
    for task in permitted:
        by_job.setdefault(task.job_id or task.uid, []).append(task)
    units: list[VictimUnit] = []
    for job_id, tasks in by_job.items():
        job = ssn.jobs.get(job_id)
        if job is None:
            continue
        holding = job.tasks_in(*ALLOCATED_STATUSES)
        spare = job.ready_task_num - job.min_available
        ordered = sorted(tasks, key=lambda t: (t.priority, -_timestamp(t.created)))
        for task in ordered[: max(spare, 0)]:
            units.append(_unit(ssn, job, (task,), whole=False))
        allowed = {t.uid for t in tasks}
        if holding and spare < len(holding) and all(t.uid in allowed for t in holding):
            units.append(_unit(ssn, job, tuple(holding), whole=True))
    units.sort(key=lambda u: (u.pods, u.priority, -u.youngest))
    return units


def _unit(ssn: Session, job: JobInfo, tasks: tuple[TaskInfo, ...], *, whole: bool) -> VictimUnit:
    unit = VictimUnit(
        job=job.uid,
        tasks=tasks,
        whole=whole,
        priority=job.priority,
        youngest=max(_timestamp(t.created) for t in tasks),
    )
    for task in tasks:
        unit.on_row.setdefault(ssn.node_of(task), []).append((task, ssn.table.vector(task.resreq)))
    return unit


def enough_in_total(ssn: Session, job: JobInfo, units: Sequence[VictimUnit]) -> bool:
    """A cheap necessary condition: free room plus everything evictable covers the gang's remaining need,
    summed over the nodes that pass its predicates. When it fails no plan can work, so none is tried."""
    need = job.min_available - job.ready_task_num - job.waiting_task_num
    tasks = to_place(ssn, job)[: max(need, 0)]
    if not tasks:
        return need <= 0
    table = ssn.table
    usable: BoolArray = np.zeros(len(table), dtype=np.bool_)
    asked = np.zeros(len(table.names), dtype=np.int64)
    for task in tasks:
        klass = ssn.task_class(task)
        usable |= ssn.predicate(klass).ok
        asked += klass.vec
    room = np.maximum(table.future_idle[usable], 0).sum(axis=0)
    for unit in units:
        for row in unit.on_row:
            freed = unit.frees(row)
            if usable[row] and freed is not None:
                room = room + freed
    return bool((room >= asked).all())


class GangPlan:
    """Evict and pipeline, pod by pod, through ``stmt``; ``run`` says whether the gang became placeable."""

    def __init__(
        self,
        ssn: Session,
        stmt: Statement,
        job: JobInfo,
        units: Sequence[VictimUnit],
        *,
        reason: str,
        point: str,
        admit: Callable[[TaskInfo], bool],
    ) -> None:
        self.ssn = ssn
        self.stmt = stmt
        self.job = job
        self.reason = reason
        self.point = point
        self.admit = admit
        self.by_row: dict[int, list[VictimUnit]] = {}
        for unit in units:
            for row in unit.on_row:
                self.by_row.setdefault(row, []).append(unit)
        self.taken: set[int] = set()
        self.refused: set[int] = set()
        self.evicted: list[TaskInfo] = []

    def run(self) -> bool:
        for task in to_place(self.ssn, self.job):
            if gang_met(self.ssn, self.job):
                break
            klass = self.ssn.task_class(task)
            row = self._make_room(klass, task)
            if row is None:
                return False
            if not (self.ssn.table.future_idle[row] >= klass.vec).all() or not self.admit(task):
                return False
            self.stmt.pipeline(task, row)
        return gang_met(self.ssn, self.job)

    def _make_room(self, klass: TaskClass, task: TaskInfo) -> int | None:
        """Evict the cheapest victims that make room for ``task`` and return the node's row.

        Each unit is asked of the plugins again just before it is evicted, with the evictions planned so
        far counted (a queue may give up one pod but not two); a refused unit is never offered again and
        the choice is made afresh.
        """
        while True:
            choice = self._cheapest(klass)
            if choice is None:
                return None
            row, units = choice
            with self.ssn.statement() as attempt:
                evicted: list[TaskInfo] = []
                for unit in units:
                    live = [t for t in unit.tasks if t.status in EVICTABLE]
                    if len(permitted_victims(self.ssn, self.point, task, live)) != len(live):
                        self.refused.add(id(unit))
                        attempt.discard()
                        break
                    for victim in live:
                        attempt.evict(victim, self.reason, task)
                    evicted += live
                else:
                    attempt.commit()  # hands the evictions to the plan's statement
                    self.taken.update(id(u) for u in units)
                    self.evicted += evicted
                    return row

    def _cheapest(self, klass: TaskClass) -> tuple[int, list[VictimUnit]] | None:
        """The node where ``klass`` fits at the least cost in victims, and those victims."""
        ok = self.ssn.predicate(klass).ok
        vec = klass.vec
        future = self.ssn.table.future_idle
        fits = np.flatnonzero(ok & (future >= vec).all(axis=1))
        if fits.size:
            scores = self.ssn.node_scores(klass, fits)
            return int(fits[int(np.argmax(scores))]), []
        best: tuple[tuple[int, int, float], int, list[VictimUnit]] | None = None
        for row, units in self.by_row.items():
            if not ok[row]:
                continue
            short = vec - future[row]
            freed = np.zeros_like(vec)
            chosen: list[VictimUnit] = []
            for unit in units:
                gives = unit.frees(row)
                if gives is None or id(unit) in self.taken or id(unit) in self.refused:
                    continue
                if any(u.job == unit.job for u in chosen):
                    continue
                freed = freed + gives
                chosen.append(unit)
                if (freed >= short).all():
                    cost = (
                        sum(u.pods for u in chosen),
                        max(u.priority for u in chosen),
                        -min(u.youngest for u in chosen),
                    )
                    if best is None or (cost, row) < (best[0], best[1]):
                        best = (cost, row, chosen)
                    break
        return None if best is None else (best[1], best[2])


def by_preference(tasks: Iterable[TaskInfo], ssn: Session) -> list[TaskInfo]:
    """Candidates most preferred as victims first: lowest job priority, lowest pod priority, youngest."""

    def key(task: TaskInfo) -> tuple[int, int, float]:
        job = ssn.jobs.get(task.job_id or "")
        return (job.priority if job else task.priority, task.priority, -_timestamp(task.created))

    return sorted(tasks, key=key)


def permitted_victims(
    ssn: Session, point: str, actor: TaskInfo, candidates: Sequence[TaskInfo]
) -> list[TaskInfo]:
    """The candidates every plugin implementing ``point`` (preemptable or reclaimable) lets go, each plugin
    judging what the ones before it let through; no implementer at all means no victims.

    Volcano lets the first tier that names any victim decide, so a quota plugin in a lower tier can be
    bypassed; here a victim needs every plugin's consent.
    """
    remaining = list(candidates)
    judged = False
    for tier in ssn.points(point):
        for fn in tier:
            chosen: list[TaskInfo] | None = fn(actor, remaining)
            if chosen is None:
                continue
            judged = True
            keep = {t.uid for t in chosen}
            remaining = [t for t in remaining if t.uid in keep]
            if not remaining:
                return []
    return remaining if judged else []


def permitted_by_job(
    ssn: Session, point: str, actor: TaskInfo, candidates: Sequence[TaskInfo]
) -> list[TaskInfo]:
    """``permitted_victims`` asked one victim job at a time, so that a plugin judging candidates together
    (a queue giving up one pod, then another) weighs each job's pods only against each other; what a
    whole plan may take is checked again as the plan is built."""
    by_job: dict[str, list[TaskInfo]] = {}
    for task in candidates:
        by_job.setdefault(task.job_id or task.uid, []).append(task)
    allowed = {t.uid for tasks in by_job.values() for t in permitted_victims(ssn, point, actor, tasks)}
    return [t for t in candidates if t.uid in allowed]
