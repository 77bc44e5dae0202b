"""bench_forecast at a small size: both cases reported, the forecast with an estimate for the waiting
gang and sessions run by each within its bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_forecast_reports_the_forecast_and_the_what_if() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_forecast", "--nodes", "20", "--pods", "600", "--gang", "4"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["case"] for line in lines] == ["forecast", "whatif"]
    assert all(line["sessions"] >= 1 and line["load_average"] >= 0 for line in lines)
    assert lines[0]["estimate"] is not None
