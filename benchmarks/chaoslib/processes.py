"""Our scheduler and controller as child processes the chaos run can SIGKILL or freeze at a chosen moment.

Each child's stderr (JSON log lines) is read by a thread that copies it to a log file and, when armed, signals
the child itself on the first line that matches (SIGKILL, or SIGSTOP to freeze it until ``resume``): the
signal follows the child's own progress (a bind, say) by the time it takes to read one line, not by a guess
on a clock. ``watch_for`` only notes when a line first matches (a standby's first bind after a failover).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

LogLine = Mapping[str, Any]


class Component:
    """One child process, restartable. With ``elects``, each start runs under a leader-election identity of
    its own (``<name>-<start>``), as a new pod of a Deployment would: a restarted leader must not find the
    lease still its own."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        *,
        elects: bool = False,
    ):
        self.name = name
        self.argv = list(argv)
        self.elects = elects
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.crashes = 0  # exits nobody asked for (a Deployment would restart them; ``revive`` does)
        self.supervised = True  # False while a fault stops it on purpose
        self._trigger: Callable[[LogLine], bool] | None = None
        self._signal = signal.SIGKILL
        self._fired = threading.Event()
        self.fired_line: LogLine | None = None
        self._watch: Callable[[LogLine], bool] | None = None
        self.watched_at: float | None = None  # time.monotonic() of the first line ``watch_for`` matched
        self.watched = threading.Event()  # set with ``watched_at``
        self.frozen = False
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int:
        assert self.process is not None, f"{self.name} is not started"
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        if self.alive:
            raise RuntimeError(f"{self.name} is already running (pid {self.pid})")
        identity = [f"--identity={self.name}-{self.starts + 1}"] if self.elects else []
        self.process = subprocess.Popen(
            [*self.argv, *identity],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=self.env,
        )
        self.starts += 1
        assert self.process.stderr is not None
        self._reader = threading.Thread(
            target=self._read, args=(self.process, self.process.stderr), name=f"{self.name}-log", daemon=True
        )
        self._reader.start()

    def _read(self, process: subprocess.Popen[bytes], stream: IO[bytes]) -> None:
        # Unbuffered: ``log_lines`` reads the file while the child runs.
        with self.log_path.open("ab", buffering=0) as log:
            log.write(f"--- start {self.starts} pid {process.pid} at {time.time():.3f}\n".encode())
            for raw in stream:
                log.write(raw)
                if (self._trigger is None and self._watch is None) or not raw.startswith(b"{"):
                    continue
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                with self._lock:
                    if self._trigger is not None and self._trigger(line):
                        self._trigger = None
                        os.kill(process.pid, self._signal)
                        self.frozen = self._signal == signal.SIGSTOP
                        self.fired_line = line
                        self._fired.set()
                    if self._watch is not None and self._watch(line):
                        self._watch = None
                        self.watched_at = time.monotonic()
                        self.watched.set()
            log.flush()

    def revive(self) -> bool:
        """Restart the child if it exited by itself while supervised, as a Deployment would; True then."""
        if not self.supervised or self.process is None or self.process.poll() is None:
            return False
        self.crashes += 1
        with self.log_path.open("ab") as log:
            log.write(f"--- exited by itself with code {self.process.returncode}\n".encode())
        self.wait()
        self.start()
        return True

    def kill_on(self, matches: Callable[[LogLine], bool]) -> threading.Event:
        """SIGKILL the child on its first log line for which ``matches`` is true; the event is set then."""
        return self._arm(matches, signal.SIGKILL)

    def freeze_on(self, matches: Callable[[LogLine], bool]) -> threading.Event:
        """SIGSTOP the child on its first log line for which ``matches`` is true (``resume`` wakes it)."""
        return self._arm(matches, signal.SIGSTOP)

    def _arm(self, matches: Callable[[LogLine], bool], sig: signal.Signals) -> threading.Event:
        with self._lock:
            self._fired.clear()
            self.fired_line = None
            self._signal = sig
            self._trigger = matches
        return self._fired

    def watch_for(self, matches: Callable[[LogLine], bool]) -> None:
        """Note (``watched_at``) when the child first logs a line for which ``matches`` is true."""
        with self._lock:
            self.watched_at = None
            self.watched.clear()
            self._watch = matches

    def freeze(self) -> None:
        """SIGSTOP now: the process keeps its sockets and its lease, and does nothing."""
        if self.alive:
            os.kill(self.pid, signal.SIGSTOP)
            self.frozen = True

    def resume(self) -> None:
        if self.process is not None and self.frozen:
            os.kill(self.process.pid, signal.SIGCONT)
        self.frozen = False

    @property
    def identity(self) -> str:
        """The identity of the current (or last) start."""
        return f"{self.name}-{self.starts}"

    def log_starts(self, containing: bytes = b"") -> list[tuple[str, list[LogLine]]]:
        """The JSON log lines of each start (only those ``containing`` a string), with its identity."""
        if not self.log_path.exists():
            return []
        starts: list[tuple[str, list[LogLine]]] = []
        with self.log_path.open("rb") as log:
            for raw in log:
                if raw.startswith(b"--- start "):
                    starts.append((f"{self.name}-{raw.split()[2].decode()}", []))
                elif raw.startswith(b"{") and starts and containing in raw:
                    try:
                        starts[-1][1].append(json.loads(raw))
                    except ValueError:
                        continue
        return starts

    def log_offset(self) -> int:
        """The log file's size now: what the child logs from here on starts past it."""
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def log_lines(self, since: int = 0) -> list[LogLine]:
        """The child's JSON log lines written past ``since`` (a ``log_offset``), over all its starts."""
        if not self.log_path.exists():
            return []
        with self.log_path.open("rb") as log:
            log.seek(since)
            lines = []
            for raw in log:
                if raw.startswith(b"{"):
                    try:
                        lines.append(json.loads(raw))
                    except ValueError:
                        continue
            return lines

    def fired_line_field(self, name: str) -> str:
        return str((self.fired_line or {}).get(name, "?"))

    def disarm(self) -> None:
        with self._lock:
            self._trigger = None

    def kill(self) -> None:
        """SIGKILL: no clean-up, no lease release, requests in flight cut."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.frozen = False
        self.wait()

    def wait(self, timeout: float = 30.0) -> None:
        if self.process is not None:
            self.process.wait(timeout)
        if self._reader is not None:
            self._reader.join(timeout)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL what is left after 20 seconds."""
        if self.process is None or self.process.poll() is not None:
            self.wait()
            return
        self.resume()  # a frozen child would not hear SIGTERM
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.wait()
