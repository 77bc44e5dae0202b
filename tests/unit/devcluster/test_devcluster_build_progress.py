"""A long child process reports its progress while it runs (dev build, Volcano's build, its e2e suites), and
the wait ends when it exits."""

from __future__ import annotations

import subprocess
import sys

from volcano_py.devcluster.build import wait_reporting


def test_reports_while_the_process_runs_and_returns_when_it_exits() -> None:
    reports: list[int] = []
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    wait_reporting(proc, lambda: reports.append(1), every=0.1)
    assert proc.returncode == 0
    assert len(reports) >= 2


def test_a_quick_process_is_not_reported() -> None:
    reports: list[int] = []
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    wait_reporting(proc, lambda: reports.append(1), every=30.0)
    assert proc.returncode == 0
    assert reports == []
