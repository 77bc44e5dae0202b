"""A Forbid CronJob's runs across a controller restart: none twice, none overlapping, none skipped."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.chaoslib import cron
from benchmarks.chaoslib.cron import Run

T0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()


def stamp(seconds: float) -> str:
    return datetime.fromtimestamp(T0 + seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def job(
    name: str, scheduled: float, created: float, finished: float | None, owner: str = "c"
) -> dict[str, Any]:
    state = {"phase": "Completed", "lastTransitionTime": stamp(finished)} if finished is not None else {
        "phase": "Running", "lastTransitionTime": stamp(created)}  # fmt: skip
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": stamp(created),
            "annotations": {"volcano.sh/cronjob-scheduled-timestamp": stamp(scheduled)},
            "ownerReferences": [{"kind": "CronJob", "name": owner}],
        },
        "status": {"state": state},
    }


def run(name: str, scheduled: float, created: float, finished: float | None) -> Run:
    return Run(name, T0 + scheduled, T0 + created, None if finished is None else T0 + finished)


def test_runs_are_read_from_the_jobs_the_cronjob_owns() -> None:
    jobs = [job("c-8", 8, 8, None), job("c-0", 0, 0, 6), job("other-0", 0, 0, 6, owner="other")]
    assert cron.runs_of(jobs, "c") == [run("c-0", 0, 0, 6), run("c-8", 8, 8, None)]


# Every 4 s; runs last ~6 s, so Forbid skips every other tick (4, 12, ...).
STEADY = [run("c-0", 0, 0, 6), run("c-8", 8, 8, 14), run("c-16", 16, 16, 22)]


@pytest.mark.parametrize(
    ("runs", "downtimes", "found"),
    [
        pytest.param(STEADY, [], [], id="forbid-skips-while-active"),
        pytest.param(
            [*STEADY[:2], run("c-8b", 8, 9, 15)],
            [],
            ["cron run created twice", "concurrencyPolicy Forbid broken"],
            id="a-tick-run-twice",
        ),
        pytest.param(
            [run("c-0", 0, 0, 6), run("c-4", 4, 4, 10)], [], ["concurrencyPolicy Forbid broken"],
            id="created-while-one-ran",
        ),
        pytest.param(
            [run("c-0", 0, 0, 3), run("c-12", 12, 12, 15)], [], ["cron run skipped"], id="tick-8-skipped",
        ),
        pytest.param(
            [run("c-0", 0, 0, 3), run("c-12", 12, 13, 16)], [(T0 + 5, T0 + 12)], [], id="skipped-while-down",
        ),
    ],
)  # fmt: skip
def test_a_forbid_cronjobs_runs(
    runs: list[Run], downtimes: list[tuple[float, float]], found: list[str]
) -> None:
    assert [v.invariant for v in cron.cron_runs(runs, "c", every=4, downtimes=downtimes)] == found
