"""The agent scheduler's latency under a steady arrival of one-pod jobs, beside the null binder and Volcano's
own agent scheduler, on the local control plane with KWOK nodes; JSON on stdout, progress on stderr.

Per ``--nodes`` count a fresh DevCluster with that many KWOK nodes (32 CPUs each). In it each ``--system``
runs in turn, each as its own process, on a namespace of its own: plain pods with ``schedulerName:
agent-scheduler`` (100m CPU; KWOK completes each ``--job-seconds`` after it starts) are created at ``--rate``
pods/s for ``--seconds``. Systems: ``null`` (``null_binder.py`` for that scheduler name: the floor of this
control plane), ``volcano-py-w<N>`` (``volcano-py agent-scheduler --scheduler-worker-count N`` for each of
``--workers``) and ``volcano`` (Volcano's ``vc-agent-scheduler`` built from ``--volcano-src`` by
``build_volcano.py``, ``--volcano-workers`` workers). The null binder runs first and again last.

Reported per run: create-to-bind latency p50/p90/p99 (created: when the create call returned; bound: when
a watch first showed ``spec.nodeName``), pods bound of pods created, the system's CPU seconds and peak RSS,
and the load average; ``of_null``: each p50/p99 over the mean of the two null runs.

Usage: python -m benchmarks.bench_agent --nodes 1000 5000 --system null volcano-py volcano \\
           --volcano-src /path/to/volcano > agent.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.benchlib.apiserver import BindWatch
from benchmarks.benchlib.objects import api_pod
from benchmarks.benchlib.procfs import cpu_seconds, rss_mib
from benchmarks.benchlib.stats import percentile
from benchmarks.benchlib.systems import (
    REPO,
    launch_null_binder,
    launch_vc_agent_scheduler,
    launch_volcano_py_agent,
    stop,
    wait_null_ready,
    wait_ready,
)
from benchmarks.build_volcano import ensure_volcano
from volcano_py import log
from volcano_py.api import constants as c
from volcano_py.devcluster import COMPLETE_AFTER, DevCluster
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.kube.kinds import PODS

JSON = dict[str, Any]


def progress(message: str) -> None:
    print(f"[bench_agent] {message}", file=sys.stderr, flush=True)


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def agent_pod(name: str, job_seconds: float) -> JSON:
    """A one-pod job for the agent scheduler, which KWOK completes ``job_seconds`` after it starts."""
    return (
        api_pod(name).scheduler(c.AGENT_SCHEDULER_NAME).never_restart()
        .annotate(COMPLETE_AFTER, f"{job_seconds}s").obj()
    )  # fmt: skip


def start(system: str, args: argparse.Namespace, kubeconfig: Path, log_file: Any) -> subprocess.Popen[bytes]:
    """Start ``system`` and return once it places pods (a first pod bound, in ``warm``)."""
    if system == "null":
        binder = launch_null_binder(kubeconfig, log_file, scheduler_name=c.AGENT_SCHEDULER_NAME)
        wait_null_ready(binder)
        return binder
    if system == "volcano":
        return launch_vc_agent_scheduler(args.volcano_bin, kubeconfig, log_file, workers=args.volcano_workers)
    workers = int(system.removeprefix("volcano-py-w"))
    process, port = launch_volcano_py_agent(kubeconfig, log_file, workers=workers, level=args.log_level)
    wait_ready(port, process)
    return process


async def run_one(client: KubeClient, cluster: DevCluster, system: str, args: argparse.Namespace,
                  log_file: Any, run: int) -> JSON:  # fmt: skip
    namespace = cluster.create_namespace(f"agent-{run}")
    process = await asyncio.to_thread(start, system, args, cluster.kubeconfig, log_file)
    try:
        watch = BindWatch(client, namespace)
        watcher = await watch.from_now()
        # One pod first: a process that has listed the cluster may still be warming its first decision.
        await client.create(PODS.collection_path(namespace), agent_pod("warm", args.job_seconds))
        await wait_bound(watch, ["warm"], 120.0, process)
        cpu_before = cpu_seconds(process.pid)
        began = time.time()
        total = int(args.rate * args.seconds)

        async def create(i: int) -> None:
            name = f"p{i}"
            await client.create(PODS.collection_path(namespace), agent_pod(name, args.job_seconds))
            watch.created[name] = time.time()

        tasks = []
        for i in range(total):
            tasks.append(asyncio.create_task(create(i)))
            await asyncio.sleep(max(0.0, began + (i + 1) / args.rate - time.time()))
        await asyncio.gather(*tasks)
        await wait_bound(watch, list(watch.created), 60.0, process)
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        latencies = [(watch.bound[n] - at) * 1000 for n, at in watch.created.items() if n in watch.bound]
        bound = len(latencies)
        return {
            "system": system, "created": total, "bound": bound,
            "bind_ms_p50": round(percentile(latencies, 0.50), 1),
            "bind_ms_p90": round(percentile(latencies, 0.90), 1),
            "bind_ms_p99": round(percentile(latencies, 0.99), 1),
            "cpu_ms_per_pod": round((cpu_seconds(process.pid) - cpu_before) * 1000 / max(1, bound), 2),
            **rss_mib(process.pid), "load_average": load_average(),
        }  # fmt: skip
    finally:
        stop([process])
        # Gone before the next run starts: thousands of pods being deleted would be its background.
        await asyncio.to_thread(
            cluster.kubectl, "delete", "namespace", namespace, "--wait=true", "--timeout=300s", check=False
        )


async def wait_bound(
    watch: BindWatch, names: list[str], within: float, process: subprocess.Popen[bytes]
) -> None:
    deadline = time.monotonic() + within
    while any(n not in watch.bound for n in names):
        if time.monotonic() > deadline or process.poll() is not None:
            return
        await watch.next_change(1.0)


def with_ratios(runs: list[JSON]) -> list[JSON]:
    nulls = [r for r in runs if r["system"] == "null"]
    if not nulls:
        return runs
    base = {q: sum(r[q] for r in nulls) / len(nulls) for q in ("bind_ms_p50", "bind_ms_p99")}
    for run in runs:
        run["of_null"] = {q: round(run[q] / base[q], 2) if base[q] else None for q in base}
    return runs


async def measure(nodes: int, args: argparse.Namespace, log_file: Any) -> JSON:
    with DevCluster() as cluster:
        progress(f"creating {nodes:,} nodes")
        began = time.monotonic()
        cluster.create_nodes(nodes, cpu="32", memory="256Gi", gpus=0, pods=110, timeout=900)
        point: JSON = {"nodes": nodes, "nodes_ready_s": round(time.monotonic() - began, 1)}
        cluster.apply_crds(REPO / "crds")
        progress(f"{nodes:,} nodes Ready in {point['nodes_ready_s']}s")
        client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
        runs: list[JSON] = []
        try:
            for run, system in enumerate(args.order):
                progress(f"{nodes:,} nodes: {system}, {args.rate:g} pods/s for {args.seconds:g}s")
                line = await run_one(client, cluster, system, args, log_file, run)
                progress(json.dumps(line))
                runs.append(line)
        finally:
            await client.close()
        point["runs"] = with_ratios(runs)
        return point


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000])
    parser.add_argument("--system", nargs="+", choices=("null", "volcano-py", "volcano"),
                        default=["null", "volcano-py"])  # fmt: skip
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="volcano-py worker counts")
    parser.add_argument("--volcano-workers", type=int, default=1, help="vc-agent-scheduler's worker count")
    parser.add_argument("--volcano-src", type=Path, help="a Volcano checkout, for --system volcano")
    parser.add_argument("--rate", type=float, default=50.0, help="pods created per second")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long pods keep arriving")
    parser.add_argument("--job-seconds", type=float, default=20.0, help="each pod runs this long")
    parser.add_argument("--log", type=Path, default=Path("/tmp/bench_agent.log"), help="the systems' logs")
    parser.add_argument("--log-level", default="warning")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    if args.rate <= 0 or args.seconds <= 0 or any(w < 1 for w in args.workers):
        parser.error("--rate and --seconds must be above 0, --workers at least 1")
    args.volcano_bin = None
    if "volcano" in args.system:
        if not args.volcano_src:
            parser.error("--system volcano needs --volcano-src PATH (a checkout of volcano-sh/volcano)")
        args.volcano_bin = ensure_volcano(args.volcano_src.resolve(), ("vc-agent-scheduler",))
    order = ["null"] if "null" in args.system else []
    if "volcano-py" in args.system:
        order += [f"volcano-py-w{w}" for w in args.workers]
    if "volcano" in args.system:
        order.append("volcano")
    if "null" in args.system:
        order.append("null")
    args.order = order
    return args


def main() -> None:
    log.configure("warning")
    args = parse_args()
    result: JSON = {"benchmark": "agent", "cpus": os.cpu_count(), "rate": args.rate, "seconds": args.seconds,
                    "points": []}  # fmt: skip
    with open(args.log, "ab") as log_file:
        for nodes in args.nodes:
            result["points"].append(asyncio.run(measure(nodes, args, log_file)))
            if args.out:
                args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
