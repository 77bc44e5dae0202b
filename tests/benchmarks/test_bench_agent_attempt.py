"""bench_agent_attempt at a small size: both cases reported with every part, each attempt placing its pod."""

from __future__ import annotations

from tests.benchmarks.benchrun import bench_lines


def test_bench_agent_attempt_reports_both_cases() -> None:
    lines = bench_lines("bench_agent_attempt", "--nodes", "20", "--held", "40", "--repeat", "10")
    assert [line["case"] for line in lines] == ["one-new", "one-gone"]
    for line in lines:
        assert (line["nodes"], line["held"]) == (20, 40)
        for part in ("snapshot", "session", "attempt"):
            assert 0 < line[part]["p50_ms"] <= line[part]["max_ms"]
