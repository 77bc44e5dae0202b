"""How fast the operator turns a burst of Jobs into pods, and how fast it takes over a full cluster; JSON on
stdout.

Applies ``--jobs`` Volcano Jobs of ``--pods-per-job`` pods at once to a fresh local control plane (etcd,
kube-apiserver, KCM, KWOK), with ``volcano-py controller`` and ``volcano-py scheduler`` running as separate
processes, and reports: seconds until every Job is Running, Jobs per second to Running, pods created per
second by the controller, and the controller's resident memory (now and peak). ``--finished-jobs`` adds a
history of Completed Jobs first.

With ``--takeover ROUNDS`` the burst's Jobs stay, running, and on that full cluster each ``--job-watch`` in
turn, ROUNDS times (A B A B), has its failover (two controllers on a Lease of 5 s / 4 s / 1 s, the settled
leader SIGKILLed) and its restart (a controller started) timed to a new Job's PodGroup and first pod, with
the CPU and RSS of the process that took over (``benchlib/takeover.py`` says what each figure is).

    python -m benchmarks.bench_controller                      # the issue's 1,000 jobs x 10 pods
    python -m benchmarks.bench_controller --jobs 200           # a quicker run
    python -m benchmarks.bench_controller --nodes 1000 --jobs 1000 --pods-per-job 4 --finished-jobs 2000 \\
        --takeover 3 --logs /tmp/takeover                       # informer and Kopf watches, interleaved
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.benchlib.history import finished_jobs
from benchmarks.benchlib.objects import container, make_job
from benchmarks.benchlib.takeover import Timing, interleaved, summary
from volcano_py import log
from volcano_py.api import constants as c
from volcano_py.controllers.job.watch import JOB_WATCHES
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import JOBS, PODGROUPS, QUEUES

REPO = Path(__file__).resolve().parents[1]
NAMESPACE = "bench"
HISTORY = "history"  # --finished-jobs
PROBES = "probe"  # the takeover's new Jobs, apart: a watch opened on them replays only them


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _job(i: int, pods: int) -> dict[str, Any]:
    main = container("main", cpu="10m", memory="16Mi")
    return make_job(f"job-{i:05d}").ns(NAMESPACE).scheduler().min_available(pods).task("w", pods, main).obj()


def _rss_kib(pid: int) -> tuple[int, int]:
    text = Path(f"/proc/{pid}/status").read_text()
    now = re.search(r"VmRSS:\s+(\d+)", text)
    peak = re.search(r"VmHWM:\s+(\d+)", text)
    return (int(now.group(1)) if now else 0, int(peak.group(1)) if peak else 0)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process: tells a busy controller from one waiting on others."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pods_created(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        text = response.read().decode()
    match = re.search(r"^volcano_controller_pods_created_total (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def _sink(logs: Path | None, name: str) -> Any:
    return (logs / name).open("wb") if logs is not None else subprocess.DEVNULL


def _wait_for_metrics(port: int, controller: subprocess.Popen[bytes], seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if controller.poll() is not None:
            raise RuntimeError(
                f"the controller exited with code {controller.returncode} before serving metrics"
            )
        try:
            _pods_created(port)
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the controller served no metrics on port {port} within {seconds:.0f}s")


async def _admit_all(client: KubeClient) -> None:
    """Stand in for the scheduler's enqueue: every Pending PodGroup becomes Inqueue."""
    listed = await client.get(PODGROUPS.collection_path(NAMESPACE))
    pending = [
        pg["metadata"]["name"]
        for pg in listed.get("items") or ()
        if (pg.get("status") or {}).get("phase") in (None, "", "Pending")
    ]
    limit = asyncio.Semaphore(32)

    async def admit(name: str) -> None:
        async with limit:
            await client.patch(PODGROUPS.object_path(name, NAMESPACE), {"status": {"phase": "Inqueue"}})

    await asyncio.gather(*(admit(name) for name in pending))


async def _running(client: KubeClient) -> int:
    listed = await client.get(JOBS.collection_path(NAMESPACE))
    phases = [((j.get("status") or {}).get("state") or {}).get("phase") for j in listed.get("items") or ()]
    return sum(1 for p in phases if p in ("Running", "Completed"))


async def _measure(
    cluster: DevCluster, args: argparse.Namespace, controller: subprocess.Popen[bytes], port: int
) -> dict[str, Any]:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    try:
        try:
            queue = {"apiVersion": c.SCHEDULING_API_VERSION, "kind": "Queue", "metadata": {"name": "default"}}
            await client.create(QUEUES.collection_path(), {**queue, "spec": {"weight": 1}})
        except ApiError as exc:
            if not exc.conflict:
                raise
        total_pods = args.jobs * args.pods_per_job
        limit = asyncio.Semaphore(32)

        async def submit(i: int) -> None:
            async with limit:
                await client.create(JOBS.collection_path(NAMESPACE), _job(i, args.pods_per_job))

        cpu_before = _cpu_seconds(controller.pid)
        started = time.monotonic()
        await asyncio.gather(*(submit(i) for i in range(args.jobs)))
        submitted = time.monotonic() - started
        pods_done_at = running_at = None
        deadline = started + args.timeout
        running = created = 0
        while time.monotonic() < deadline and (pods_done_at is None or running_at is None):
            await asyncio.sleep(1.0)
            if args.admit_only:
                await _admit_all(client)
                if pods_done_at is not None:
                    break  # nothing binds the pods in this mode: no job ever runs
            try:
                created = int(await asyncio.to_thread(_pods_created, port))
            except OSError:  # a busy controller answered late; take the next sample
                continue
            if pods_done_at is None and created >= total_pods:
                pods_done_at = time.monotonic() - started
            running = await _running(client)
            if running_at is None and running >= args.jobs:
                running_at = time.monotonic() - started
        rss, peak = _rss_kib(controller.pid)
        cpu = _cpu_seconds(controller.pid) - cpu_before
        return {
            "benchmark": "controller",
            "mode": "admit-only (no scheduler)" if args.admit_only else "with scheduler",
            "jobs": args.jobs,
            "pods_per_job": args.pods_per_job,
            "nodes": args.nodes,
            "submit_seconds": round(submitted, 2),
            "seconds_to_all_pods_created": round(pods_done_at, 2) if pods_done_at else None,
            "pods_created_per_second": round(created / pods_done_at, 1) if pods_done_at else None,
            "seconds_to_all_jobs_running": round(running_at, 2) if running_at else None,
            "jobs_per_second_to_running": round(args.jobs / running_at, 2) if running_at else None,
            "jobs_running_at_end": running,
            "pods_created_at_end": created,
            "controller_cpu_seconds": round(cpu, 1),
            "controller_rss_mib": round(rss / 1024, 1),
            "controller_peak_rss_mib": round(peak / 1024, 1),
        }
    finally:
        await client.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--pods-per-job", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=0, help="fake nodes (default: enough for 400 pods each)")
    parser.add_argument("--timeout", type=float, default=900.0, help="give up after this many seconds")
    parser.add_argument("--logs", type=Path, help="write the controller's and scheduler's logs here")
    parser.add_argument(
        "--admit-only",
        action="store_true",
        help="no scheduler: admit PodGroups directly and measure the controller's pod creation alone",
    )
    parser.add_argument("--finished-jobs", type=int, default=0, help="Completed Jobs (no pods) made first")
    parser.add_argument(
        "--takeover",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="after the burst: each --job-watch's failover and restart on the full cluster, ROUNDS times, "
        "interleaved (default 0: none)",
    )
    parser.add_argument(
        "--job-watch",
        nargs="+",
        choices=JOB_WATCHES,
        default=list(JOB_WATCHES),
        help="the controller's --job-watch values the takeover compares (default: all, the first the base)",
    )
    parser.add_argument(
        "--settle", type=float, default=10.0, help="seconds a takeover's process is left before it is read"
    )
    args = parser.parse_args()
    log.configure("warning", json=True)  # logs to stderr: stdout carries only the JSON result
    logs = args.logs
    if logs is None and args.takeover:
        logs = Path("takeover-logs")  # the takeover reads its controllers' logs
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)
    args.nodes = args.nodes or max(4, math.ceil(args.jobs * args.pods_per_job / 400))
    with DevCluster(out=sys.stderr) as cluster:
        cluster.create_nodes(args.nodes, cpu="64", memory="512Gi", pods=500, gpus=0)
        cluster.apply_crds(REPO / "crds")
        for namespace in (NAMESPACE, "volcano-system", HISTORY, PROBES):
            cluster.create_namespace(namespace)
        if args.finished_jobs:
            asyncio.run(_history(cluster, args.finished_jobs))
        port = _free_port()
        common = ["--kubeconfig", str(cluster.kubeconfig), "--no-leader-elect"]
        processes: list[subprocess.Popen[bytes]] = []
        if not args.admit_only:
            scheduler_argv = [sys.executable, "-m", "volcano_py", "scheduler", *common, "--metrics-port", "0"]
            processes.append(
                subprocess.Popen(
                    scheduler_argv, stdout=subprocess.DEVNULL, stderr=_sink(logs, "scheduler.log")
                )
            )
        # The takeover's controllers serve no webhook, so this one must leave none behind.
        webhooks = ["--webhook-port", "0"] if args.takeover else []
        controller = subprocess.Popen(
            [sys.executable, "-m", "volcano_py", "controller", *common, "--metrics-port", str(port),
             "--metrics-host", "127.0.0.1", *webhooks],
            stdout=subprocess.DEVNULL, stderr=_sink(logs, "controller.log"),
        )  # fmt: skip
        try:
            _wait_for_metrics(port, controller)
            result = asyncio.run(_measure(cluster, args, controller, port))
            result["finished_jobs"] = args.finished_jobs
            if args.takeover:
                controller.terminate()
                controller.wait(30)
                assert logs is not None
                result |= asyncio.run(_takeover(cluster, args, logs))
        finally:
            for proc in (controller, *processes):
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
    print(json.dumps(result))
    return 0


async def _history(cluster: DevCluster, jobs: int) -> None:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    try:
        await finished_jobs(client, HISTORY, jobs, 32)
    finally:
        await client.close()


async def _takeover(cluster: DevCluster, args: argparse.Namespace, logs: Path) -> dict[str, Any]:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    timing = Timing(within=args.timeout, settle=args.settle)

    def report(line: dict[str, Any]) -> None:
        print(f"[bench_controller] {json.dumps(line)}", file=sys.stderr, flush=True)

    try:
        runs = await interleaved(
            client, cluster.kubeconfig, logs, PROBES, args.job_watch, args.takeover, timing, report
        )
    finally:
        await client.close()
    lease = "/".join(f"{v:g}" for v in timing.lease)
    return {"takeover": runs, "takeover_summary": summary(runs, args.job_watch), "lease_s": lease}


if __name__ == "__main__":
    sys.exit(main())
