"""Run a benchmark module as its users do (``python -m benchmarks.NAME`` from the repository's root) and read
the JSON lines it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def bench_lines(module: str, *args: str, timeout: float = 120) -> list[dict[str, Any]]:
    """``benchmarks.<module>``'s JSON lines; fails the test with its stderr if it exits non-zero."""
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]
