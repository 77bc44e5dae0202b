"""gang: all-or-nothing. A job is valid with ``minMember`` live tasks (and pods forming each policy's
``minSubGroups``), ready when that many hold resources (and each ``minTaskMember`` and ``minSubGroups`` is
met), and never a victim below its ``minMember``. At close it writes the PodGroup's Unschedulable or
Scheduled condition, naming the sub-group policies still short."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from volcano_py.api import constants as k
from volcano_py.api.bodies.conditions import condition_is_true

from ..framework.arguments import Arguments
from ..framework.decisions import Condition
from ..framework.extension import EvictionKind, Invalid, Vote
from ..framework.gang_safety import surplus
from ..framework.job import JobInfo
from ..framework.session import Session
from ..framework.status import ALLOCATED_STATUSES, TaskStatus
from ..framework.task import TaskInfo

SCHEDULED_REASON = "tasks in gang are ready to be scheduled"


def sub_groups_short_text(job: JobInfo) -> str:
    """Which ``minSubGroups`` the job does not meet yet, in words for its PodGroup condition; "" if none."""
    if not job.sub_group_policies:
        return ""
    short = job.sub_groups_short()
    return "; ".join(
        f"{job.policy_name(i)}: {have}/{need} sub-groups ready (minSubGroups {need}, each needs "
        f"{job.sub_group_size_of(i)} pods placed together)"
        for i, (have, need) in short.items()
    )


class GangPlugin:
    name = "gang"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()
        self.ssn: Session | None = None

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn

    def job_valid(self, job: JobInfo) -> Invalid | None:
        if job.ready_task_num >= job.min_available and not job.min_task_member and not job.sub_group_policies:
            return None  # ready tasks are valid ones, and no role has a minimum: asked of every job
        if job.valid_task_num < job.min_available:
            return Invalid(
                k.REASON_NOT_ENOUGH_PODS,
                f"Not enough valid tasks for gang-scheduling, valid: {job.valid_task_num}, "
                f"min: {job.min_available}",
            )
        short = job.roles_short(include_pipelined=True, include_pending=True)
        if short:
            detail = ", ".join(f"task {role or '(unnamed)'} lacks {n}" for role, n in short.items())
            return Invalid(k.REASON_NOT_ENOUGH_PODS_OF_TASK, f"Not enough valid pods of each task: {detail}")
        missing = job.sub_groups_missing()
        if missing:
            detail = ", ".join(
                f"{job.policy_name(i)} has {have} of minSubGroups {need}"
                for i, (have, need) in missing.items()
            )
            return Invalid(
                k.REASON_NOT_ENOUGH_PODS_OF_TASK, f"Not enough valid subGroups for gang-scheduling: {detail}"
            )
        return None

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        # Jobs still short of their gang go first: finishing a gang frees nothing, starting one does.
        lr, rr = left.is_ready(), right.is_ready()
        return 0 if lr == rr else (1 if lr else -1)

    def job_order_key(self, job: JobInfo) -> int:
        return 1 if job.is_ready() else 0

    def job_ready(self, job: JobInfo) -> bool:
        return job.is_ready()

    def job_pipelined(self, job: JobInfo) -> Vote:
        return Vote.PERMIT if job.is_pipelined() else Vote.REJECT

    def job_starving(self, job: JobInfo) -> bool:
        return job.is_starving()

    def _by_job(self, preemptees: Sequence[TaskInfo]) -> dict[str, list[TaskInfo]]:
        out: dict[str, list[TaskInfo]] = {}
        for task in preemptees:
            out.setdefault(task.job_id or "", []).append(task)
        return out

    def _reclaim_victims(self, preemptees: Sequence[TaskInfo]) -> list[TaskInfo]:
        """Volcano's rule: pods a job can lose and stay ready (``surplus``: its ``minAvailable`` and each
        role's and sub-group policy's minimum kept). A job at its minimum gives none here, which leaves this
        tier undecided: the next tier (a queue's share) may still take the whole gang, and the reclaim action
        evicts a gang's pods all or none."""
        assert self.ssn is not None
        allowed: set[str] = set()
        for job_id, tasks in self._by_job(preemptees).items():
            job = self.ssn.jobs.get(job_id)
            if job is not None:  # as Volcano: a pod whose PodGroup is gone is nobody's victim here
                allowed.update(t.uid for t in surplus(job, tasks))
        return [t for t in preemptees if t.uid in allowed]

    def _preempt_victims(self, preemptees: Sequence[TaskInfo]) -> list[TaskInfo]:
        """For preempt, more than Volcano's gang offers: pods a job can lose and keep its gang, and also, when
        every pod the job holds is offered (or its minimum is one), all of them: the whole gang may go as one
        victim, which the preempt action evicts all or none. Volcano's confs turn gang's preemptable off."""
        assert self.ssn is not None
        allowed: set[str] = set()
        for job_id, tasks in self._by_job(preemptees).items():
            job = self.ssn.jobs.get(job_id)
            offered = {t.uid for t in tasks}
            if (
                job is None
                or job.min_available == 1
                or all(t.uid in offered for t in job.tasks_in(*ALLOCATED_STATUSES))
            ):
                allowed |= offered
            else:
                allowed.update(t.uid for t in surplus(job, tasks))
        return [t for t in preemptees if t.uid in allowed]

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        return self._preempt_victims(preemptees)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        return self._reclaim_victims(reclaimees)

    def gang_evictable(
        self, kind: EvictionKind, actor: TaskInfo, candidates: Sequence[TaskInfo]
    ) -> list[TaskInfo] | None:
        # The gang actions offer pods in bundles a gang survives or loses whole (``surplus``): nothing to
        # hold back here, as in Volcano.
        return list(candidates)

    def on_session_close(self, ssn: Session) -> None:
        conditions = ssn.conditions
        # The Scheduled condition by its note: ready jobs are most jobs, and nearly all are told alike.
        scheduled: dict[str, Condition] = {}
        # Not the steady jobs: told they are Scheduled when they settled, and the same since.
        jobs = ssn.jobs
        for job in (*ssn.unsettled, *ssn.moved_steady()):
            if job.shadow or job.uid in conditions or job.uid not in jobs:
                continue
            if job.is_ready():
                note = _scheduled_note(job)
                told = scheduled.get(note)
                if told is None:
                    ssn.set_condition(job, k.PODGROUP_CONDITION_SCHEDULED, SCHEDULED_REASON, note)
                    scheduled[note] = conditions[job.uid]
                else:
                    conditions[job.uid] = told
                continue
            if not job.count(TaskStatus.PENDING, TaskStatus.PIPELINED, *ALLOCATED_STATUSES):
                continue
            explanation = ssn.explanations.get(job.uid)
            unready = job.min_available - job.ready_task_num
            waiting = job.waiting_task_num
            detail = (
                f"{waiting} pipelined onto resources being released" if waiting else "waiting for resources"
            )
            message = (
                explanation.message
                if explanation
                else f"{unready}/{len(job.tasks)} tasks in gang unschedulable: {detail}"
            )
            short = sub_groups_short_text(job)
            if short and short not in message:
                message = f"{message}; {short}"
                if explanation is not None:
                    ssn.explanations[job.uid] = replace(explanation, message=message)
            ssn.set_condition(job, k.PODGROUP_CONDITION_UNSCHEDULABLE, k.REASON_NOT_ENOUGH_RESOURCES, message)


def _scheduled_note(job: JobInfo) -> str:
    """What the job's Scheduled condition already says beyond Volcano's empty message (how it started: a
    fifo queue's backfill says behind which head), kept while it stays scheduled."""
    memo = job.said_of_conditions
    if memo is not None and memo[0] is job.conditions:
        return memo[1]  # asked of every ready job each session; its conditions change only with its PodGroup
    note = ""
    for condition in job.conditions:
        if condition_is_true(condition, k.PODGROUP_CONDITION_SCHEDULED) and (
            condition.get("reason") == SCHEDULED_REASON
        ):
            note = str(condition.get("message") or "")
            break
    job.said_of_conditions = (job.conditions, note)
    return note
