"""Our scheduler and controller as child processes the chaos run can SIGKILL at a chosen moment.

Each child's stderr (JSON log lines) is read by a thread that copies it to a log file and, when armed, kills
the child itself on the first line that matches: the kill follows the child's own progress (a bind, say) by
the time it takes to read one line, not by a guess on a clock.
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
    def __init__(self, name: str, argv: Sequence[str], log_path: Path, env: Mapping[str, str] | None = None):
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.crashes = 0  # exits nobody asked for (a Deployment would restart them; ``revive`` does)
        self.supervised = True  # False while a fault stops it on purpose
        self._trigger: Callable[[LogLine], bool] | None = None
        self._fired = threading.Event()
        self.fired_line: LogLine | None = None
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
        self.process = subprocess.Popen(
            self.argv,
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
        with self.log_path.open("ab") as log:
            log.write(f"--- start {self.starts} pid {process.pid} at {time.time():.3f}\n".encode())
            for raw in stream:
                log.write(raw)
                trigger = self._trigger
                if trigger is None or not raw.startswith(b"{"):
                    continue
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                with self._lock:
                    if self._trigger is not None and self._trigger(line):
                        self._trigger = None
                        os.kill(process.pid, signal.SIGKILL)
                        self.fired_line = line
                        self._fired.set()
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
        with self._lock:
            self._fired.clear()
            self.fired_line = None
            self._trigger = matches
        return self._fired

    def fired_line_field(self, name: str) -> str:
        return str((self.fired_line or {}).get(name, "?"))

    def disarm(self) -> None:
        with self._lock:
            self._trigger = None

    def kill(self) -> None:
        """SIGKILL: no clean-up, no lease release, requests in flight cut."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
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
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.wait()
