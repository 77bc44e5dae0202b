"""What every mode of ``bench_scale`` shares: the run's ``Bench`` (its arguments, the cluster, the
control plane's pids), the names of its namespaces, progress on stderr, the stop rules a phase is held to
(``guarded``, ``wait_count``: the machine's memory and ``--deadline``) and a scheduler's cycle histogram
(``scrape``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.benchlib.apiserver import BindWatch
from benchmarks.benchlib.limits import deadline_stop, memory_stop, parse_meminfo
from benchmarks.benchlib.procfs import meminfo
from benchmarks.benchlib.stats import histogram_buckets
from volcano_py.devcluster import DevCluster

GANG = 20
FILL, HISTORY, PROBE = "scale-fill", "scale-history", "scale-probe"
CYCLE_METRIC = "volcano_e2e_scheduling_latency_milliseconds"
# The control plane's processes that do the schedulers' work; KCM and kube-scheduler only watch.
WORKERS = ("kube-apiserver", "etcd", "kwok")
QUIET_WINDOW = 10.0  # seconds over which the control plane's CPU is averaged before a backlog starts
JSON = dict[str, Any]


def progress(message: str) -> None:
    print(f"[bench_scale] {message}", file=sys.stderr, flush=True)


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


class StopPoint(Exception):
    """This point does not fit (memory, deadline): the run stops, with the reason in its JSON."""


class NotMeasured(Exception):
    """One system cannot be measured in this point (its controller did not get the backlog ready within the
    deadline): its line says why, and the run goes on with the next system, as the point still fits."""


@dataclass
class Bench:
    args: argparse.Namespace
    cluster: DevCluster
    log_file: Any
    workers: dict[str, int] = field(default_factory=dict)  # pid of each of WORKERS
    save: Callable[[], None] = lambda: None  # writes the result so far to --out
    # Backlog runs so far: each gets a namespace of its own, as the null binder runs more than once per shape
    # and a namespace of the same name, deleted just before, loses pods to the namespace controller.
    backlog_runs: int = 0
    node_names: list[str] = field(default_factory=list)  # the KWOK nodes, in the order created

    def measured(self, line: JSON) -> None:
        """One measurement made: shown as progress, and the result so far kept on disk."""
        progress(json.dumps({k: v for k, v in line.items() if k != "windows"}))
        self.save()

    @property
    def kubeconfig(self) -> Path:
        return self.cluster.kubeconfig


async def guarded(
    bench: Bench,
    work: Awaitable[Any],
    what: str,
    wanted: int,
    done: Callable[[], Awaitable[int]],
    *,
    late: type[Exception] = StopPoint,
) -> Any:
    """``work``'s result; StopPoint if the machine's memory goes above the limit meanwhile, or ``late`` if it
    is not done within ``--deadline`` (then ``done`` says how far it got)."""
    task = asyncio.ensure_future(work)
    began = time.monotonic()
    while True:
        finished, _ = await asyncio.wait({task}, timeout=5.0)
        if finished:
            return task.result()
        reason = memory_stop(parse_meminfo(meminfo()), bench.args.max_memory_used)
        stop: type[Exception] = StopPoint
        elapsed = time.monotonic() - began
        if reason is None and elapsed >= bench.args.deadline:
            reason, stop = deadline_stop(what, await done(), wanted, elapsed, bench.args.deadline), late
        if reason:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise stop(reason)


async def wait_count(
    bench: Bench, watch: BindWatch, wanted: int, within: float, alive: Iterable[subprocess.Popen[bytes]]
) -> bool:
    """Until ``wanted`` pods are bound (True), ``within`` passes or a binder exits (False); StopPoint if the
    machine's memory goes above the limit meanwhile (a scheduler's RSS grows with the backlog)."""
    deadline = time.monotonic() + within
    alive = list(alive)
    while len(watch.bound) < wanted:
        left = deadline - time.monotonic()
        if left <= 0 or any(process.poll() is not None for process in alive):
            return False
        reason = memory_stop(parse_meminfo(meminfo()), bench.args.max_memory_used)
        if reason:
            raise StopPoint(reason)
        await watch.next_change(min(left, 5.0))
    return True


def scrape(url: str | None) -> dict[float, float]:
    if url is None:
        return {}
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return histogram_buckets(response.read().decode(), CYCLE_METRIC)
    except OSError:
        return {}
