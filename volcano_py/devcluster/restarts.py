"""Asking a running ``volcano-py dev up`` to restart one of its components, from another shell.

Only the supervisor owns its children (it reaps them, and they die with it), so ``dev restart`` does not touch
them: it leaves a request file in the run directory and signals the supervisor (SIGUSR1), which restarts the
component in place (``DevCluster.restart``) and answers with a result file naming the request.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from volcano_py.devcluster.cluster import COMPONENTS
from volcano_py.devcluster.errors import ClusterError
from volcano_py.devcluster.processes import ClusterState, runs

REQUEST_FILE = "restart-request.json"
RESULT_FILE = "restart-result.json"
SIGNAL = signal.SIGUSR1


@dataclass(frozen=True, slots=True)
class RestartRequest:
    id: str
    component: str
    down_seconds: float = 0.0
    hard: bool = False

    def __post_init__(self) -> None:
        if self.component not in COMPONENTS:
            raise ValueError(f"component {self.component!r} is not one of {', '.join(COMPONENTS)}")
        if self.down_seconds < 0:
            raise ValueError(f"--down-seconds must be >= 0, got {self.down_seconds}")


@dataclass(frozen=True, slots=True)
class RestartResult:
    id: str
    component: str
    pid: int = 0
    seconds: float = 0.0
    error: str = ""


def _write(path: Path, payload: object) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(payload) + "\n")
    tmp.replace(path)


def take_request(run_dir: Path) -> RestartRequest | None:
    """The supervisor's side: the pending request, removed from the run directory; None if there is none."""
    path = run_dir / REQUEST_FILE
    try:
        payload = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except ValueError as err:
        path.unlink(missing_ok=True)
        raise ClusterError(f"{path} is not a restart request ({err})") from err
    path.unlink(missing_ok=True)
    try:
        return RestartRequest(**payload)
    except TypeError as err:
        raise ClusterError(f"{path} is not a restart request ({err})") from err


def answer(run_dir: Path, result: RestartResult) -> None:
    _write(run_dir / RESULT_FILE, asdict(result))


def request_restart(run_dir: Path, request: RestartRequest, *, timeout: float = 120.0) -> RestartResult:
    """Ask the ``dev up`` of ``run_dir`` to restart a component and wait for its answer.

    ClusterError when no ``dev up`` runs there, or it does not answer within ``timeout`` seconds.
    """
    state = ClusterState.read(run_dir)
    if state is None or not runs(state.supervisor_pid, state.supervisor_argv0):
        raise ClusterError(f"no `volcano-py dev up` is running from {run_dir}; start one with `dev up`")
    (run_dir / RESULT_FILE).unlink(missing_ok=True)
    _write(run_dir / REQUEST_FILE, asdict(request))
    os.kill(state.supervisor_pid, SIGNAL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            payload = json.loads((run_dir / RESULT_FILE).read_text())
        except (FileNotFoundError, ValueError):
            payload = None
        if payload is not None and payload.get("id") == request.id:
            return RestartResult(**payload)
        if not runs(state.supervisor_pid, state.supervisor_argv0):
            raise ClusterError(
                f"`dev up` (pid {state.supervisor_pid}) exited before restarting {request.component}"
            )
        time.sleep(0.2)
    raise ClusterError(f"`dev up` did not restart {request.component} within {timeout:.0f}s")


def new_request(component: str, *, down_seconds: float = 0.0, hard: bool = False) -> RestartRequest:
    return RestartRequest(uuid.uuid4().hex, component, down_seconds, hard)
