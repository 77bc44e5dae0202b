"""bench_drain at a small size: every phase reported, each pod changed once per phase, and no cycle over
pods already bound deciding anything (the script exits non-zero if one does)."""

from __future__ import annotations

from tests.benchmarks.benchrun import bench_lines


def test_bench_drain_reports_each_phase_of_a_small_backlog() -> None:
    lines = bench_lines("bench_drain", "--nodes", "20", "--step", "60")
    assert [line["phase"] for line in lines] == ["first", "assumed", "confirmed", "running"]
    assert {line["pods_changed"] for line in lines} == {200}
    assert [line["cycles"] for line in lines] == [1, 1, 4, 4]  # 200 pods, 60 a cycle
    assert all(line["cpu_s"] > 0 and line["load_average"] >= 0 for line in lines)
