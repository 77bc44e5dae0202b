"""A scheduler restart on a full cluster: seconds to caches synced and to the first bind, and RSS; JSON out.

A fresh DevCluster with ``--nodes`` KWOK nodes and ``--pods`` running pods in gangs of 10 (each gang with its
PodGroup, the pods created already bound so filling the cluster costs only the creates). The scheduler runs
as its own process; then, ``--restarts`` times: SIGKILL it, create one new pending pod with its PodGroup,
start a new scheduler and time

  synced_s       start -> /readyz answers 200 (every informer listed: nodes, pods, PodGroups, queues, ...)
  first_bind_s   start -> the new pod is bound (as a watch on it sees)

and read the new process's RSS and peak RSS once the pod is bound. The load average is printed with each
line. For comparison, Volcano's issue #5819 reports a restart on 5k nodes / 50k pods taking 8 min 17 s.

Usage: python -m benchmarks.bench_restart [--nodes 2000] [--pods 20000] [--restarts 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.benchlib.apiserver import fill
from benchmarks.benchlib.objects import api_pod, api_podgroup
from benchmarks.benchlib.procfs import rss_mib
from benchmarks.benchlib.systems import REPO, launch_volcano_py_scheduler, wait_ready
from volcano_py import log
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.kube.kinds import PODGROUPS, PODS

NAMESPACE = "restart"


def progress(message: str) -> None:
    print(f"[bench_restart] {message}", file=sys.stderr, flush=True)


async def probe(kubeconfig: str, name: str, namespace: str = NAMESPACE) -> None:
    """A new one-pod job: its PodGroup (minMember 1) and its pending pod."""
    client = KubeClient(await load_api_client(kubeconfig))
    try:
        await client.create(PODGROUPS.collection_path(namespace), api_podgroup(name, 1))
        await client.create(PODS.collection_path(namespace), api_pod(name).group(name).obj())
    finally:
        await client.close()


async def wait_bound(kubeconfig: str, name: str, within: float, namespace: str = NAMESPACE) -> float:
    """Seconds since the epoch at which the watch saw ``name`` bound."""
    client = KubeClient(await load_api_client(kubeconfig))
    try:
        path = PODS.collection_path(namespace)
        query: dict[str, str | int] = {"watch": "true", "fieldSelector": f"metadata.name={name}",
                                       "timeoutSeconds": int(within)}  # fmt: skip
        async for event in client.stream(path, query, read_timeout=within):
            if (event.get("object") or {}).get("spec", {}).get("nodeName"):
                return time.time()
        raise RuntimeError(f"pod {name} was not bound within {within}s")
    finally:
        await client.close()


def watch_bound(
    kubeconfig: str, name: str, into: dict[str, float], namespace: str = NAMESPACE, within: float = 600
) -> None:
    """``wait_bound`` on a thread of its own: ``into["at"]`` once bound, ``into`` left empty otherwise."""
    try:
        into["at"] = asyncio.run(wait_bound(kubeconfig, name, within, namespace))
    except (RuntimeError, TimeoutError, OSError) as exc:
        progress(f"{name}: {exc}")


def start_scheduler(cluster: DevCluster, log_file: Any, level: str) -> tuple[subprocess.Popen[bytes], int]:
    return launch_volcano_py_scheduler(cluster.kubeconfig, log_file, level=level)


def run(args: argparse.Namespace) -> dict[str, Any]:
    restarts: list[dict[str, Any]] = []
    with DevCluster() as cluster, open(args.scheduler_log, "wb") as log_file:
        progress(f"creating {args.nodes} nodes")
        began = time.monotonic()
        cluster.create_nodes(args.nodes, cpu="32", memory="256Gi", gpus=8, pods=110, timeout=1800)
        progress(f"{args.nodes} nodes Ready in {time.monotonic() - began:.1f}s")
        cluster.apply_crds(REPO / "crds")
        cluster.create_namespace(NAMESPACE)
        process, port = start_scheduler(cluster, log_file, args.scheduler_log_level)
        wait_ready(port, process, within=600)
        began = time.monotonic()
        asyncio.run(fill(str(cluster.kubeconfig), args.nodes, args.pods, args.concurrency, NAMESPACE))
        progress(f"{args.pods} pods created in {time.monotonic() - began:.1f}s")
        time.sleep(args.settle)  # let KWOK run them and the scheduler write their PodGroups' status
        try:
            for attempt in range(args.restarts):
                process.send_signal(signal.SIGKILL)
                process.wait(30)
                name = f"probe-{attempt}"
                asyncio.run(probe(str(cluster.kubeconfig), name))
                started_wall, started = time.time(), time.monotonic()
                process, port = start_scheduler(cluster, log_file, args.scheduler_log_level)

                # The watch for the probe runs in a thread of its own while /readyz is polled here.
                bound: dict[str, float] = {}
                watcher = threading.Thread(
                    target=watch_bound, args=(str(cluster.kubeconfig), name, bound), daemon=True
                )
                watcher.start()
                wait_ready(port, process, within=600)
                synced = time.monotonic() - started
                watcher.join(600)
                if "at" not in bound:
                    raise RuntimeError(f"{name} was not bound after the restart")
                line = {
                    "restart": attempt + 1,
                    "nodes": args.nodes,
                    "pods": args.pods + attempt,
                    "synced_s": round(synced, 2),
                    "first_bind_s": round(bound["at"] - started_wall, 2),
                    **rss_mib(process.pid),
                    "load_average": round(os.getloadavg()[0], 2),
                }
                progress(json.dumps(line))
                restarts.append(line)
        finally:
            process.terminate()
            process.wait(30)
    return {"benchmark": "restart", "nodes": args.nodes, "pods": args.pods, "cpus": os.cpu_count(),
            "restarts": restarts}  # fmt: skip


def main() -> None:
    log.configure("warning")  # logs to stderr; stdout carries the JSON alone
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64, help="creates in flight while filling")
    parser.add_argument(
        "--settle", type=float, default=30.0, help="seconds between filling and the first kill"
    )
    parser.add_argument("--scheduler-log", type=Path, default=Path("bench_restart_scheduler.log"))
    parser.add_argument("--scheduler-log-level", default="warning", help="debug shows each informer's list")
    print(json.dumps(run(parser.parse_args()), indent=2))


if __name__ == "__main__":
    main()
