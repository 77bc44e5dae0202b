"""Gang-aware eviction planning, shared by ``preempt`` (within a queue) and ``reclaim`` (across queues).

Victims come in units a gang survives: a single pod a ready job can lose and stay ready (``surplus``: above
its ``minAvailable``, its role's ``minTaskMember`` and its sub-groups' ``minSubGroups``), or every pod a job
holds at once. Evicting part of a gang below its minimum would leave it holding resources while
unable to run, so no plan ever does that.

This module finds the candidates and groups them into units; ``gangplan`` builds and tries the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from volcano_py.api.bodies.pod import pod_preemption_policy

from ..framework.gang_safety import surplus
from ..framework.job import JobInfo
from ..framework.nodetable import IntArray
from ..framework.session import Session
from ..framework.status import ALLOCATED_STATUSES, TaskStatus
from ..framework.task import TaskInfo, timestamp

# Pods a plan may evict: they run (or are bound) and were not placed by this very session.
EVICTABLE = frozenset({TaskStatus.RUNNING, TaskStatus.BOUND})


def never_preempts(job: JobInfo) -> bool:
    """PriorityClass ``preemptionPolicy: Never`` (copied onto the pod's spec at admission)."""
    return any(pod_preemption_policy(t.pod) == "Never" for t in job.pending_tasks)


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
    """Pods that go together: one elastic pod, or every pod a job holds (``whole``)."""

    job: str
    tasks: tuple[TaskInfo, ...]
    whole: bool
    priority: int
    youngest: float
    rows: tuple[int, ...]  # each task's node row
    vecs: tuple[IntArray, ...]  # each task's request as a node-table row

    @property
    def pods(self) -> int:
        return len(self.tasks)

    def live_frees(self) -> dict[int, IntArray]:
        """Per node row, what evicting the unit frees now (pods already leaving count for nothing)."""
        out: dict[int, IntArray] = {}
        for task, row, vec in zip(self.tasks, self.rows, self.vecs, strict=True):
            if task.status in EVICTABLE:
                out[row] = out[row] + vec if row in out else vec
        return out


def build_units(ssn: Session, permitted: Iterable[TaskInfo]) -> list[VictimUnit]:
    """Group the permitted victims into units a gang survives, most preferred victims first: fewest
    pods, then the lowest priority, then the youngest."""
    by_job: dict[str, list[TaskInfo]] = {}
    for task in permitted:
        by_job.setdefault(task.job_id or task.uid, []).append(task)
    units: list[VictimUnit] = []
    for job_id, tasks in by_job.items():
        job = ssn.jobs.get(job_id)
        if job is None:
            continue
        holding = job.tasks_in(*ALLOCATED_STATUSES)
        ordered = sorted(tasks, key=lambda t: (t.priority, -timestamp(t.created)))
        singles = surplus(job, ordered)
        for task in singles:
            units.append(_unit(ssn, job, (task,), whole=False))
        allowed = {t.uid for t in tasks}
        if holding and len(singles) < len(holding) and all(t.uid in allowed for t in holding):
            units.append(_unit(ssn, job, tuple(holding), whole=True))
    units.sort(key=lambda u: (u.pods, u.priority, -u.youngest))
    return units


def _unit(ssn: Session, job: JobInfo, tasks: tuple[TaskInfo, ...], *, whole: bool) -> VictimUnit:
    return VictimUnit(
        job=job.uid,
        tasks=tasks,
        whole=whole,
        priority=job.priority,
        youngest=max(timestamp(t.created) for t in tasks),
        rows=tuple(ssn.node_of(t) for t in tasks),
        vecs=tuple(ssn.task_class(t).vec for t in tasks),
    )


def note(ssn: Session, job: JobInfo, reason: str) -> None:
    """Add why preempt or reclaim could not help to the job's explanation (its pending-condition text)."""
    ssn.fit_failures_of(job).add(0, [reason])


def by_preference(tasks: Iterable[TaskInfo], ssn: Session) -> list[TaskInfo]:
    """Candidates most preferred as victims first: lowest job priority, lowest pod priority, youngest."""

    def key(task: TaskInfo) -> tuple[int, int, float]:
        job = ssn.jobs.get(task.job_id or "")
        return (job.priority if job else task.priority, task.priority, -timestamp(task.created))

    return sorted(tasks, key=key)


# The victim rule of one action, asked of the session: ``ssn.preemptable`` or ``ssn.reclaimable``.
Permits = Callable[[TaskInfo, Sequence[TaskInfo]], list[TaskInfo]]


def permitted_by_job(
    ssn: Session, permits: Permits, actor: TaskInfo, candidates: Sequence[TaskInfo]
) -> list[TaskInfo]:
    """``permits`` asked one victim job at a time, so that a plugin judging candidates together (a queue
    giving up one pod, then another) weighs each job's pods only against each other; what a whole plan may
    take is checked again as the plan is built. Each job's ``surplus`` pods are offered first, as Volcano
    offers its safe bundle before the whole one: a queue that can give up one pod gives up a spare worker,
    not the role-tight ``ps`` that would break the gang."""
    by_job: dict[str, list[TaskInfo]] = {}
    for task in candidates:
        by_job.setdefault(task.job_id or task.uid, []).append(task)
    allowed: set[str] = set()
    for job_id, tasks in by_job.items():
        job = ssn.jobs.get(job_id)
        if job is not None and len(tasks) > 1:
            safe = surplus(job, tasks)
            first = {t.uid for t in safe}
            tasks = safe + [t for t in tasks if t.uid not in first]
        allowed.update(t.uid for t in permits(actor, tasks))
    return [t for t in candidates if t.uid in allowed]
