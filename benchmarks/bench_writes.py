"""What one write of each kind a scheduler makes costs the API server in CPU; JSON lines on stdout.

A fresh DevCluster with Volcano's CRDs, no scheduler. For each kind of write, ``--count`` of them are sent
with ``--concurrency`` in flight, and the kube-apiserver process's CPU time over the batch (plus one second
for the watch fan-out to finish) is divided by the count:

  pod-create              a plain pending pod (the baseline every ratio is taken against)
  event-create            a core/v1 ``Scheduled`` Event, as the scheduler writes one per bound pod
  podgroup-create         a PodGroup (a custom resource)
  podgroup-status-patch   a merge patch of a PodGroup's status, as the binder writes it (phase, counters, one
                          condition); each round changes the ``running`` counter, so every patch is a change

Each kind runs ``--rounds`` times, interleaved, so a change in the machine's load touches all of them. The
lines give the CPU per write, its ratio to a pod create in the same round, the writes per second and the
load average. The API server's idle CPU (leases, controllers) is measured first and subtracted.

Usage: python -m benchmarks.bench_writes [--count 1000] [--concurrency 16] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from benchmarks.benchlib.objects import api_pod, api_podgroup
from benchmarks.benchlib.procfs import cpu_seconds
from benchmarks.benchlib.systems import REPO
from volcano_py import log
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.kube.kinds import EVENTS, PODGROUPS, PODS

SETTLE_SECONDS = 1.0


def progress(message: str) -> None:
    print(f"[bench_writes] {message}", file=sys.stderr, flush=True)


Write = Callable[[int], Awaitable[Any]]


def scheduled_event(namespace: str, name: str, pod_name: str) -> dict[str, Any]:
    stamp = "2026-01-01T00:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {"kind": "Pod", "apiVersion": "v1", "name": pod_name, "namespace": namespace},
        "type": "Normal",
        "reason": "Scheduled",
        "message": f"Successfully assigned {namespace}/{pod_name} to node-00001",
        "source": {"component": "volcano"},
        "reportingComponent": "volcano",
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


def podgroup_status(running: int) -> dict[str, Any]:
    return {
        "status": {
            "phase": "Running",
            "running": running,
            "succeeded": 0,
            "failed": 0,
            "conditions": [
                {
                    "type": "Scheduled",
                    "status": "True",
                    "reason": "tasks in gang are ready to be scheduled",
                    "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
    }


async def cpu_per_write(
    pid: int, idle_cores: float, write: Write, count: int, concurrency: int
) -> dict[str, float]:
    slots = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with slots:
            await write(i)

    cpu, began = cpu_seconds(pid), time.monotonic()
    await asyncio.gather(*(one(i) for i in range(count)))
    sent = time.monotonic()
    await asyncio.sleep(SETTLE_SECONDS)  # the watch fan-out of the last writes
    spent = cpu_seconds(pid) - cpu - idle_cores * (time.monotonic() - began)
    return {
        "apiserver_cpu_ms_each": round(1000 * spent / count, 3),
        "per_second": round(count / (sent - began), 1),
    }


def writes(client: KubeClient, ns: str, r: int) -> dict[str, Write]:
    """Round ``r``'s writes by kind, in the order they run (the PodGroups patched are the ones created)."""
    return {
        "pod-create": lambda i: client.create(PODS.collection_path(ns), api_pod(f"p{r}-{i}").obj()),
        "event-create": lambda i: client.create(
            EVENTS.collection_path(ns), scheduled_event(ns, f"e{r}-{i}", f"p{r}-{i}")
        ),
        "podgroup-create": lambda i: client.create(
            PODGROUPS.collection_path(ns), api_podgroup(f"g{r}-{i}", 20)
        ),
        "podgroup-status-patch": lambda i: client.patch(
            PODGROUPS.object_path(f"g{r}-{i}", ns), podgroup_status(r + 1)
        ),
    }


async def measure(cluster: DevCluster, args: argparse.Namespace) -> None:
    state = json.loads((cluster.layout.root / "state.json").read_text())
    pid = next(c["pid"] for c in state["children"] if c["name"] == "kube-apiserver")
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    try:
        ns = cluster.create_namespace("bench-writes")
        await asyncio.sleep(2.0)
        began = cpu_seconds(pid)
        await asyncio.sleep(5.0)
        idle = (cpu_seconds(pid) - began) / 5.0
        progress(f"kube-apiserver idle: {idle:.3f} cores")
        for r in range(args.rounds):
            baseline = 0.0
            for kind, write in writes(client, ns, r).items():
                progress(f"round {r + 1}/{args.rounds}: {args.count} x {kind}")
                figures = await cpu_per_write(pid, idle, write, args.count, args.concurrency)
                if kind == "pod-create":
                    baseline = figures["apiserver_cpu_ms_each"]
                ratio = round(figures["apiserver_cpu_ms_each"] / baseline, 2) if baseline else None
                line = {
                    "write": kind,
                    "round": r,
                    "count": args.count,
                    **figures,
                    "x_pod_create": ratio,
                    "load_average": round(os.getloadavg()[0], 2),
                }
                print(json.dumps(line), flush=True)
    finally:
        await client.close()


def main() -> None:
    log.configure("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.count < 1 or args.concurrency < 1 or args.rounds < 1:
        parser.error("--count, --concurrency and --rounds must each be at least 1")
    with DevCluster() as cluster:
        cluster.apply_crds(REPO / "crds")
        asyncio.run(measure(cluster, args))


if __name__ == "__main__":
    main()
