"""A controller taking over a full cluster, timed: a restart (a process started on it) and a failover (the
leader SIGKILLed, its standby taking the Lease). ``bench_controller.py --takeover`` runs them.

Each measure creates one new Job (the probe) as the controller that must handle it starts, or right after the
leader dies, and reports seconds from that moment to

  leading_s     (failover) the standby's ``became leader`` line: the Lease's duration, mostly
  listed_s      the taking-over process's ``jobs listed`` line: Jobs, their pods and PodGroups listed, the Job
                workers start (for a restart, Python's start-up is in it)
  podgroup_s    the probe's PodGroup, and ``pod_s`` its first pod, each as a watch opened before sees it

and the taking-over process's CPU seconds (from its start, or a standby's from the kill) until its probe
pod was seen and until ``settle`` seconds later, its RSS and peak RSS then, and a standby's RSS before. A
failover's ``term_*`` are the same moments counted from the Lease taken: what the new term itself cost.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.benchlib.objects import container, make_job
from benchmarks.benchlib.procfs import cpu_seconds, rss_mib
from benchmarks.benchlib.systems import launch_volcano_py_controller
from volcano_py.api import constants as c
from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import JOBS, PODGROUPS, PODS

JSON = dict[str, Any]
LEASE_NAMESPACE = c.VOLCANO_SYSTEM_NAMESPACE
LEADING, LISTED = "became leader", "jobs listed"


@dataclass(frozen=True, slots=True)
class Timing:
    """The Lease's duration / renew deadline / retry period (seconds), and how long a step may take."""

    lease: tuple[int, float, float] = (5, 4.0, 1.0)
    within: float = 300.0
    settle: float = 10.0


@dataclass(slots=True)
class Controller:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)


def start_controller(
    kubeconfig: Path, logs: Path, name: str, watch: str, timing: Timing, lease: str | None = None
) -> Controller:
    """A ``volcano-py controller`` of that Job watch, logging at info to ``logs/<name>.log``; with ``lease``,
    electing a leader through it."""
    flags = ["--job-watch", watch]
    if lease is not None:
        duration, deadline, retry = timing.lease
        flags += ["--lease-name", lease, "--lease-namespace", LEASE_NAMESPACE, "--identity", name,
                  "--leader-elect-lease-duration", str(duration),
                  "--leader-elect-renew-deadline", str(deadline),
                  "--leader-elect-retry-period", str(retry)]  # fmt: skip
    log = logs / f"{name}.log"
    with log.open("wb") as sink:
        process, _port = launch_volcano_py_controller(
            kubeconfig, sink, level="info", leader_elect=lease is not None, flags=flags
        )
    return Controller(name, process, log)


def logged_at(log: Path, event: str) -> float | None:
    """The time (epoch seconds) of the first line of ``log`` whose event is ``event``, if any yet."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if f'"{event}"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == event and record.get("timestamp"):
            return datetime.fromisoformat(str(record["timestamp"])).timestamp()
    return None


async def wait_logged(controller: Controller, event: str, within: float) -> float | None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        at = logged_at(controller.log, event)
        if at is not None:
            return at
        if controller.process.poll() is not None:
            raise RuntimeError(
                f"{controller.name} exited ({controller.process.returncode}); see {controller.log}"
            )
        await asyncio.sleep(0.1)
    return None


class OwnedWatch:
    """When the first object of a collection owned by the Job ``job`` is seen (opened before the Job is)."""

    def __init__(self, client: KubeClient, path: str, job: str, within: float) -> None:
        self.connected = asyncio.Event()
        self.task = asyncio.create_task(self._watch(client, path, job, within))

    async def _watch(self, client: KubeClient, path: str, job: str, within: float) -> float | None:
        query: dict[str, str | int] = {"watch": "true", "timeoutSeconds": int(within)}
        try:
            async with asyncio.timeout(within):
                async for event in client.stream(
                    path, query, read_timeout=within, connected=self.connected.set
                ):
                    refs = ((event.get("object") or {}).get("metadata") or {}).get("ownerReferences") or []
                    if any(ref.get("kind") == c.JOB_KIND and ref.get("name") == job for ref in refs):
                        return time.time()
        except TimeoutError:
            pass
        return None


def probe_job(name: str, pods: int) -> JSON:
    main = container("main", cpu="10m", memory="16Mi")
    return make_job(name).scheduler().min_available(pods).task("w", pods, main).obj()


class Probe:
    """One probe Job in ``namespace`` and the watches that time its PodGroup and first pod."""

    def __init__(self, client: KubeClient, namespace: str, name: str, within: float) -> None:
        self.client, self.namespace, self.name = client, namespace, name
        self.podgroup = OwnedWatch(client, PODGROUPS.collection_path(namespace), name, within)
        self.pod = OwnedWatch(client, PODS.collection_path(namespace), name, within)

    async def opened(self) -> None:
        await asyncio.gather(self.podgroup.connected.wait(), self.pod.connected.wait())

    async def create(self, pods: int = 4) -> None:
        await self.client.create(JOBS.collection_path(self.namespace), probe_job(self.name, pods))

    async def pod_seen(self) -> float | None:
        return await self.pod.task

    async def podgroup_seen(self) -> float | None:
        return await self.podgroup.task


def _since(at: float | None, began: float) -> float | None:
    return round(at - began, 2) if at is not None else None


async def _after_pod(probe: Probe, controller: Controller, began: float, cpu0: float, timing: Timing) -> JSON:
    """The probe's times, then the taking-over process's CPU at its pod and ``settle`` seconds later."""
    pod = await probe.pod_seen()
    cpu_at_pod = cpu_seconds(controller.process.pid) - cpu0
    podgroup = await probe.podgroup_seen()
    await asyncio.sleep(timing.settle)
    return {
        "podgroup_s": _since(podgroup, began),
        "pod_s": _since(pod, began),
        "cpu_to_pod_s": round(cpu_at_pod, 2),
        "cpu_settled_s": round(cpu_seconds(controller.process.pid) - cpu0, 2),
        **rss_mib(controller.process.pid),
    }


async def restart(
    client: KubeClient, kubeconfig: Path, logs: Path, namespace: str, name: str, watch: str, timing: Timing
) -> JSON:
    """A controller started on the full cluster, a probe Job created as it starts."""
    probe = Probe(client, namespace, f"probe-{name}", timing.within)
    await probe.opened()
    await probe.create()
    began = time.time()
    controller = start_controller(kubeconfig, logs, name, watch, timing)
    try:
        listed = await wait_logged(controller, LISTED, timing.within)
        figures = await _after_pod(probe, controller, began, 0.0, timing)
        return {"measure": "restart", "watch": watch, "listed_s": _since(listed, began), **figures}
    finally:
        controller.kill()


async def failover(
    client: KubeClient, kubeconfig: Path, logs: Path, namespace: str, name: str, watch: str, timing: Timing
) -> JSON:
    """Two controllers on one Lease; the leader, settled, SIGKILLed, a probe Job created right after."""
    lease = f"bench-{name}"
    leader = start_controller(kubeconfig, logs, f"{name}-a", watch, timing, lease)
    standby: Controller | None = None
    try:
        for event in (LEADING, LISTED):
            if await wait_logged(leader, event, timing.within) is None:
                raise RuntimeError(f"{leader.name}: no {event!r} line within {timing.within:.0f}s")
        await asyncio.sleep(timing.settle)  # it goes through the cluster's Jobs once
        standby = start_controller(kubeconfig, logs, f"{name}-b", watch, timing, lease)
        await asyncio.sleep(timing.settle)  # started, standing by
        standing = rss_mib(standby.process.pid)["rss_mib"]
        probe = Probe(client, namespace, f"probe-{name}", timing.within)
        await probe.opened()
        cpu0 = cpu_seconds(standby.process.pid)
        began = time.time()
        leader.kill()
        await probe.create()
        leading = await wait_logged(standby, LEADING, timing.within)
        listed = await wait_logged(standby, LISTED, timing.within)
        figures = await _after_pod(probe, standby, began, cpu0, timing)
        result = {
            "measure": "failover", "watch": watch, "leading_s": _since(leading, began),
            "listed_s": _since(listed, began), **figures, "standby_rss_mib": standing,
        }  # fmt: skip
        if leading is not None:  # the same moments from the Lease taken: the term's own cost
            for figure in ("listed_s", "podgroup_s", "pod_s"):
                if result[figure] is not None:
                    result[f"term_{figure}"] = round(result[figure] - (leading - began), 2)
        return result
    finally:
        for controller in (leader, standby):
            if controller is not None:
                controller.kill()


async def interleaved(
    client: KubeClient,
    kubeconfig: Path,
    logs: Path,
    namespace: str,
    watches: Sequence[str],
    rounds: int,
    timing: Timing,
    report: Callable[[JSON], None],
) -> list[JSON]:
    """``rounds`` times, each watch in turn (A B A B): its failover, then its restart; each result, with the
    load average, also to ``report`` as it comes."""
    results: list[JSON] = []
    for round_ in range(rounds):
        for watch in watches:
            for measure in (failover, restart):
                name = f"{measure.__name__}-{watch}-{round_}"
                result = await measure(client, kubeconfig, logs, namespace, name, watch, timing)
                results.append({"round": round_, **result, "load_average": round(os.getloadavg()[0], 2)})
                report(results[-1])
    return results


def summary(results: Sequence[JSON], watches: Sequence[str]) -> JSON:
    """Per measure and watch, each figure's median and range over the rounds; and each watch's median over
    the first one's."""
    out: JSON = {}
    for measure in ("failover", "restart"):
        per: dict[str, dict[str, JSON]] = {}
        for watch in watches:
            runs = [r for r in results if r["measure"] == measure and r["watch"] == watch]
            figures = [k for k in FIGURES if any(r.get(k) is not None for r in runs)]
            per[watch] = {
                k: {"median": round(statistics.median(vs), 2), "min": min(vs), "max": max(vs)}
                for k in figures
                if (vs := [r[k] for r in runs if r.get(k) is not None])
            }
        base = per[watches[0]]
        for watch in watches[1:]:
            per[watch]["of_" + watches[0]] = {
                k: round(v["median"] / base[k]["median"], 2)
                for k, v in per[watch].items()
                if k in base and base[k]["median"]
            }
        out[measure] = per
    return out


FIGURES = (
    "leading_s", "listed_s", "podgroup_s", "pod_s", "term_listed_s", "term_podgroup_s", "term_pod_s",
    "cpu_to_pod_s", "cpu_settled_s",
    "rss_mib", "peak_rss_mib", "standby_rss_mib", "load_average",
)  # fmt: skip
