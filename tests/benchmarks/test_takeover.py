"""bench_controller --takeover's reading of a controller's log and its summary of the interleaved runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.benchlib.takeover import LISTED, logged_at, summary


def test_the_time_of_a_logged_event_is_read_from_its_json_line(tmp_path: Path) -> None:
    log = tmp_path / "controller.log"
    at = datetime(2026, 12, 7, 3, 8, 39, 250000, tzinfo=UTC)
    lines = [
        "not json, a library's line",
        json.dumps({"event": "became leader", "timestamp": "2026-12-07T03:08:38.000000Z"}),
        json.dumps({"event": LISTED, "timestamp": at.isoformat().replace("+00:00", "Z"), "jobs": 3}),
    ]
    log.write_text("\n".join(lines) + "\n")
    assert logged_at(log, LISTED) == at.timestamp()
    assert logged_at(log, "no such event") is None
    assert logged_at(tmp_path / "absent.log", LISTED) is None


def test_the_summary_gives_each_watch_its_medians_and_ranges_and_each_ratio_to_the_first() -> None:
    runs = [
        {"measure": measure, "watch": watch, "podgroup_s": value, "load_average": 2.0}
        for measure in ("failover", "restart")
        for watch, values in (("informer", (4.0, 5.0, 9.0)), ("kopf", (8.0, 10.0, 12.0)))
        for value in values
    ]
    out = summary(runs, ["informer", "kopf"])
    assert out["restart"]["informer"]["podgroup_s"] == {"median": 5.0, "min": 4.0, "max": 9.0}
    assert out["failover"]["kopf"]["podgroup_s"] == {"median": 10.0, "min": 8.0, "max": 12.0}
    assert out["failover"]["kopf"]["of_informer"] == {"podgroup_s": 2.0, "load_average": 1.0}
    assert "of_informer" not in out["failover"]["informer"]
