"""The end of a session: PodGroup phases, conditions and counters, queue accounting, the result value.

PodGroup phase follows Volcano's session close: Unknown when some pods run but the gang is unschedulable;
Running once ``minMember`` tasks hold resources or succeeded (Completed when all of those succeeded);
otherwise Pending, unless enqueue already made it Inqueue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from volcano_py.api import constants as k
from volcano_py.api.bodies.conditions import condition_fields
from volcano_py.api.bodies.podgroup import podgroup_said
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import Resource, Tally, count_into, total, total_counted

from .decisions import Condition, Pipeline, PodGroupUpdate, QueueUpdate, SessionResult
from .dra import held_by_queues
from .job import JobInfo
from .status import ALLOCATED_STATUSES, TaskStatus

if TYPE_CHECKING:
    from .session import Session


def _phase(job: JobInfo, condition: Condition | None) -> PodGroupPhase:
    unschedulable = condition is not None and condition.type == k.PODGROUP_CONDITION_UNSCHEDULABLE
    if unschedulable and job.count(TaskStatus.RUNNING):
        return PodGroupPhase.UNKNOWN
    allocated = job.count(*ALLOCATED_STATUSES, TaskStatus.SUCCEEDED)
    if allocated >= job.min_available:
        # A group with minMember 0 (unset) is Running at once, as Volcano's stress suite expects of it; it is
        # Completed only once it had pods and all of them succeeded.
        if allocated and job.count(TaskStatus.SUCCEEDED) == allocated:
            return PodGroupPhase.COMPLETED
        return PodGroupPhase.RUNNING
    if job.phase is PodGroupPhase.INQUEUE:
        return PodGroupPhase.INQUEUE
    if job.phase in (PodGroupPhase.RUNNING, PodGroupPhase.UNKNOWN) and job.count(TaskStatus.RUNNING):
        return job.phase
    return PodGroupPhase.PENDING


def _condition_of(raw: Mapping[str, Any]) -> Condition:
    return Condition(*condition_fields(raw))


def _conditions(job: JobInfo, new: Condition | None) -> tuple[Condition, ...]:
    """The job's conditions with ``new`` in place of its type; the opposite type flips to False."""
    old = [_condition_of(c) for c in job.conditions]
    if new is None:
        return tuple(old)
    opposite = (
        k.PODGROUP_CONDITION_SCHEDULED
        if new.type == k.PODGROUP_CONDITION_UNSCHEDULABLE
        else k.PODGROUP_CONDITION_UNSCHEDULABLE
    )
    out: list[Condition] = []
    placed = False
    for cond in old:
        if cond.type == new.type:
            same = (cond.status, cond.reason, cond.message) == (new.status, new.reason, new.message)
            out.append(cond if same else new)
            placed = True
        elif cond.type == opposite and cond.status == "True":
            out.append(Condition(cond.type, "False", cond.reason, cond.message, new.last_transition_time))
        else:
            out.append(cond)
    if not placed:
        out.append(new)
    return tuple(out)


def podgroup_update(job: JobInfo, condition: Condition | None) -> PodGroupUpdate | None:
    """The PodGroup's new status, or None when nothing a reader would see has changed."""
    phase = _phase(job, condition)
    running = job.count(TaskStatus.RUNNING)
    succeeded = job.count(TaskStatus.SUCCEEDED)
    failed = job.count(TaskStatus.FAILED)
    # Without a new condition the conditions stay as they are: most jobs, every cycle, so they are read
    # only when something else changed or a condition is new.
    same_counts = (phase.value, running, succeeded, failed) == podgroup_said(job.podgroup)
    if same_counts and condition is None:
        return None
    conditions = _conditions(job, condition)
    if same_counts and conditions == tuple(_condition_of(c) for c in job.conditions):
        return None
    return PodGroupUpdate(job.namespace, job.name, phase, conditions, running, succeeded, failed)


def finish(ssn: Session) -> SessionResult:
    """Collect everything the session decided into one immutable result."""
    updates: list[PodGroupUpdate] = []
    pipelined: list[Pipeline] = []
    allocated: dict[str, Tally] = {}
    pending: dict[str, int] = {}
    waiting: dict[str, list[Resource]] = {}
    # Once per job of the cluster, every session: written for the common job (held, nothing new).
    conditions = ssn.conditions
    said_of: dict[int, tuple[str, str, str, str]] = {}  # jobs told alike share one Condition
    kept = ssn.snapshot.steady
    steady = ssn.steady.jobs if ssn.steady is not None else {}
    # Steady jobs walked after all (changed by this session, or told something): their part of the views'
    # per-queue sums is taken back out. The others have nothing to write, and what they hold is in the sums.
    walked: dict[str, list[Resource]] = {}
    for job in ssn.closing_jobs():
        uid = job.uid
        if uid in steady:
            walked.setdefault(steady[uid].queue, []).append(steady[uid].allocated)
        by_status = job.by_status
        # Pipelined tasks, and allocated ones a held (pipelined, not yet ready) gang keeps: both wait for
        # releasing pods; committed allocations are Binding by now.
        if by_status.get(TaskStatus.PIPELINED) or by_status.get(TaskStatus.ALLOCATED):
            for task in job.tasks_in(TaskStatus.PIPELINED, TaskStatus.ALLOCATED):
                pipelined.append(Pipeline(task.namespace, task.name, task.uid, task.node_name, job.uid))
        tally = allocated.get(job.queue)
        if tally is None:
            tally = allocated[job.queue] = {}
        count_into(tally, job.allocated)  # summed once per job already
        bucket = by_status.get(TaskStatus.PENDING)
        if bucket:
            pending[job.queue] = pending.get(job.queue, 0) + len(bucket)
            waiting.setdefault(job.queue, []).extend(t.resreq for t in bucket.values())
        if job.shadow:
            continue
        condition = conditions.get(job.uid)
        # All but its time, which a status needing no update does not depend on.
        said: tuple[str, str, str, str] | None = None
        if condition is not None:
            said = said_of.get(id(condition))
            if said is None:
                said = said_of[id(condition)] = (
                    condition.type, condition.status, condition.reason, condition.message
                )  # fmt: skip
        settled = job.settled
        if settled is not None and settled[0] == job.version and settled[1] == said:
            continue  # as settled as when the last session closed it
        update = podgroup_update(job, condition)
        if update is None:
            job.settled = (job.version, said)
            if kept is not None:
                kept.settling.append(job)  # the next update judges whether it is steady now
        else:
            updates.append(update)
            if kept is not None and uid in kept.jobs:
                job.settled = None  # not steady after all (another conf, or this session changed it)
                kept.settling.append(job)
    if ssn.snapshot.resource_claims:
        # As Volcano's queue status: the DRA devices its placed pods' claims hold, as deviceclass/<class>.
        placed = (
            (job.queue, task.pod)
            for job in ssn.snapshot.jobs.values()
            for task in job.tasks_in(*ALLOCATED_STATUSES)
            if task.claims_used
        )
        for queue_name, devices in held_by_queues(placed, ssn.snapshot.dra_claims()).items():
            count_into(allocated.setdefault(queue_name, {}), devices)
    if kept is not None:
        kept.conf = ssn.conf
    queues = []
    for name, queue in sorted(ssn.queues.items()):
        deserved = None  # the last plugin's answer wins
        for tier in ssn.points.queue_deserved:
            for fn in tier:
                deserved = fn(queue)
        held = total_counted(allocated.get(name, {}))
        if ssn.steady is not None:
            held = held + ssn.steady.held_by(name) - total(walked.get(name, ()))
        queues.append(
            QueueUpdate(
                name=name,
                allocated=held,
                deserved=deserved,
                capability=queue.capability,
                pending_pods=pending.get(name, 0),
                request=total([held, *waiting.get(name, ())]),
                weight=queue.weight,
            )
        )
    return SessionResult(
        binds=tuple(ssn.binds),
        evictions=tuple(ssn.evictions),
        pipelined=tuple(pipelined),
        ungates=tuple(ssn.ungates.values()),
        podgroup_events=tuple(ssn.podgroup_events),
        podgroup_updates=tuple(updates),
        queue_updates=tuple(queues),
        explanations=dict(ssn.explanations),
        timings=dict(ssn.timings),
        timers=dict(ssn.timers),
        handed_over=ssn.handed,
    )
