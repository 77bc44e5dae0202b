"""bench_drain at a small size: every phase reported, each pod changed once per phase, and no cycle over
pods already bound deciding anything (the script exits non-zero if one does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_drain_reports_each_phase_of_a_small_backlog() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_drain", "--nodes", "20", "--step", "60"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["phase"] for line in lines] == ["first", "assumed", "confirmed", "running"]
    assert {line["pods_changed"] for line in lines} == {200}
    assert [line["cycles"] for line in lines] == [1, 1, 4, 4]  # 200 pods, 60 a cycle
    assert all(line["cpu_s"] > 0 and line["load_average"] >= 0 for line in lines)
