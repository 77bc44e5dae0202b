"""py-spy attached to one of our processes as a benchmark measures it: a flame graph or collapsed stacks."""

from __future__ import annotations

import shutil
import signal
import subprocess
from collections.abc import Iterable
from pathlib import Path

FORMATS = ("flamegraph", "raw")


def profiler(
    folder: Path | None, system: str, shape: str, process: str, pid: int, fmt: str = "flamegraph"
) -> subprocess.Popen[bytes] | None:
    """py-spy sampling one of our processes (never the null binder, nor Volcano's Go binaries) into
    ``folder/flame-<system>-<shape>.svg`` for the scheduler, ``flame-<system>-<process>-<shape>.svg`` for
    another, or ``.txt`` collapsed stacks with ``fmt="raw"`` (one line per stack and its count: easy to
    sum by frame). Only the thread holding the GIL is sampled: the session's worker thread and the event loop
    take turns at it, and a thread waiting for it costs no CPU."""
    if folder is None or system in ("null", "volcano"):
        return None
    if shutil.which("py-spy") is None:
        raise SystemExit("--profile needs py-spy on PATH: pip install py-spy")
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"flame-{system}-{shape}" if process == "scheduler" else f"flame-{system}-{process}-{shape}"
    output = folder / f"{stem}.{'txt' if fmt == 'raw' else 'svg'}"
    return subprocess.Popen(
        ["py-spy", "record", "--nonblocking", "--gil", "--rate", "50", "--pid", str(pid),
         "--format", fmt, "--output", str(output)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def stop(spies: Iterable[subprocess.Popen[bytes]]) -> None:
    """Each profiler writes its file on SIGINT; wait until they have."""
    spies = list(spies)
    for spy in spies:
        spy.send_signal(signal.SIGINT)
    for spy in spies:
        spy.wait(120)
