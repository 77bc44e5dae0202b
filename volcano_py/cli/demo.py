"""What ``volcano-py up --demo`` shows: the examples submitted, a live table of their Jobs, a line as each Job
reaches its final phase (with the time since the examples went in), and one closing line: how many completed,
how long it took, and where to look next."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from volcano_py import log
from volcano_py.api import constants as c
from volcano_py.api.batch import FINAL_PHASES, JobPhase
from volcano_py.api.bodies.job import job_phase, job_pod_count, job_queue, job_retry_count
from volcano_py.api.bodies.jobflow import jobflow_phase
from volcano_py.api.flow import FLOW_FINISHED_PHASES
from volcano_py.api.objects import name_of, namespace_of
from volcano_py.cli.vcctl.render import table
from volcano_py.devcluster import DevCluster, KubectlError
from volcano_py.devcluster.build import format_elapsed
from volcano_py.kube.waiting import event_within

JSON = dict[str, Any]
# How often the demo reads the Jobs again.
POLL_SECONDS = 3.0


def job_table(jobs: Sequence[JSON]) -> str:
    rows = []
    for job in sorted(jobs, key=lambda j: (namespace_of(j), name_of(j))):
        rows.append(
            [
                name_of(job),
                job_queue(job),
                job_phase(job) or JobPhase.PENDING.value,
                job_pod_count(job, "pending"),
                job_pod_count(job, "running"),
                job_pod_count(job, "succeeded"),
                job_pod_count(job, "failed"),
                job_retry_count(job),
            ]
        )
    return table(("JOB", "QUEUE", "PHASE", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "RETRIES"), rows)


def note_finished(jobs: Sequence[JSON], finished: dict[str, tuple[str, float]], seconds: float) -> None:
    """Record each Job newly in a final phase: its phase, and when (seconds since the examples went in)."""
    for job in jobs:
        key = f"{namespace_of(job)}/{name_of(job)}"
        phase = job_phase(job)
        if phase in FINAL_PHASES and key not in finished:
            finished[key] = (phase, seconds)


def finished_lines(finished: Mapping[str, tuple[str, float]]) -> list[str]:
    """One line per Job that reached a final phase, in the order they did."""
    ordered = sorted(finished.items(), key=lambda item: (item[1][1], item[0]))
    return [f"  {key} {phase} after {format_elapsed(at)}" for key, (phase, at) in ordered]


def summary_line(jobs: Sequence[JSON], seconds: float, look: str) -> str:
    """The demo's last line: how the Jobs ended, how long it took, and where to look."""
    phases = [job_phase(job) for job in jobs]
    completed = sum(p == JobPhase.COMPLETED.value for p in phases)
    others = sorted({p for p in phases if p != JobPhase.COMPLETED.value})
    ended = f"{completed} of {len(jobs)} example Jobs completed" + (
        f" (the others: {', '.join(others)})" if others else ""
    )
    where = "look with `vcctl job list`" + (f" or the dashboard at {look}" if look else "")
    return f"{ended} in {format_elapsed(seconds)}; {where}"


class LiveTable:
    """The demo's job table: redrawn in place at a terminal, printed only when it changed elsewhere.

    In place means moving the cursor up over the previous table and clearing below it, which is right only if
    nothing was written since; when a log line came in between, the table is drawn afresh below it instead.
    """

    def __init__(self, out: TextIO, *, tty: bool | None = None) -> None:
        self.out = out
        self.tty = out.isatty() if tty is None else tty
        self._last = ""
        self._log_writes = -1

    def draw(self, text: str) -> None:
        if not self.tty:
            if text != self._last:
                self.out.write("\n" + text)
        elif self._last and log.writes() == self._log_writes:
            # The table's lines plus the blank line above it; ESC[nF = up n lines, ESC[J = clear below.
            lines = self._last.count("\n") + 1
            self.out.write(f"\x1b[{lines}F\x1b[J\n" + text)
        else:
            self.out.write("\n" + text)
        self.out.flush()
        self._last = text
        self._log_writes = log.writes()


async def _submit(cluster: DevCluster, files: Sequence[Path], stop: asyncio.Event) -> None:
    for path in files:
        # The admission webhooks start with the controller: retry while they come up.
        for attempt in range(30):
            try:
                await asyncio.to_thread(cluster.kubectl, "apply", "-f", str(path))
                break
            except KubectlError as err:
                if attempt == 29 or stop.is_set():
                    raise
                if "failed calling webhook" not in str(err):
                    raise
                await event_within(stop, 1.0)


async def run_demo(
    cluster: DevCluster, files: Sequence[Path], stop: asyncio.Event, *, exit_when_done: bool, look: str
) -> None:
    """Submit the examples and show their Jobs until every one (and every JobFlow) has finished; ``look``: the
    dashboard's address, named in the closing line."""
    if not files:
        print("volcano-py up --demo: no example manifests found (see --examples)", file=sys.stderr)
        return
    began = time.monotonic()
    await _submit(cluster, files, stop)
    print(f"submitted {len(files)} example files", flush=True)
    live = LiveTable(sys.stdout)
    finished: dict[str, tuple[str, float]] = {}
    while not stop.is_set():
        jobs = (await asyncio.to_thread(cluster.get_json, "/apis/batch.volcano.sh/v1alpha1/jobs"))["items"]
        flows = (await asyncio.to_thread(cluster.get_json, f"/apis/{c.FLOW_API_VERSION}/jobflows"))["items"]
        seconds = time.monotonic() - began
        note_finished(jobs, finished, seconds)
        done = finished_lines(finished)
        live.draw(job_table(jobs) + ("\nfinished:\n" + "\n".join(done) + "\n" if done else ""))
        # A flow's later steps have no Job yet while the earlier ones run: wait for the flows too.
        flow_phases = [jobflow_phase(f) for f in flows]
        if (
            jobs
            and all(job_phase(job) in FINAL_PHASES for job in jobs)
            and all(p in FLOW_FINISHED_PHASES for p in flow_phases)
        ):
            print("all example jobs reached a final phase")
            print(summary_line(jobs, seconds, look), flush=True)
            if exit_when_done:
                stop.set()
            return
        await event_within(stop, POLL_SECONDS)
