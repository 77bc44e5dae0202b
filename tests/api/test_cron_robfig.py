"""CronJob schedules accepted, refused and run exactly as robfig/cron v3's ``ParseStandard`` (what Volcano's
webhook and controller use) would, where croniter and Vixie cron differ."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from volcano_py.api.cron_parse import parse_schedule
from volcano_py.api.cron_schedule import ScheduleError

INVALID = "schedule is not a valid cron expression; "

ACCEPTED = [
    pytest.param("? * * * *", id="question-mark-in-any-field"),
    pytest.param("*-5 * * * *", id="star-ignores-its-hyphen"),
    pytest.param("0 0 1,,2 * *", id="empty-list-entry-skipped"),
    pytest.param("0 0 , * *", id="only-commas-never-fires-but-parses"),
    pytest.param("+5 * * * *", id="atoi-takes-a-plus-sign"),
    pytest.param("007 * * * *", id="leading-zeros"),
    pytest.param("0 0 1 JAN *", id="month-name-any-case"),
    pytest.param("0 0 * * MON-fri", id="day-names-range"),
    pytest.param("5/15 * * * *", id="value-slash-step-runs-to-the-end"),
    pytest.param("*/100 * * * *", id="step-past-the-range"),
    pytest.param(" * * * * * ", id="fields-trimmed-by-go-spaces"),
    pytest.param("*\u3000* * * *\u00a0", id="unicode-spaces-split-fields"),
    pytest.param("@every -1h", id="negative-every-runs-each-second"),
    pytest.param("@every 1.s", id="go-duration-trailing-dot"),
    pytest.param("@every +1h", id="go-duration-plus-sign"),
    pytest.param("@every 2562047h", id="longest-go-duration"),
    pytest.param("0 0 31 2 *", id="never-fires-but-admitted"),
]


@pytest.mark.parametrize("schedule", ACCEPTED)
def test_robfig_accepts(schedule: str) -> None:
    parse_schedule(schedule, must_fire=False)


REFUSED = [
    pytest.param(
        "0 0 * * 7",
        "day-of-week field '7': '7' goes above 6 (Sunday is 0, not 7; use 0-6 or sun-sat)",
        id="dow-7",
    ),
    pytest.param("0 0 * * 0-7", "'0-7' goes above 6 (Sunday is 0, not 7;", id="dow-range-to-7"),
    pytest.param(
        "*/0 * * * *", "minute field '*/0': '*/0' has a step of 0 (a step is a positive number)", id="step-0"
    ),
    pytest.param("0 0 L * *", "day-of-month field 'L': 'L' is not a number (use 1-31)", id="last-day-L"),
    pytest.param("0 0 1W * *", "'1W' is not a number", id="weekday-W"),
    pytest.param("0 0 * * 1#2", "'1#2' is not a number (use 0-6 or sun-sat)", id="nth-weekday-hash"),
    pytest.param("0 0 * * monday", "'monday' is not a number", id="long-day-name"),
    pytest.param(
        "0 0 mon * *", "day-of-month field 'mon': 'mon' is not a number (use 1-31)", id="name-in-wrong-field"
    ),
    pytest.param("-1 * * * *", "minute field '-1': '-1' is missing a number (use 0-59)", id="negative"),
    pytest.param(
        "5-1 * * * *", "'5-1' starts after it ends (write the lower value first)", id="backwards-range"
    ),
    pytest.param("1-2-3 * * * *", "'1-2-3' has more than one '-'", id="two-hyphens"),
    pytest.param("1-5/2/3 * * * *", "'1-5/2/3' has more than one '/'", id="two-slashes"),
    pytest.param("0 0 0 * *", "day-of-month field '0': '0' starts below 1 (use 1-31)", id="dom-0"),
    pytest.param("0 24 * * *", "hour field '24': '24' goes above 23 (use 0-23)", id="hour-24"),
    pytest.param("* * * * * *", "'* * * * * *' has 6 fields (write five: minute hour", id="six-fields"),
    pytest.param("* * * *\x1f*", "has 4 fields", id="unit-separator-is-no-go-space"),
    pytest.param("@HOURLY", "'@HOURLY' is not a known descriptor", id="descriptor-case"),
    pytest.param("@hourly ", "'@hourly ' is not a known descriptor", id="descriptor-trailing-space"),
    pytest.param(" @hourly", "' @hourly' has 1 fields", id="descriptor-leading-space"),
    pytest.param("@reboot", "'@reboot' is not a known descriptor", id="reboot"),
    pytest.param("@every  1h", "' 1h' is not a Go duration", id="every-two-spaces"),
    pytest.param("@every 1d", "'1d' is not a Go duration", id="every-days"),
    pytest.param("@every 00", "'00' is not a Go duration", id="every-no-unit"),
    pytest.param("@every --1h", "'--1h' is not a Go duration", id="every-two-signs"),
    pytest.param("@every 2562048h", "'2562048h' is longer than a Go duration can be", id="every-overflow"),
]


@pytest.mark.parametrize(("schedule", "said"), REFUSED)
def test_robfig_refuses_with_volcanos_words_then_the_field_and_fix(schedule: str, said: str) -> None:
    with pytest.raises(ScheduleError) as raised:
        parse_schedule(schedule, must_fire=False)
    message = str(raised.value)
    assert message.startswith(INVALID + repr(schedule)), message
    assert said in message


def _runs(schedule: str, zone: str, start: str, count: int = 3) -> list[str]:
    parsed = parse_schedule(schedule, zone, must_fire=False)
    when = datetime.fromisoformat(start)
    out = []
    for _ in range(count):
        when = parsed.next_after(when)
        out.append(when.strftime("%Y-%m-%d %H:%M %a"))
    return out


# Run times taken from robfig/cron v3.0.1's SpecSchedule.Next (UTC shown).
RUNS = [
    pytest.param(
        "0 0 */1 * 1",
        "UTC",
        "2024-01-01T00:00:00+00:00",
        ["2024-01-08 00:00 Mon", "2024-01-15 00:00 Mon", "2024-01-22 00:00 Mon"],
        id="star-slash-1-keeps-the-star-so-days-AND",
    ),
    pytest.param(
        "0 0 */2 * 1",
        "UTC",
        "2024-01-01T00:00:00+00:00",
        ["2024-01-03 00:00 Wed", "2024-01-05 00:00 Fri", "2024-01-07 00:00 Sun"],
        id="star-slash-2-drops-the-star-so-days-OR",
    ),
    pytest.param(
        "0 0 ? * 1",
        "UTC",
        "2024-01-01T00:00:00+00:00",
        ["2024-01-08 00:00 Mon", "2024-01-15 00:00 Mon", "2024-01-22 00:00 Mon"],
        id="question-mark-is-a-star",
    ),
    pytest.param(
        "30 2 * * *",
        "America/New_York",
        "2026-03-07T12:00:00+00:00",
        ["2026-03-09 06:30 Mon", "2026-03-10 06:30 Tue", "2026-03-11 06:30 Wed"],
        id="run-in-the-spring-gap-is-skipped",
    ),
    pytest.param(
        "30 1 * * *",
        "America/New_York",
        "2026-11-01T04:00:00+00:00",
        ["2026-11-01 05:30 Sun", "2026-11-01 06:30 Sun", "2026-11-02 06:30 Mon"],
        id="fall-back-hour-runs-twice",
    ),
]


@pytest.mark.parametrize(("schedule", "zone", "start", "expected"), RUNS)
def test_run_times_are_robfigs(schedule: str, zone: str, start: str, expected: list[str]) -> None:
    assert _runs(schedule, zone, start) == expected


def test_a_schedule_with_an_empty_field_never_fires_where_it_must() -> None:
    with pytest.raises(ScheduleError, match="never fires"):
        parse_schedule("0 0 , * *")


def test_many_missed_runs_report_the_latest_before_now() -> None:
    hourly = parse_schedule("15 * * * *")
    latest, count = hourly.missed(
        datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 10, 7, 20, tzinfo=UTC), cap=100
    )
    assert (latest, count) == (datetime(2026, 1, 10, 7, 15, tzinfo=UTC), 101)
