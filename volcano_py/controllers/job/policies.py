"""Lifecycle policies: which action an event (or exit code) triggers, and when a delayed action is cancelled.

Matching is Volcano's ``applyPolicies``: a command's action wins; internal events and events from an older job
version only sync; then the pod's task policies are tried before the job's, first match wins; ``PodPending``
matches only a policy that has a ``timeout`` (a pending pod is normal until it has waited too long).

``JobUpdated`` is raised when a Job's spec changes (Volcano declares the event for that, but its controller
syncs such a change as ``OutOfSync``); it matches only a policy that names it, never ``*``, so a Job whose
policies only use ``*`` behaves on an update as it does in Volcano.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from volcano_py.api.bus import Action, Event
from volcano_py.api.job_view import ResolvedJob, ResolvedPolicy

_INTERNAL_EVENTS = frozenset({Event.OUT_OF_SYNC, Event.COMMAND_ISSUED, Event.POD_RUNNING})
_INTERNAL_ACTIONS = frozenset(
    {Action.SYNC_JOB, Action.ENQUEUE_JOB, Action.SYNC_QUEUE, Action.OPEN_QUEUE, Action.CLOSE_QUEUE}
)
POD_EVENTS = frozenset({Event.POD_PENDING, Event.POD_RUNNING, Event.POD_FAILED, Event.POD_EVICTED})


@dataclass(frozen=True, slots=True)
class Request:
    """One reason to look at a Job: an observed pod/PodGroup change, a command, or a resync."""

    event: Event = Event.OUT_OF_SYNC
    action: Action | None = None  # set by commands; bypasses policies
    task: str = ""
    pod: str = ""
    pod_uid: str = ""
    exit_code: int = 0
    job_version: int = 0
    job_uid: str = ""
    disrupted: bool = False  # the pod was preempted or evicted
    partition: str = ""  # the pod's partition-id, for RestartPartition


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    delay_seconds: float = 0.0
    event: Event = Event.OUT_OF_SYNC
    task: str = ""
    pod: str = ""
    pod_uid: str = ""
    partition: str = ""


def _match(policies: tuple[ResolvedPolicy, ...], req: Request) -> ResolvedPolicy | None:
    for policy in policies:
        named = req.event in policy.events
        matches = named or (Event.ANY in policy.events and req.event is not Event.JOB_UPDATED)
        # A pending pod is normal; only a policy with a timeout says how long is too long.
        if matches and (req.event is not Event.POD_PENDING or policy.timeout_seconds is not None):
            return policy
        if (
            policy.exit_code is not None
            and req.event is Event.POD_FAILED
            and policy.exit_code == req.exit_code
        ):
            return policy
    return None


def decide(spec: ResolvedJob, current_version: int, req: Request) -> Decision:
    """The action ``req`` triggers on a Job whose status version is ``current_version``."""
    base = Decision(Action.SYNC_JOB, 0.0, req.event, req.task, req.pod, req.pod_uid, req.partition)
    if req.action is not None:
        return replace(base, action=req.action)
    if req.event in _INTERNAL_EVENTS:
        return base
    if req.job_uid and req.job_uid != spec.uid:
        return base
    if req.job_version < current_version:
        return base  # an event of a pod from before the last restart
    task = spec.task(req.task) if req.task else None
    policy = (_match(task.policies, req) if task else None) or _match(spec.policies, req)
    if policy is None:
        return base
    return replace(base, action=policy.action, delay_seconds=policy.timeout_seconds or 0.0)


def is_internal(action: Action) -> bool:
    return action in _INTERNAL_ACTIONS


def cancels_delayed(delayed: Decision, req: Request) -> bool:
    """Whether pod event ``req`` cancels the action delayed for the same pod: it recovered."""
    if req.event not in POD_EVENTS or req.event is Event.POD_PENDING or req.pod != delayed.pod:
        return False
    if delayed.event is Event.POD_PENDING:
        return req.pod_uid == delayed.pod_uid  # the pending pod moved on (ran, failed or went away)
    return delayed.event in (Event.POD_FAILED, Event.POD_EVICTED) and req.event is Event.POD_RUNNING


def scope(action: Action) -> str:
    """What an action acts on, for cancelling delayed actions it supersedes: job, task, partition or pod."""
    if action is Action.RESTART_TASK:
        return "task"
    if action is Action.RESTART_PARTITION:
        return "partition"
    if action is Action.RESTART_POD:
        return "pod"
    return "job"


def superseded(delayed: Decision, executed: Decision) -> bool:
    """Executing ``executed`` makes a pending ``delayed`` action of the same scope pointless (Volcano)."""
    kind = scope(executed.action)
    if scope(delayed.action) != kind:
        return False
    if kind == "task":
        return delayed.task == executed.task
    if kind == "pod":
        return delayed.pod == executed.pod
    if kind == "partition":
        return (delayed.task, delayed.partition) == (executed.task, executed.partition)
    return True
