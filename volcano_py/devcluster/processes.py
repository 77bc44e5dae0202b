"""Child processes of a dev cluster: each in its own process group, logged to a file, stopped for certain.

Every child is a session leader, so stopping it signals its whole group (nothing it forks survives), and a
Ctrl-C at the terminal reaches only the supervisor, which then stops children in order. On Linux the children
also get SIGKILL if the thread that started them dies, so a crashed test session leaves no control plane
running. The state file records process groups with their command lines, so ``volcano-py dev down`` from
another shell stops exactly those processes and never a stranger that reused a pid.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from volcano_py.log import get_logger

log = get_logger(__name__)

STATE_FILE = "state.json"
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Runs in the child before exec: ask Linux to SIGKILL it when the parent thread exits."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class ChildRecord:
    name: str
    pid: int
    argv0: str
    log: str


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def record(self) -> ChildRecord:
        argv0 = str(self.process.args[0])  # type: ignore[index]
        return ChildRecord(name=self.name, pid=self.process.pid, argv0=argv0, log=str(self.log))

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def spawn(
    name: str,
    argv: Sequence[str],
    log_dir: Path,
    *,
    env: dict[str, str] | None = None,
    die_with_parent: bool = True,
) -> Child:
    log_path = log_dir / f"{name}.log"
    preexec: Callable[[], None] | None = (
        _die_with_parent if die_with_parent and sys.platform == "linux" else None
    )
    with log_path.open("ab") as log_file:
        process = subprocess.Popen(
            list(argv),
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=preexec,
        )
    log.debug("devcluster.spawned", component=name, pid=process.pid)
    return Child(name=name, process=process, log=log_path)


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) members of the group; in a container, orphaned zombies may never be reaped."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command name: state ppid pgrp ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def _wait_gone(pgid: int, seconds: float, reap: Callable[[], object]) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        reap()
        if not group_members(pgid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def stop_group(pgid: int, *, grace_seconds: float = 10.0, reap: Callable[[], object] = lambda: None) -> bool:
    """SIGTERM the process group, SIGKILL what is left after the grace period; True once none is left."""
    for sig, wait in ((signal.SIGTERM, grace_seconds), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        if _wait_gone(pgid, wait, reap):
            return True
    return False


def kill_group(pgid: int, *, reap: Callable[[], object] = lambda: None) -> bool:
    """SIGKILL the process group at once (a crash, not a shutdown); True once none is left."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    return _wait_gone(pgid, 5.0, reap)


def stop_children(children: Sequence[Child], *, grace_seconds: float = 10.0) -> None:
    """Stop in reverse start order: clients (kwok, schedulers, KCM) before the apiserver, it before etcd."""
    for child in reversed(children):
        if not stop_group(child.process.pid, grace_seconds=grace_seconds, reap=child.process.poll):
            log.warning("devcluster.survivor", component=child.name, pgid=child.process.pid)
        try:
            # A Go process's main thread shows as a zombie while its other threads still exit; wait for real.
            child.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            log.warning("devcluster.unreaped", component=child.name, pid=child.process.pid)


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def is_same_process(record: ChildRecord) -> bool:
    """The pid is alive and still runs the binary we started (pids get reused)."""
    return runs(record.pid, record.argv0)


def runs(pid: int, argv0: str) -> bool:
    args = cmdline(pid)
    return bool(args) and args[0] == argv0


@dataclass(frozen=True, slots=True)
class ClusterState:
    """What ``dev down`` needs to find a running cluster: the supervisor and every child."""

    supervisor_pid: int
    supervisor_argv0: str
    kubeconfig: str
    children: tuple[ChildRecord, ...]

    def write(self, run_dir: Path) -> None:
        payload = {
            "supervisor_pid": self.supervisor_pid,
            "supervisor_argv0": self.supervisor_argv0,
            "kubeconfig": self.kubeconfig,
            "children": [asdict(child) for child in self.children],
        }
        tmp = run_dir / f".{STATE_FILE}.tmp"
        tmp.write_text(json.dumps(payload, indent=2) + "\n")
        tmp.replace(run_dir / STATE_FILE)

    @classmethod
    def read(cls, run_dir: Path) -> ClusterState | None:
        path = run_dir / STATE_FILE
        if not path.exists():
            return None
        try:
            payload = json.loads(path.read_text())
            return cls(
                supervisor_pid=int(payload["supervisor_pid"]),
                supervisor_argv0=str(payload["supervisor_argv0"]),
                kubeconfig=str(payload["kubeconfig"]),
                children=tuple(ChildRecord(**child) for child in payload["children"]),
            )
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path} is not a dev cluster state file ({err}); delete it by hand") from err


def stop_recorded(run_dir: Path, *, supervisor_grace_seconds: float = 30.0) -> list[str]:
    """Stop the cluster whose state file is in ``run_dir`` (for ``dev down``); returns what was running.

    The supervisor (``dev up``) is asked first, so it stops its children in order and reaps them; any child
    still running afterwards (the supervisor was killed, or hung) is stopped here directly.
    """
    state = ClusterState.read(run_dir)
    if state is None:
        return []
    running = [child.name for child in state.children if is_same_process(child)]
    if state.supervisor_pid != os.getpid() and runs(state.supervisor_pid, state.supervisor_argv0):
        os.kill(state.supervisor_pid, signal.SIGTERM)
        deadline = time.monotonic() + supervisor_grace_seconds
        while runs(state.supervisor_pid, state.supervisor_argv0) and time.monotonic() < deadline:
            time.sleep(0.2)
    for child in reversed(state.children):
        if is_same_process(child):
            stop_group(child.pid)
    (run_dir / STATE_FILE).unlink(missing_ok=True)
    return running
