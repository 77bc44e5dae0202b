"""bench_agent_attempt at a small size: both cases reported with every part, each attempt placing its pod."""

from __future__ import annotations

import json
import subprocess
import sys


def test_bench_agent_attempt_reports_both_cases() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_agent_attempt", "--nodes", "20", "--held", "40",
         "--repeat", "10"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["case"] for line in lines] == ["one-new", "one-gone"]
    for line in lines:
        assert (line["nodes"], line["held"]) == (20, 40)
        for part in ("snapshot", "session", "attempt"):
            assert 0 < line[part]["p50_ms"] <= line[part]["max_ms"]
