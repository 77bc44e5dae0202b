"""Volcano's Job state machine: what an action does in each phase, and which phase the counts lead to.

Every (phase, action) pair resolves to a :class:`Step`: an operation on the pods (sync them, kill the whole
job keeping finished pods or not, or kill one task/pod) and a rule that, given the recounted status, says
whether the phase moves. The rules are Volcano's (``pkg/controllers/job/state``); the one difference is that
a restart caused by a disruption (preemption, eviction) does not consume ``maxRetry``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from volcano_py.api.batch import JobPhase, JobStatus
from volcano_py.api.bus import Action
from volcano_py.api.job_view import ResolvedJob
from volcano_py.controllers.job.podview import FAILED, SUCCEEDED
from volcano_py.controllers.job.status import task_phase


class Op(Enum):
    SYNC = "sync"  # create missing pods, delete surplus/out-of-sync ones, recount
    KILL_JOB = (
        "kill-job"  # delete the job's pods (keeping finished ones when retain is soft) and its PodGroup
    )
    KILL_TARGET = "kill-target"  # delete the pods of one task, one partition of a task, or one pod


RETAIN_NONE: frozenset[str] = frozenset()
RETAIN_SOFT: frozenset[str] = frozenset({SUCCEEDED, FAILED})


@dataclass(frozen=True, slots=True)
class Target:
    task: str
    pod: str = ""  # empty: the whole task (or partition)
    partition: str | None = None  # set for RestartPartition: the pods of the task with this partition-id


@dataclass(frozen=True, slots=True)
class Change:
    phase: JobPhase
    retry: bool = False  # increment status.retryCount


Rule = Callable[[ResolvedJob, JobStatus], Change | None]


@dataclass(frozen=True, slots=True)
class Step:
    op: Op
    rule: Rule | None
    retain: frozenset[str] = RETAIN_NONE
    target: Target | None = None


def _to(phase: JobPhase, *, retry: bool = False) -> Rule:
    def rule(_spec: ResolvedJob, _status: JobStatus) -> Change:
        return Change(phase, retry)

    return rule


def _when_drained(phase: JobPhase) -> Rule:
    def rule(_spec: ResolvedJob, status: JobStatus) -> Change | None:
        if status.terminating or status.pending or status.running:
            return None
        return Change(phase)

    return rule


def pending_rule(spec: ResolvedJob, status: JobStatus) -> Change | None:
    if spec.min_available <= status.running + status.succeeded + status.failed:
        return Change(JobPhase.RUNNING)
    return None


def running_rule(spec: ResolvedJob, status: JobStatus) -> Change | None:
    replicas = spec.total_replicas
    if replicas == 0:
        return None
    if spec.min_success is not None and status.succeeded >= spec.min_success:
        return Change(JobPhase.COMPLETED)
    if status.succeeded + status.failed == replicas:
        if spec.min_available >= spec.total_task_min_available:
            for task in spec.tasks:
                if task.name in status.task_status_count and (
                    task_phase(status, task.name, SUCCEEDED) < task.min_available
                ):
                    return Change(JobPhase.FAILED)
        if spec.min_success is not None and status.succeeded < spec.min_success:
            return Change(JobPhase.FAILED)
        if status.succeeded >= spec.min_available:
            return Change(JobPhase.COMPLETED)
        return Change(JobPhase.FAILED)
    if status.pending > replicas - spec.min_available:
        return Change(JobPhase.PENDING)
    return None


def restarting_rule(spec: ResolvedJob, status: JobStatus) -> Change | None:
    if status.retry_count >= spec.max_retry:
        return Change(JobPhase.FAILED)
    if spec.total_replicas - status.terminating >= spec.min_available:
        return Change(JobPhase.PENDING)
    return None


_RESTARTS = frozenset({Action.RESTART_TASK, Action.RESTART_POD, Action.RESTART_PARTITION})


def _active_step(phase: JobPhase, action: Action, target: Target | None, count_retry: bool) -> Step:
    """Pending and Running react to actions the same way; only their sync rule differs."""
    if action is Action.RESTART_JOB:
        return Step(Op.KILL_JOB, _to(JobPhase.RESTARTING, retry=count_retry), RETAIN_NONE)
    if action in _RESTARTS and target is not None:
        return Step(Op.KILL_TARGET, _to(JobPhase.RESTARTING, retry=count_retry), target=target)
    if action is Action.ABORT_JOB:
        return Step(Op.KILL_JOB, _to(JobPhase.ABORTING), RETAIN_SOFT)
    if action is Action.COMPLETE_JOB:
        return Step(Op.KILL_JOB, _to(JobPhase.COMPLETING), RETAIN_SOFT)
    if action is Action.TERMINATE_JOB:
        return Step(Op.KILL_JOB, _to(JobPhase.TERMINATING), RETAIN_SOFT)
    return Step(Op.SYNC, pending_rule if phase is JobPhase.PENDING else running_rule)


def step_for(
    phase: JobPhase | None, action: Action, target: Target | None = None, *, count_retry: bool = True
) -> Step:
    """The step Volcano's state ``phase`` takes for ``action``; an unset phase behaves as Pending."""
    phase = phase or JobPhase.PENDING
    if phase in (JobPhase.PENDING, JobPhase.RUNNING):
        return _active_step(phase, action, target, count_retry)
    if phase is JobPhase.RESTARTING:
        if action is Action.SYNC_JOB:
            return Step(Op.SYNC, restarting_rule)
        if action in _RESTARTS and target is not None:
            return Step(Op.KILL_TARGET, restarting_rule, target=target)
        return Step(Op.KILL_JOB, restarting_rule, RETAIN_NONE)
    if phase in (JobPhase.ABORTING, JobPhase.ABORTED):
        if action is Action.RESUME_JOB:
            return Step(Op.KILL_JOB, _to(JobPhase.RESTARTING, retry=True), RETAIN_SOFT)
        if phase is JobPhase.ABORTING:
            return Step(Op.KILL_JOB, _when_drained(JobPhase.ABORTED), RETAIN_SOFT)
        return Step(Op.KILL_JOB, None, RETAIN_SOFT)
    if phase is JobPhase.COMPLETING:
        return Step(Op.KILL_JOB, _when_drained(JobPhase.COMPLETED), RETAIN_SOFT)
    if phase is JobPhase.TERMINATING:
        return Step(Op.KILL_JOB, _when_drained(JobPhase.TERMINATED), RETAIN_SOFT)
    # Completed, Failed, Terminated: keep finished pods, release everything else.
    return Step(Op.KILL_JOB, None, RETAIN_SOFT)
