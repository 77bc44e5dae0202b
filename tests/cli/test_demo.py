"""What `volcano-py up --demo` prints as the examples run: a line per finished Job, then a closing line."""

from __future__ import annotations

from typing import Any

from volcano_py.cli.demo import finished_lines, note_finished, summary_line


def _job(name: str, phase: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "status": {"state": {"phase": phase}}}


def test_each_job_is_told_once_in_the_order_it_finished() -> None:
    finished: dict[str, tuple[str, float]] = {}
    note_finished([_job("a", "Running"), _job("b", "Completed")], finished, 12.0)
    note_finished([_job("a", "Completed"), _job("b", "Completed")], finished, 83.0)
    note_finished([_job("a", "Completed"), _job("b", "Completed")], finished, 90.0)
    assert finished_lines(finished) == [
        "  default/b Completed after 12s",
        "  default/a Completed after 1m23s",
    ]


def test_the_closing_line_counts_the_completed_and_says_where_to_look() -> None:
    jobs = [_job("a", "Completed"), _job("b", "Completed"), _job("c", "Failed")]
    assert summary_line(jobs, 305.2, "http://127.0.0.1:8090/") == (
        "2 of 3 example Jobs completed (the others: Failed) in 5m05s; "
        "look with `vcctl job list` or the dashboard at http://127.0.0.1:8090/"
    )
    assert summary_line(jobs[:2], 4.0, "") == (
        "2 of 2 example Jobs completed in 4s; look with `vcctl job list`"
    )
