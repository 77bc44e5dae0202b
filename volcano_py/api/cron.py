"""``batch.volcano.sh/v1alpha1`` CronJob: a Volcano Job created on a cron schedule, and the schedule itself.

The schedule grammar is exactly the one Volcano's webhook and controller take, robfig/cron v3's
``ParseStandard``: five fields split at Go's spaces, or a descriptor (``@hourly``, ``@daily``, ...), or
``@every <Go duration>``; ``TZ=``/``CRON_TZ=`` prefixes are refused (Volcano refuses any "TZ") because the
time zone belongs in ``spec.timeZone``. Run times are robfig's too, computed in that zone (UTC when unset),
so a daily 09:00 run follows daylight-saving changes as the zone's wall clock does.

robfig is not Vixie cron, nor croniter: day-of-week stops at 6 (7 is refused; Sunday is 0), ``L``, ``W`` and
``#`` are refused, ``?`` is ``*`` in every field, a ``*`` range ignores what follows its hyphen (``*-5`` is
``*``), empty list entries are skipped (``1,,2``), descriptors are lower case and not trimmed, and the
day-of-month and day-of-week fields are ANDed when either has a ``*`` (``*/1`` included, ``*/2`` not) and ORed
otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from decimal import Decimal
from enum import StrEnum
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, StrictBool

from volcano_py.api import constants
from volcano_py.api.batch import JobSpec
from volcano_py.api.common import Int32, Int64, Time, VolcanoModel, crd_default
from volcano_py.api.gostrings import go_fields
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

# robfig's descriptors, as the five fields they stand for (matched exactly: case and spaces count).
_DESCRIPTORS: Final = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_EVERY: Final = "@every "
# A Go time.Duration (time.ParseDuration): one sign, then "0" or number-unit pairs, ASCII digits only.
_GO_DURATION: Final = re.compile(r"[+-]?(?:0|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)")
_GO_DURATION_PART: Final = re.compile(r"([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)")
_NANOS: Final = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9}
_NANOS_H: Final = 3600 * 10**9
_GO_MAX_DURATION: Final = 2**63 - 1  # nanoseconds
# Set in a field written with '*' or '?' (and no step above 1); it decides how the two day fields combine.
_STAR: Final = 1 << 63
# robfig runs a spec's schedule at second 0; it gives up looking for a run five years ahead.
_YEARS_AHEAD: Final = 5


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] stands for low + i

    @property
    def allowed(self) -> str:
        spelled = f" or {self.names[0]}-{self.names[-1]}" if self.names else ""
        return f"{self.low}-{self.high}{spelled}"


_FIELDS: Final = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day-of-month", 1, 31),
    _Field(
        "month", 1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    ),
    _Field("day-of-week", 0, 6, ("sun", "mon", "tue", "wed", "thu", "fri", "sat")),
)
_FIVE_FIELDS: Final = "minute hour day-of-month month day-of-week"


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be used; the message says why and how to fix it."""


@dataclass(frozen=True, slots=True)
class _Spec:
    """The five fields as robfig keeps them: a bit per allowed value (plus ``_STAR``)."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int

    def day_matches(self, local: datetime) -> bool:
        dom = bool(self.dom >> local.day & 1)
        dow = bool(self.dow >> local.isoweekday() % 7 & 1)
        if (self.dom | self.dow) & _STAR:
            return dom and dow
        return dom or dow

    def can_fire(self) -> bool:
        """Whether every field allows some value; robfig would search five years to find out."""
        values = ~_STAR
        days = (
            self.dom & values and self.dow & values
            if (self.dom | self.dow) & _STAR
            else (self.dom | self.dow) & values
        )
        return bool(self.minute & values and self.hour & values and self.month & values and days)


def _go_date(
    zone: tzinfo, year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    """Go's ``time.Date`` in ``zone``, as a UTC instant: out-of-range months and days carry over, and a wall
    time that does not exist or exists twice (a daylight-saving change) is resolved as Go resolves it, with
    the offset in force at the wall time read as UTC, corrected once."""
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    wall = datetime(year, month, 1, tzinfo=UTC) + timedelta(
        days=day - 1, hours=hour, minutes=minute, seconds=second
    )
    guess = wall.astimezone(zone).utcoffset() or timedelta(0)
    offset = (wall - guess).astimezone(zone).utcoffset() or timedelta(0)
    return wall - offset


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule in its time zone: ``next_after(t)`` is the first run strictly after ``t``."""

    expression: str
    zone: tzinfo
    every: timedelta | None = None
    spec: _Spec | None = None

    def next_after(self, when: datetime) -> datetime:
        if self.every is not None:
            # robfig/cron: @every runs at whole seconds, ``every`` after the previous run.
            base = when.replace(microsecond=0)
            return (base + self.every).astimezone(UTC)
        found = self._next(when)
        if found is None:
            raise ScheduleError(
                f"{self.expression!r} never fires (no date within {_YEARS_AHEAD} years has all its fields)"
            )
        return found

    def _next(self, when: datetime) -> datetime | None:
        """robfig's ``SpecSchedule.Next``: walk the wall clock forward, month, then day, hour and minute, each
        step restarting from the top when it rolls over; None where robfig returns the zero time."""
        spec = self.spec
        if spec is None or not spec.can_fire():
            return None
        zone = self.zone
        t = when.astimezone(UTC).replace(microsecond=0) + timedelta(seconds=1)
        added = False
        year_limit = t.astimezone(zone).year + _YEARS_AHEAD
        while True:
            local = t.astimezone(zone)
            if local.year > year_limit:
                return None
            wrapped = False
            while not spec.month >> local.month & 1:
                if not added:
                    added = True
                    t = _go_date(zone, local.year, local.month, 1)
                    local = t.astimezone(zone)
                t = _go_date(
                    zone, local.year, local.month + 1, local.day, local.hour, local.minute, local.second
                )
                local = t.astimezone(zone)
                if local.month == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not spec.day_matches(local):
                if not added:
                    added = True
                    t = _go_date(zone, local.year, local.month, local.day)
                    local = t.astimezone(zone)
                t = _go_date(
                    zone, local.year, local.month, local.day + 1, local.hour, local.minute, local.second
                )
                local = t.astimezone(zone)
                # A day that does not start at 00:00 (daylight saving at midnight): back to its start.
                if local.hour:
                    t += timedelta(hours=24 - local.hour) if local.hour > 12 else -timedelta(hours=local.hour)
                    local = t.astimezone(zone)
                if local.day == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not spec.hour >> local.hour & 1:
                if not added:
                    added = True
                    t = _go_date(zone, local.year, local.month, local.day, local.hour)
                t += timedelta(hours=1)
                local = t.astimezone(zone)
                if local.hour == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not spec.minute >> local.minute & 1:
                if not added:
                    added = True
                    t = t.replace(second=0)
                t += timedelta(minutes=1)
                local = t.astimezone(zone)
                if local.minute == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            if local.second:
                # Runs are at second 0: on to the next minute, and check it from the top.
                t = t.replace(second=0) + timedelta(minutes=1)
                added = True
                continue
            return t

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
        """The last run at or before ``until``, which there is: robfig only looks forward, so look forward
        from ever further back until a window holds a run."""
        window = timedelta(minutes=1)
        while True:
            latest = None
            when = self.next_after(until - window)
            while when <= until:
                latest = when
                when = self.next_after(when)
            if latest is not None:
                return latest
            window *= 2


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


def _go_duration(text: str) -> timedelta | None:
    """``time.ParseDuration``, truncated to microseconds; None where Go refuses the text."""
    if not _GO_DURATION.fullmatch(text):
        return None
    sign = -1 if text.startswith("-") else 1
    nanos = Decimal(0)
    for number, unit in _GO_DURATION_PART.findall(text.lstrip("+-")):
        nanos += Decimal(number or "0") * (_NANOS_H if unit == "h" else _NANOS[unit])
    if nanos > _GO_MAX_DURATION + (sign < 0):
        return None
    return timedelta(microseconds=sign * int(nanos // 1000))


def _every(expression: str) -> timedelta:
    text = expression[len(_EVERY) :]
    interval = _go_duration(text)
    if interval is None and _GO_DURATION.fullmatch(text):
        raise _invalid(f"{expression!r}: {text!r} is longer than a Go duration can be (at most 2562047h)")
    if interval is None:
        raise _invalid(
            f"{expression!r}: {text!r} is not a Go duration (write it like '30s', '10m' or '1h30m', with "
            "one space after @every)"
        )
    # robfig's Every: at least a second, cut to whole seconds (a negative or zero one runs every second).
    return max(timedelta(seconds=int(interval.total_seconds())), timedelta(seconds=1))


def _number(text: str, field: _Field, part: str) -> int:
    """robfig's ``parseIntOrName``: a name of the field, or ``strconv.Atoi`` (a sign allowed) >= 0."""
    lowered = text.lower()
    if lowered in field.names:
        return field.low + field.names.index(lowered)
    if not re.fullmatch(r"[+-]?[0-9]+", text) or abs(int(text)) > 2**63 - 1:
        what = f"{part!r} is missing a number" if not text else f"{text!r} is not a number"
        if text and text != part:
            what = f"{text!r} in {part!r} is not a number"
        raise ValueError(f"{what} (use {field.allowed})")
    if int(text) < 0:
        raise ValueError(f"{part!r} has the negative number {text} (use {field.allowed})")
    return int(text)


def _range_bits(part: str, field: _Field) -> int:
    """robfig's ``getRange``: ``*`` or ``?``, a value, ``a-b``, each with an optional ``/step``."""
    range_and_step = part.split("/")
    low_and_high = range_and_step[0].split("-")
    star = 0
    if low_and_high[0] in ("*", "?"):
        # Whatever follows a star's hyphen is never read.
        start, end, star = field.low, field.high, _STAR
    else:
        start = _number(low_and_high[0], field, part)
        if len(low_and_high) > 2:
            raise ValueError(f"{part!r} has more than one '-' (write a range as low-high)")
        end = _number(low_and_high[1], field, part) if len(low_and_high) == 2 else start
    step = 1
    if len(range_and_step) > 2:
        raise ValueError(f"{part!r} has more than one '/' (write a step as range/step)")
    if len(range_and_step) == 2:
        step = _number(range_and_step[1], _Field(field.name, 1, field.high), part)
        if len(low_and_high) == 1:
            end = field.high  # "5/15" is 5 to the end, every 15
        if step > 1:
            star = 0
    if start < field.low:
        raise ValueError(f"{part!r} starts below {field.low} (use {field.allowed})")
    if end > field.high:
        sunday = "Sunday is 0, not 7; " if field.name == "day-of-week" and end == 7 else ""
        raise ValueError(f"{part!r} goes above {field.high} ({sunday}use {field.allowed})")
    if start > end:
        raise ValueError(f"{part!r} starts after it ends (write the lower value first)")
    if step == 0:
        raise ValueError(f"{part!r} has a step of 0 (a step is a positive number)")
    return sum(1 << value for value in range(start, end + 1, step)) | star


def _spec(expression: str, fields: list[str]) -> _Spec:
    bits = []
    for text, field in zip(fields, _FIELDS, strict=True):
        value = 0
        try:
            # Empty list entries ("1,,2", ",5") are skipped, as robfig's FieldsFunc skips them.
            for part in (p for p in text.split(",") if p):
                value |= _range_bits(part, field)
        except ValueError as err:
            raise _invalid(f"{expression!r}: {field.name} field {text!r}: {err}") from None
        bits.append(value)
    return _Spec(*bits)


def parse_schedule(expression: str, time_zone: str | None = None, *, must_fire: bool = True) -> Schedule:
    """Parse ``expression`` as Volcano does; ScheduleError (Volcano's words, then the problem and the fix) if
    it cannot. ``must_fire``: also refuse a grammatical schedule that never fires (31 February), which Volcano
    admits and its controller then reports; admission passes False."""
    zone = load_zone(time_zone)
    if not expression:
        raise ScheduleError(
            volcano_said(VOLCANO_CRON_SCHEDULE_EMPTY, "write a cron expression like '*/5 * * * *'")
        )
    if "TZ" in expression:
        raise ScheduleError(
            volcano_said(
                VOLCANO_CRON_SCHEDULE_TZ, f"remove the prefix from {expression!r} and set spec.timeZone"
            )
        )
    if expression.startswith("@"):
        if expression.startswith(_EVERY):
            return Schedule(expression, zone, every=_every(expression))
        if expression not in _DESCRIPTORS:
            known = ", ".join([*_DESCRIPTORS, "@every <duration>"])
            raise _invalid(
                f"{expression!r} is not a known descriptor (use one of {known}, in lower case, with no "
                "spaces around it)"
            )
        fields = _DESCRIPTORS[expression].split()
    else:
        fields = go_fields(expression)
    if len(fields) != len(_FIELDS):
        raise _invalid(f"{expression!r} has {len(fields)} fields (write five: {_FIVE_FIELDS})")
    schedule = Schedule(expression, zone, spec=_spec(expression, fields))
    if must_fire:
        # Volcano admits a grammatical schedule that never fires (31 February); its controller cannot run it.
        schedule.next_after(datetime(2000, 1, 1, tzinfo=UTC))
    return schedule
