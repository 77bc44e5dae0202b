"""The CronJob controller's decisions, without I/O and with the time passed in.

One sync, as Volcano's (and Kubernetes') CronJob controller does it: forget finished Jobs from ``active`` and
keep ``successfulJobsHistoryLimit`` / ``failedJobsHistoryLimit`` of them; unless suspended, find the most
recent run time missed since ``lastScheduleTime`` (or creation), no older than ``startingDeadlineSeconds``;
apply ``concurrencyPolicy`` (Forbid skips while a run is active, Replace deletes it first); create the Job.

Restarts are safe because everything is derived from the API: ``active`` is rebuilt from the Jobs the CronJob
owns, and a run's Job name is the CronJob's name plus its scheduled time (minutes since the epoch, as
Volcano), so re-creating a run after a crash hits AlreadyExists instead of starting it twice, and
``lastScheduleTime`` says which run was the last one made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import FINISHED_PHASES, JobPhase
from volcano_py.api.bodies.cronjob import (
    cronjob_active,
    cronjob_job_spec,
    cronjob_job_template,
    cronjob_last_schedule_time,
    cronjob_last_successful_time,
    cronjob_status,
)
from volcano_py.api.bodies.job import job_phase, job_state_transition_time
from volcano_py.api.common import format_time
from volcano_py.api.cron import ConcurrencyPolicy, CronJob
from volcano_py.api.cron_parse import load_zone, parse_schedule
from volcano_py.api.cron_schedule import Schedule, ScheduleError
from volcano_py.api.objects import (
    annotations_of,
    creation_timestamp_of,
    labels_of,
    name_of,
    namespace_of,
    resource_version_of,
    uid_of,
)

JSON = dict[str, Any]

# Kubernetes' margin past the run time before the resync, so a slightly early timer does not miss it.
NEXT_SCHEDULE_DELTA = timedelta(milliseconds=100)
TOO_MANY_MISSED = 100


@dataclass(frozen=True, slots=True)
class CronEvent:
    type: str
    reason: str
    message: str


@dataclass(slots=True)
class CronPlan:
    create: JSON | None = None
    delete: list[str] = field(default_factory=list)
    status: JSON | None = (
        None  # the new status, or None when it is unchanged; the created Job's ref has no uid
    )
    events: list[CronEvent] = field(default_factory=list)
    requeue_after: float | None = None  # seconds until the next run time (plus a margin)


def job_name(cronjob_name: str, scheduled: datetime, schedule: Schedule | None = None) -> str:
    """``<cronjob>-<minutes since the epoch>`` (Volcano's). A schedule that fires more than once a minute
    (``@every 10s``) would give two runs one name, so those count seconds instead."""
    stamp = int(scheduled.timestamp())
    if schedule is not None and schedule.every is not None and schedule.every < timedelta(minutes=1):
        return f"{cronjob_name}-{stamp}"
    return f"{cronjob_name}-{stamp // 60}"


def is_finished(job: Mapping[str, Any]) -> bool:
    return job_phase(job) in FINISHED_PHASES


def job_ref(job: Mapping[str, Any]) -> JSON:
    """The ObjectReference ``status.active`` holds for a Job."""
    ref = {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.JOB_KIND,
        "namespace": namespace_of(job),
        "name": name_of(job),
        "uid": uid_of(job),
        "resourceVersion": resource_version_of(job),
    }
    return {k: v for k, v in ref.items() if v}


def _parse_time(text: Any) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def build_job(
    cron_body: Mapping[str, Any], cronjob: CronJob, scheduled: datetime, schedule: Schedule
) -> JSON:
    template = cronjob_job_template(cron_body)
    annotations = dict(annotations_of(template))
    annotations[c.CRONJOB_SCHEDULED_TIMESTAMP_KEY] = rfc3339_in(scheduled, schedule.zone)
    return {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.JOB_KIND,
        "metadata": {
            "name": job_name(cronjob.name, scheduled, schedule),
            "namespace": namespace_of(cron_body),
            "labels": dict(labels_of(template)),
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": c.BATCH_API_VERSION,
                    "kind": c.CRONJOB_KIND,
                    "name": name_of(cron_body),
                    "uid": uid_of(cron_body),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": dict(cronjob_job_spec(cron_body)),
    }


def rfc3339_in(when: datetime, zone: tzinfo) -> str:
    """``when`` on the wall clock of ``zone``, in RFC 3339 as Go writes it: "Z" for a zero offset."""
    local = when.astimezone(zone).replace(microsecond=0)
    text = local.isoformat()
    return text[:-6] + "Z" if local.utcoffset() == timedelta(0) else text


def _oldest_beyond(jobs: Sequence[Mapping[str, Any]], keep: int) -> list[str]:
    ordered = sorted(jobs, key=lambda j: (creation_timestamp_of(j) or "~", name_of(j)))
    excess = len(ordered) - keep
    return [name_of(j) for j in ordered[: max(excess, 0)]]


def plan_cronjob(cron_body: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]], now: datetime) -> CronPlan:
    """One sync of one CronJob at ``now``; ``jobs`` are the Jobs it owns (controller reference)."""
    cronjob = CronJob.model_validate(cron_body)
    plan = CronPlan()
    if cronjob.metadata.deletion_timestamp is not None:
        return plan
    spec = cronjob.spec
    old: JSON = dict(cronjob_status(cron_body))
    status: JSON = dict(old)

    # 1. Finished Jobs: out of active, last success time, history limits.
    succeeded = [j for j in jobs if job_phase(j) == JobPhase.COMPLETED]
    failed = [j for j in jobs if job_phase(j) == JobPhase.FAILED]
    finish_times = [t for j in succeeded if (t := _parse_time(job_state_transition_time(j)))]
    last_success = _parse_time(cronjob_last_successful_time(cron_body))
    if finish_times and (last_success is None or max(finish_times) > last_success):
        status["lastSuccessfulTime"] = format_time(max(finish_times))
    plan.delete += _oldest_beyond(succeeded, spec.successful_jobs_history_limit)
    plan.delete += _oldest_beyond(failed, spec.failed_jobs_history_limit)

    # Volcano's events for what left ``active``: a run seen finished, a run that no longer exists.
    owned = {uid_of(j) for j in jobs}
    previous = {str(ref.get("uid")): ref for ref in cronjob_active(cron_body) if ref.get("uid")}
    for job in jobs:
        if is_finished(job) and uid_of(job) in previous:
            name = name_of(job)
            plan.events.append(
                CronEvent("Normal", "SawCompletedJob", f"Saw completed job: {name} in active, remove")
            )
    for uid, ref in previous.items():
        if uid not in owned:
            plan.events.append(
                CronEvent(
                    "Warning",
                    "StaleReference",
                    f'Active job "{ref.get("name")}" no longer exists (UID: {uid})',
                )
            )

    # 2. Active: the owned Jobs still running, oldest first (rebuilt, so a lost status write loses nothing).
    running = sorted(
        (j for j in jobs if not is_finished(j)), key=lambda j: (creation_timestamp_of(j), name_of(j))
    )
    active = [job_ref(j) for j in running]
    status["active"] = active

    def finish() -> CronPlan:
        cleaned = {k: v for k, v in status.items() if v}
        if cleaned != {k: v for k, v in old.items() if v}:
            plan.status = cleaned
        return plan

    if spec.suspend:
        return finish()
    try:
        load_zone(spec.time_zone)
    except ScheduleError as err:
        plan.events.append(
            CronEvent(
                "Warning",
                "InvalidTimeZone",
                f'Invalid time zone "{spec.time_zone}": {err}; no Job is created',
            )
        )
        return finish()
    try:
        schedule = parse_schedule(spec.schedule, spec.time_zone)
    except ScheduleError as err:
        plan.events.append(
            CronEvent("Warning", "InvalidSchedule", f"spec.schedule: {err}; no Job is created")
        )
        return finish()

    # 3. The most recent run time not yet made.
    created = cronjob.metadata.creation_timestamp or now
    last = _parse_time(cronjob_last_schedule_time(cron_body))
    earliest = last or created
    if spec.starting_deadline_seconds is not None:
        earliest = max(earliest, now - timedelta(seconds=spec.starting_deadline_seconds))
    scheduled, missed = schedule.missed(earliest, now, cap=TOO_MANY_MISSED)
    if missed > TOO_MANY_MISSED:
        plan.events.append(
            CronEvent(
                "Warning",
                "TooManyMissedTimes",
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
                "or check clock skew",
            )
        )
    if scheduled is None or (last is not None and scheduled == last):
        # Nothing due: wake up at the next run time (after ``earliest`` there is none up to now).
        following = schedule.next_after(earliest if scheduled is None else scheduled)
        plan.requeue_after = (following - now + NEXT_SCHEDULE_DELTA).total_seconds()
        return finish()
    plan.requeue_after = (schedule.next_after(scheduled) - now + NEXT_SCHEDULE_DELTA).total_seconds()
    name = job_name(cronjob.name, scheduled, schedule)
    if any(ref.get("name") == name for ref in active):
        return finish()

    # 4. Concurrency.
    if active and spec.concurrency_policy is ConcurrencyPolicy.FORBID:
        plan.events.append(
            CronEvent(
                "Warning", "ForbidConcurrent", "Skipping job creation because another job is already running"
            )
        )
        return finish()
    if active and spec.concurrency_policy is ConcurrencyPolicy.REPLACE:
        plan.events.append(CronEvent("Warning", "ReplaceConcurrent", "Replacing active job for CronJob"))
        plan.delete += [str(ref["name"]) for ref in active]
        status["active"] = []

    # 5. The run.
    plan.create = build_job(cron_body, cronjob, scheduled, schedule)
    status["active"] = [*status["active"], job_ref(plan.create)]
    status["lastScheduleTime"] = format_time(scheduled)
    return finish()
