"""bench_forecast at a small size: both cases reported, the forecast with an estimate for the waiting
gang and sessions run by each within its bound."""

from __future__ import annotations

from tests.benchmarks.benchrun import bench_lines


def test_bench_forecast_reports_the_forecast_and_the_what_if() -> None:
    lines = bench_lines("bench_forecast", "--nodes", "20", "--pods", "600", "--gang", "4")
    assert [line["case"] for line in lines] == ["forecast", "whatif"]
    assert all(line["sessions"] >= 1 and line["load_average"] >= 0 for line in lines)
    assert lines[0]["estimate"] is not None
