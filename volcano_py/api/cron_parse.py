"""A CronJob's schedule and time zone, read exactly as Volcano's webhook and controller read them.

The schedule grammar is exactly the one Volcano's webhook and controller take, robfig/cron v3's
``ParseStandard``: five fields split at Go's spaces, or a descriptor (``@hourly``, ``@daily``, ...), or
``@every <Go duration>``; ``TZ=``/``CRON_TZ=`` prefixes are refused (Volcano refuses any "TZ") because the
time zone belongs in ``spec.timeZone``. A schedule Volcano admits must be admitted here, and one it refuses
refused, in its words, so ``volcano-py validate`` and the webhook agree with it.

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
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from volcano_py.api.cron_schedule import STAR, Schedule, ScheduleError, Spec
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
        start, end, star = field.low, field.high, STAR
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


def _spec(expression: str, fields: list[str]) -> Spec:
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
    return Spec(*bits)


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
