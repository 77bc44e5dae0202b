"""`volcano-py up --demo` on a fresh local cluster: every example reaches the phase it promises."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from volcano_py.api.batch import FINAL_PHASES
from volcano_py.api.flow import FLOW_FINISHED_PHASES
from volcano_py.cli.up import EXPECTED_PHASE_ANNOTATION
from volcano_py.devcluster import DevCluster, ensure_binaries

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def _kubectl(kubectl: Path, kubeconfig: str, *args: str) -> Any:
    out = subprocess.run(
        [str(kubectl), "--kubeconfig", kubeconfig, *args, "-o", "json"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return json.loads(out.stdout)


def _expected(obj: dict[str, Any]) -> str | None:
    value = obj["metadata"].get("annotations", {}).get(EXPECTED_PHASE_ANNOTATION)
    return str(value) if value else None


def test_every_example_reaches_its_promised_phase(cluster: DevCluster, tmp_path: Path) -> None:
    # `cluster` guarantees the binaries exist (or skips/fails as CI requires); `up` starts its own plane.
    kubectl = ensure_binaries()["kubectl"]
    log = (tmp_path / "up.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "volcano_py", "--log-level", "warning", "up", "--demo", "--nodes", "8",
         "--run-dir", str(tmp_path / "run"), "--examples", str(REPO / "examples"), "--dashboard-port", "0"],
        stdout=subprocess.PIPE, stderr=log, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        kubeconfig = None
        assert proc.stdout is not None
        deadline = time.monotonic() + 240
        while kubeconfig is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                pytest.fail(
                    f"volcano-py up exited with {proc.returncode}: {(tmp_path / 'up.log').read_text()}"
                )
            if line.startswith("export KUBECONFIG="):
                kubeconfig = line.split("=", 1)[1].strip()
        assert kubeconfig, "volcano-py up never printed its export KUBECONFIG line"
        dashboard = proc.stdout.readline().strip()
        assert dashboard.startswith("dashboard: http://127.0.0.1:"), dashboard
        # The rest of what up prints, read as it comes (a full pipe would stall the demo's printing).
        printed: list[str] = []
        reader = threading.Thread(target=lambda: printed.extend(iter(proc.stdout.readline, "")), daemon=True)
        reader.start()

        deadline = time.monotonic() + 300
        status: dict[str, str] = {}
        while time.monotonic() < deadline:
            jobs = _kubectl(kubectl, kubeconfig, "get", "vcjob", "-A")["items"]
            pods = _kubectl(kubectl, kubeconfig, "get", "pods", "-A")["items"]
            flows = _kubectl(kubectl, kubeconfig, "get", "jobflows", "-A")["items"]
            status = (
                {
                    f"Job/{j['metadata']['name']}": j.get("status", {}).get("state", {}).get("phase", "")
                    for j in jobs
                    if _expected(j)
                }
                | {
                    f"Pod/{p['metadata']['name']}": p.get("status", {}).get("phase", "")
                    for p in pods
                    if _expected(p)
                }
                | {
                    f"JobFlow/{f['metadata']['name']}": f.get("status", {}).get("state", {}).get("phase", "")
                    for f in flows
                    if _expected(f)
                }
            )
            expected = (
                {f"Job/{j['metadata']['name']}": _expected(j) for j in jobs if _expected(j)}
                | {f"Pod/{p['metadata']['name']}": _expected(p) for p in pods if _expected(p)}
                | {f"JobFlow/{f['metadata']['name']}": _expected(f) for f in flows if _expected(f)}
            )
            wrong = {
                k: v
                for k, v in status.items()
                if v in FINAL_PHASES | FLOW_FINISHED_PHASES and v != expected[k]
            }
            assert not wrong, f"examples ended in the wrong phase: {wrong} (expected {expected})"
            if expected and status == expected:
                break
            time.sleep(3)
        else:
            pytest.fail(f"examples did not all reach their phase in time: {status}")
        names = set(status)
        for example in (
            "gang-job",
            "mpi-job",
            "pytorch-job",
            "tensorflow-job",
            "topology-job",
            "urgent-high",
            "dra-gpu-job",
        ):
            assert f"Job/{example}" in names
        assert "Pod/plain-pod" in names
        assert "JobFlow/pipeline" in names
        # The dashboard up printed lists the same jobs.
        url = dashboard.split(" ", 1)[1]
        with urllib.request.urlopen(url + "api/overview.json", timeout=30) as answer:
            overview = json.load(answer)
        listed = {j["key"].split("/", 1)[1] for j in overview["jobs"] if j["kind"] == "Job"}
        assert {"gang-job", "mpi-job", "topology-job"} <= listed, listed
        # What a person sees at the end: a line per Job as it finished, then how many completed, how long it
        # took, and where to look.
        deadline = time.monotonic() + 30
        while (
            not any("example Jobs completed in" in line for line in printed) and time.monotonic() < deadline
        ):
            time.sleep(0.5)
        summary = next((line for line in printed if "example Jobs completed in" in line), "")
        assert "look with `vcctl job list` or the dashboard at " + url in summary, printed[-20:]
        assert any(re.match(r"\s+default/gang-job Completed after \d", line) for line in printed), printed[
            -40:
        ]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        log.close()
    assert proc.returncode == 0, (tmp_path / "up.log").read_text()[-3000:]
    leftovers = subprocess.run(["pgrep", "-f", str(tmp_path / "run")], capture_output=True, text=True).stdout
    assert not leftovers.strip(), f"processes left behind: {leftovers}"
