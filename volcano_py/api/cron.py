"""``batch.volcano.sh/v1alpha1`` CronJob: a Volcano Job created on a cron schedule, and the schedule itself.

The schedule grammar is the one Volcano (robfig/cron's ``ParseStandard``) accepts: five fields, or a
descriptor (``@hourly``, ``@daily``, ...), or ``@every <duration>``; ``TZ=``/``CRON_TZ=`` prefixes are refused
because the time zone belongs in ``spec.timeZone``. Times are computed in that zone (UTC when unset), so a
daily 09:00 run follows daylight-saving changes as the zone's wall clock does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, croniter
from pydantic import Field, StrictBool

from volcano_py.api import constants
from volcano_py.api.batch import JobSpec
from volcano_py.api.common import Int32, Int64, Time, VolcanoModel, crd_default, parse_duration
from volcano_py.api.messages import (
    VOLCANO_CRON_SCHEDULE_EMPTY,
    VOLCANO_CRON_SCHEDULE_INVALID,
    VOLCANO_CRON_SCHEDULE_TZ,
    VOLCANO_CRON_TIMEZONE_EMPTY,
    VOLCANO_CRON_TIMEZONE_INVALID,
    VOLCANO_CRON_TIMEZONE_LOCAL,
    VOLCANO_CRON_TIMEZONE_UNKNOWN,
    volcano_said,
)
from volcano_py.api.meta import KubeObject, ObjectMeta


class ConcurrencyPolicy(StrEnum):
    ALLOW = "Allow"
    FORBID = "Forbid"
    REPLACE = "Replace"


class CronJobTemplate(VolcanoModel):
    """The Job a run creates: its labels and annotations, and its spec."""

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: JobSpec = Field(default_factory=JobSpec)


class CronJobSpec(VolcanoModel):
    schedule: str
    time_zone: str | None = None
    starting_deadline_seconds: Int64 | None = Field(default=None, ge=0)
    concurrency_policy: ConcurrencyPolicy = crd_default(ConcurrencyPolicy.ALLOW)
    suspend: StrictBool = crd_default(False)
    job_template: CronJobTemplate
    successful_jobs_history_limit: Int32 = crd_default(3, ge=0)
    failed_jobs_history_limit: Int32 = crd_default(1, ge=0)


class ObjectReference(VolcanoModel):
    api_version: str | None = None
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    resource_version: str | None = None


class CronJobStatus(VolcanoModel):
    active: list[ObjectReference] = Field(default_factory=list)
    last_schedule_time: Time | None = None
    last_successful_time: Time | None = None


class CronJob(KubeObject):
    api_version: str = constants.BATCH_API_VERSION
    kind: str = constants.CRONJOB_KIND
    spec: CronJobSpec
    status: CronJobStatus | None = None


# --- schedules ----------------------------------------------------------------------------------------------

# robfig/cron's descriptors; ``@every`` takes a Go duration.
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_EVERY = re.compile(r"^@every\s+(\S+)$")


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be used; the message says why and how to fix it."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule in its time zone: ``next_after(t)`` is the first run strictly after ``t``."""

    expression: str
    zone: tzinfo
    every: timedelta | None = None

    def next_after(self, when: datetime) -> datetime:
        if self.every is not None:
            # robfig/cron: @every runs at whole seconds, ``every`` after the previous run.
            base = when.replace(microsecond=0)
            return (base + self.every).astimezone(UTC)
        local = when.astimezone(self.zone)
        try:
            found: datetime = croniter(self.expression, local).get_next(datetime)
        except CroniterBadDateError as err:
            raise ScheduleError(f"{self.expression!r} never fires (no such date: {err})") from None
        return found.astimezone(UTC)

    def missed(self, after: datetime, until: datetime, *, cap: int = 100) -> tuple[datetime | None, int]:
        """The latest run time in ``(after, until]`` and how many there are (counting stops past ``cap``)."""
        if self.every is not None:
            first = self.next_after(after)
            if first > until:
                return None, 0
            count = (until - first) // self.every + 1
            return first + (count - 1) * self.every, count
        latest: datetime | None = None
        count = 0
        when = self.next_after(after)
        while when <= until:
            latest, count = when, count + 1
            if count > cap:
                return self._latest_until(until), count
            when = self.next_after(when)
        return latest, count

    def _latest_until(self, until: datetime) -> datetime:
        found: datetime = croniter(self.expression, until.astimezone(self.zone)).get_prev(datetime)
        # get_prev is strictly before its base; ``until`` itself may be a run time.
        exact = self.next_after(found)
        return (exact if exact <= until else found).astimezone(UTC)


# What Volcano's webhook takes for one '/'-separated part of a zone name.
_ZONE_PART = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")
_ZONE_EXAMPLE = "name an IANA zone like 'Europe/Paris' or 'Asia/Shanghai'"


def load_zone(name: str | None) -> tzinfo:
    """The IANA zone ``name`` (UTC when None); ScheduleError, in Volcano's words then ours, for an unknown or
    malformed one."""
    if name is None:
        return UTC
    if not name:
        raise ScheduleError(
            volcano_said(VOLCANO_CRON_TIMEZONE_EMPTY, f"remove timeZone for UTC, or {_ZONE_EXAMPLE}")
        )
    # Volcano says "unknown timeZone" once per odd part, then why the whole name fails, in one sentence.
    said = [
        VOLCANO_CRON_TIMEZONE_UNKNOWN
        for part in name.split("/")
        if part in (".", "..") or part.startswith("-") or not _ZONE_PART.match(part)
    ]
    if name.lower() == "local":
        raise ScheduleError(
            volcano_said(
                " ".join([*said, VOLCANO_CRON_TIMEZONE_LOCAL]), f"{name!r} is not allowed ({_ZONE_EXAMPLE})"
            )
        )
    try:
        zone = ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            volcano_said(
                " ".join([*said, VOLCANO_CRON_TIMEZONE_INVALID]),
                f"unknown time zone {name!r} ({_ZONE_EXAMPLE})",
            )
        ) from None
    if said:
        raise ScheduleError(
            volcano_said(" ".join(said), f"{name!r} is not an IANA zone name ({_ZONE_EXAMPLE})")
        )
    return zone


def _invalid(ours: str) -> ScheduleError:
    return ScheduleError(volcano_said(VOLCANO_CRON_SCHEDULE_INVALID, ours))


def parse_schedule(expression: str, time_zone: str | None = None, *, must_fire: bool = True) -> Schedule:
    """Parse ``expression`` as Volcano does; ScheduleError (Volcano's words, then the problem and the fix) if
    it cannot. ``must_fire``: also refuse a grammatical schedule that never fires (31 February), which Volcano
    admits and its controller then reports; admission passes False."""
    zone = load_zone(time_zone)
    text = expression.strip()
    if not expression:
        raise ScheduleError(
            volcano_said(VOLCANO_CRON_SCHEDULE_EMPTY, "write a cron expression like '*/5 * * * *'")
        )
    if "TZ" in text:
        raise ScheduleError(
            volcano_said(
                VOLCANO_CRON_SCHEDULE_TZ, f"remove the prefix from {expression!r} and set spec.timeZone"
            )
        )
    if not text:
        raise _invalid("it is blank (write a cron expression like '*/5 * * * *')")
    every = _EVERY.match(text)
    if every:
        try:
            interval = parse_duration(every[1])
        except ValueError as err:
            raise _invalid(f"{expression!r}: {err}") from None
        # robfig/cron runs @every at whole seconds, at least one apart.
        interval = max(timedelta(seconds=int(interval.total_seconds())), timedelta(seconds=1))
        return Schedule(text, zone, every=interval)
    cron = _DESCRIPTORS.get(text.lower(), text)
    if cron.startswith("@"):
        known = ", ".join([*_DESCRIPTORS, "@every <duration>"])
        raise _invalid(f"{expression!r} is not a known descriptor (use one of {known})")
    fields = cron.split()
    if len(fields) != 5:
        raise _invalid(
            f"{expression!r} has {len(fields)} fields (write five: minute hour day-of-month month weekday)"
        )
    try:
        croniter(cron, datetime(2000, 1, 1, tzinfo=UTC))
    except (CroniterBadCronError, ValueError, KeyError) as err:
        raise _invalid(f"{expression!r} does not parse ({err})") from None
    schedule = Schedule(cron, zone)
    if must_fire:
        # A grammatical but impossible date (31 February) never fires; croniter would search for years first.
        schedule.next_after(datetime(2000, 1, 1, tzinfo=UTC))
    return schedule
