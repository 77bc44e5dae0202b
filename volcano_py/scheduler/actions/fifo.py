"""A queue with ``spec.dequeueStrategy: fifo``: its jobs start in queue order, none delaying the head.

Volcano defines the field (``traverse``, the default, skips a head that cannot be scheduled and tries the
next job); here ``fifo`` is enforced by enqueue and allocate. A head waiting only for releasing pods
(pipelined) has its place, so it blocks nothing.

* enqueue: once a queue's head cannot be admitted, no later job of the queue is admitted in that session,
  and each learns why from its pending reason (``drain``, ``held_reason``).
* allocate (``backfill``, EASY backfill): once a queue's head cannot be placed, a later job may start now,
  in queue order, only if it does not delay the head's estimated start. The head's *shadow* (its estimated
  start and what each node still has idle once it has started: ``framework/shadow.py``) comes from the
  position-and-ETA forecast's simulation of the cluster. A later job passes the head if (a) it can be placed
  now, whole gang, and (b) either it ends by the shadow time, from the runtime it declares
  (``api.runtimes.job_runtime``; a job that declares none has no known end), or every node it is placed on
  has that much spare at the shadow time, which it then uses up for the jobs after it (the only way for a
  running job growing past its minimum). Otherwise it is
  held, and its pending reason says which condition failed. A job that passes gets a Scheduled condition
  saying behind which head and why, and a log line. Without a shadow (the session was given no forecast,
  or the head's start was not found within the forecast's bounds) the queue is held strictly.
"""

from __future__ import annotations

from datetime import UTC, datetime

from volcano_py.api import constants as k
from volcano_py.api.common import format_time, human_duration
from volcano_py.api.runtimes import DeclarationError, job_runtime
from volcano_py.log import get_logger
from volcano_py.resources import PODS, Resource

from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from ..framework.statement import Op, Statement
from ..framework.task import TaskInfo
from ..plugins.gang import SCHEDULED_REASON
from .ordering import OrderedQueue
from .placement import place_job

log = get_logger(__name__)


def held_reason(queue: QueueInfo, head: JobInfo) -> str:
    return (
        f"queue {queue.name} dequeues in strict FIFO order (spec.dequeueStrategy: fifo): waiting behind "
        f"{head.uid}, which cannot be scheduled yet"
    )


def drain(waiting: OrderedQueue[JobInfo]) -> list[JobInfo]:
    """The queue's later jobs, in order, taken out of ``waiting``: held behind the head this session."""
    held: list[JobInfo] = []
    while waiting:
        held.append(waiting.pop())
    return held


def backfill(ssn: Session, queue: QueueInfo, head: JobInfo, waiting: OrderedQueue[JobInfo]) -> None:
    """Allocate's turn for the later jobs of a fifo queue whose head cannot be placed: each either
    backfills (starts now without delaying the head) or is held with its reason."""
    later = drain(waiting)
    if not later:
        return
    source = ssn.snapshot.shadows
    shadow = source(head.uid) if source is not None else None
    if shadow is None or shadow.start is None:
        why = shadow.why_unknown if shadow is not None else "no forecast of its start in this session"
        reason = f"{held_reason(queue, head)}; none may backfill, its start is not known ({why})"
        for job in later:
            _hold(ssn, job, reason)
        return
    spare = dict(shadow.spare)
    for job in later:
        _try(ssn, queue, head, shadow.start, spare, job)


def _hold(ssn: Session, job: JobInfo, reason: str) -> None:
    ssn.fit_failures.pop(job.uid, None)  # a failed try's node reasons: the head is why it waits
    ssn.fit_failures_of(job).add(max(len(_to_place(job)), 1), [reason])


def _to_place(job: JobInfo) -> list[TaskInfo]:
    return [t for t in job.pending_tasks if not t.best_effort]


def _try(
    ssn: Session, queue: QueueInfo, head: JobInfo, start: float, spare: dict[str, Resource], job: JobInfo
) -> None:
    """Place ``job`` now if it cannot delay ``head``'s start at ``start``; else hold it, saying why."""
    tasks = _to_place(job)
    if not tasks:
        return
    try:
        runtime = job_runtime([t.pod for t in tasks], job.podgroup)
        unknown = (
            f"it declares no runtime ({k.EXPECTED_RUNTIME_KEY} annotation or spec.activeDeadlineSeconds)"
        )
    except DeclarationError as err:
        runtime, unknown = None, f"its runtime cannot be read ({err})"
    # A job already running that grows past its minimum started earlier: its new pods' runtime says
    # nothing of when its room frees, so only the spare may take them.
    growing = ssn.job_ready(job)
    ends = ssn.now_seconds + runtime if runtime is not None and not growing else None
    head_at = f"{head.uid}'s estimated start at {_at(start)}"
    with ssn.statement() as stmt:
        place_job(ssn, stmt, job)
        usage = _usage(stmt)
        if not usage or not ssn.job_ready(job):
            stmt.discard()
            _hold(ssn, job, held_reason(queue, head))
            return
        if runtime is not None and ends is not None and ends <= start:
            why = f"it ends by {_at(ends)} (declared runtime {human_duration(runtime)})"
        elif _fits(usage, spare):
            why = f"it uses only what {head.uid} leaves free at its estimated start"
            for node, used in usage.items():
                spare[node] = spare[node] - used
        else:
            stmt.discard()
            if growing:
                end = f"it is running already, so its new pods could still run at {head_at}"
            elif ends is not None:
                end = f"it ends by {_at(ends)}, after {head_at}"
            else:
                end = f"{unknown}, so it may still run at {head_at}"
            _hold(
                ssn,
                job,
                f"{held_reason(queue, head)}; it may not backfill: {end}, and needs room the head needs",
            )
            return
        stmt.commit()
    message = f"backfilled behind {head.uid} (estimated to start at {_at(start)}): {why}"
    ssn.set_condition(job, k.PODGROUP_CONDITION_SCHEDULED, SCHEDULED_REASON, message)
    log.info("job backfilled past its fifo queue's head", job=job.uid, queue=queue.name, detail=message)


def _usage(stmt: Statement) -> dict[str, Resource]:
    """What the statement placed on each node, ``pods`` counted as in a node's idle."""
    used: dict[str, Resource] = {}
    for change in stmt.changes:
        if change.op is Op.ALLOCATE:
            node = change.task.node_name
            used[node] = used.get(node, Resource()) + change.task.resreq + {PODS: 1}
    return used


def _fits(usage: dict[str, Resource], spare: dict[str, Resource]) -> bool:
    return all(used.fits_in(spare.get(node, Resource())) for node, used in usage.items())


def _at(seconds: float) -> str:
    return format_time(datetime.fromtimestamp(seconds, UTC))
