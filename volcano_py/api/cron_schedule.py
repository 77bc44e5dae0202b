"""When a CronJob's schedule runs: robfig/cron v3's next-run stepping, which Volcano's controller uses.

The controller must create a run exactly when Volcano's would, including across daylight-saving changes and
for schedules that can never fire, so the stepping is robfig's ``SpecSchedule.Next`` walked as it walks it,
not a cron library's idea of the next time. Run times are computed in the schedule's zone (UTC when unset),
so a daily 09:00 run follows daylight-saving changes as the zone's wall clock does. Reading the text of a
schedule is ``cron_parse``'s job; this module is what a parsed schedule does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Final

# Set in a field written with '*' or '?' (and no step above 1); it decides how the two day fields combine.
STAR: Final = 1 << 63
# robfig runs a spec's schedule at second 0; it gives up looking for a run five years ahead.
_YEARS_AHEAD: Final = 5


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be used; the message says why and how to fix it."""


@dataclass(frozen=True, slots=True)
class Spec:
    """The five fields as robfig keeps them: a bit per allowed value (plus ``STAR``)."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int

    def day_matches(self, local: datetime) -> bool:
        dom = bool(self.dom >> local.day & 1)
        dow = bool(self.dow >> local.isoweekday() % 7 & 1)
        if (self.dom | self.dow) & STAR:
            return dom and dow
        return dom or dow

    def can_fire(self) -> bool:
        """Whether every field allows some value; robfig would search five years to find out."""
        values = ~STAR
        days = (
            self.dom & values and self.dow & values
            if (self.dom | self.dow) & STAR
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
    spec: Spec | None = None

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
