"""How each system under test starts as a process of its own (so its CPU and RSS are its own), and how a
bench knows it is ready.

``launch_*`` start a process and return at once: a bench that times a start (a restart, a backlog) starts
its clock before them. The ``wait_*`` helpers then wait for the readiness each system offers: our processes'
``/readyz`` (every informer listed), the null binder's ``ready`` line, Volcano's first cycle.
"""

from __future__ import annotations

import compileall
import functools
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from prometheus_client.parser import text_string_to_metric_families

from volcano_py.devcluster.ports import free_ports

REPO = Path(__file__).resolve().parent.parent.parent
# Volcano's controllers that act on pods: PodGroups for plain pods (pg), queue status, Jobs, and TTL cleanup.
VOLCANO_CONTROLLERS = "pg-controller,queue-controller,job-controller,gc-controller"
LogFile = IO[bytes] | int | None


def wait_until(
    url: str,
    ready: Callable[[str], bool],
    processes: dict[str, subprocess.Popen[bytes]],
    within: float = 120.0,
) -> None:
    """Until ``url`` answers 200 with a body that ``ready`` accepts; stops early if a process exits."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for name, process in processes.items():
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with code {process.returncode}; see --scheduler-log")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200 and ready(response.read().decode()):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{', '.join(processes)} not ready within {within}s ({url}); see --scheduler-log")


def wait_ready(port: int, process: subprocess.Popen[bytes], within: float = 120.0) -> None:
    """Until the process's /readyz answers 200 (caches synced)."""
    wait_until(f"http://127.0.0.1:{port}/readyz", lambda _text: True, {"the process": process}, within)


def ran_a_cycle(metrics: str) -> bool:
    """The scheduler has run a cycle (Volcano's runs one only once its caches have synced)."""
    return any(
        sample.name == "volcano_e2e_scheduling_latency_milliseconds_count" and sample.value > 0
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
    )


def wait_first_cycle(port: int, processes: dict[str, subprocess.Popen[bytes]], within: float = 120.0) -> None:
    wait_until(f"http://127.0.0.1:{port}/metrics", ran_a_cycle, processes, within)


@functools.cache
def compiled() -> None:
    """Our modules' bytecode, written once before our processes are timed, as the image's ``pip install``
    writes it: a checkout run with ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module at each
    start (a third of a second, twice that under load), which Volcano's prebuilt binaries never pay."""
    compileall.compile_dir(REPO / "volcano_py", quiet=1)


def launch_volcano_py_scheduler(
    kubeconfig: Path,
    log_file: LogFile,
    *,
    level: str = "warning",
    flags: Sequence[str] = (),
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """``volcano-py scheduler`` and the port of its /metrics and /readyz."""
    compiled()
    (port,) = free_ports(1)
    process = subprocess.Popen(
        [sys.executable, "-m", "volcano_py", "--log-level", level, "scheduler",
         "--kubeconfig", str(kubeconfig), "--no-leader-elect",
         "--metrics-port", str(port), "--metrics-host", "127.0.0.1", *flags],
        stderr=log_file, env=env, cwd=cwd,
    )  # fmt: skip
    return process, port


def launch_volcano_py_controller(
    kubeconfig: Path,
    log_file: LogFile,
    *,
    level: str = "warning",
    leader_elect: bool = False,
    flags: Sequence[str] = (),
) -> tuple[subprocess.Popen[bytes], int]:
    """``volcano-py controller`` without webhooks (Volcano runs here without its webhook-manager too); with
    ``leader_elect``, ``flags`` name its Lease."""
    compiled()
    (port,) = free_ports(1)
    process = subprocess.Popen(
        [sys.executable, "-m", "volcano_py", "--log-level", level, "controller",
         "--kubeconfig", str(kubeconfig), "--leader-elect" if leader_elect else "--no-leader-elect",
         "--webhook-port", "0", "--metrics-port", str(port), "--metrics-host", "127.0.0.1", *flags],
        stderr=log_file,
    )  # fmt: skip
    return process, port


def launch_null_binder(
    kubeconfig: Path,
    log_file: LogFile,
    *,
    bind_concurrency: int = 64,
    event_loop: str | None = None,
    scheduler_name: str = "volcano",
) -> subprocess.Popen[bytes]:
    """``benchmarks.null_binder``, run from the repository's root as every benchmark is; it prints ``ready``
    on stdout once listed (``wait_null_ready``)."""
    loop = ["--event-loop", event_loop] if event_loop else []
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.null_binder",
         "--kubeconfig", str(kubeconfig), "--bind-concurrency", str(bind_concurrency),
         "--scheduler-name", scheduler_name, *loop],
        stdout=subprocess.PIPE, stderr=log_file, cwd=REPO,
    )  # fmt: skip


def wait_null_ready(process: subprocess.Popen[bytes]) -> None:
    assert process.stdout is not None
    line = process.stdout.readline()
    if line.strip() != b"ready":
        raise RuntimeError(f"the null binder did not start (exit {process.poll()}); see --scheduler-log")


def launch_vc_scheduler(
    volcano_bin: Path,
    kubeconfig: Path,
    log_file: LogFile,
    *,
    schedule_period: float = 1.0,
    conf: Path | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """Volcano's ``vc-scheduler`` with ``conf`` (None: its built-in default conf) and the port of its
    /metrics."""
    (metrics_port, healthz_port) = free_ports(2)
    process = subprocess.Popen(
        [str(volcano_bin / "vc-scheduler"), f"--kubeconfig={kubeconfig}", "--leader-elect=false",
         f"--schedule-period={schedule_period}s", "--enable-metrics=true",
         f"--listen-address=127.0.0.1:{metrics_port}", f"--healthz-address=127.0.0.1:{healthz_port}",
         *([f"--scheduler-conf={conf}"] if conf else [])],
        stderr=log_file, stdout=log_file,
    )  # fmt: skip
    return process, metrics_port


def launch_volcano_py_agent(
    kubeconfig: Path, log_file: LogFile, *, workers: int = 1, level: str = "warning"
) -> tuple[subprocess.Popen[bytes], int]:
    """``volcano-py agent-scheduler`` and the port of its /metrics and /readyz."""
    compiled()
    (port,) = free_ports(1)
    process = subprocess.Popen(
        [sys.executable, "-m", "volcano_py", "--log-level", level, "agent-scheduler",
         "--kubeconfig", str(kubeconfig), "--no-leader-elect", "--scheduler-worker-count", str(workers),
         "--metrics-port", str(port), "--metrics-host", "127.0.0.1"],
        stderr=log_file,
    )  # fmt: skip
    return process, port


def launch_vc_agent_scheduler(
    volcano_bin: Path, kubeconfig: Path, log_file: LogFile, *, workers: int = 1
) -> subprocess.Popen[bytes]:
    """Volcano's ``vc-agent-scheduler`` with its built-in default conf."""
    (metrics_port, healthz_port) = free_ports(2)
    return subprocess.Popen(
        [str(volcano_bin / "vc-agent-scheduler"), f"--kubeconfig={kubeconfig}", "--leader-elect=false",
         f"--scheduler-worker-count={workers}", f"--listen-address=127.0.0.1:{metrics_port}",
         f"--healthz-address=127.0.0.1:{healthz_port}"],
        stderr=log_file, stdout=log_file,
    )  # fmt: skip


def launch_vc_controller_manager(
    volcano_bin: Path, kubeconfig: Path, log_file: LogFile
) -> subprocess.Popen[bytes]:
    """Volcano's ``vc-controller-manager`` with the controllers that act on pods, its defaults otherwise."""
    return subprocess.Popen(
        [str(volcano_bin / "vc-controller-manager"), f"--kubeconfig={kubeconfig}", "--leader-elect=false",
         f"--controllers={VOLCANO_CONTROLLERS}", "--enable-healthz=false"],
        stderr=log_file, stdout=log_file,
    )  # fmt: skip


def stop(processes: dict[str, subprocess.Popen[bytes]] | Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGTERM each, then wait; SIGKILL one that outlives 30 s."""
    each: Any = processes.values() if isinstance(processes, dict) else processes
    for process in each:
        if process.poll() is None:
            process.terminate()
    for process in each:
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
