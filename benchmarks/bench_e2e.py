"""End-to-end scheduling throughput on the local control plane; JSON on stdout, progress on stderr.

A fresh DevCluster with ``--nodes`` KWOK nodes and, for each ``--system``, the binding process running on
its own (so its CPU and RSS are its own): ``volcano-py`` is our scheduler; ``null`` is ``null_binder.py``,
which binds every pending pod round-robin with no policy on the same client stack, so its rate is the ceiling
of this control plane on this machine. Shapes run interleaved (each under every system before the next), and
``comparison`` gives volcano-py's pods/s as a fraction of the null binder's per shape. For each shape
``JOBSxSIZE`` (default 10000x1, 500x20, 20x500, 1x10000) ``JOBS*SIZE`` pods are created through the API (gangs
get a PodGroup with ``minMember = SIZE``; one-pod jobs are plain pods unless ``--gang-singles``). A watch on
the namespace timestamps each pod's bind as the client sees it.

Reported per shape: pods/s from the first create to the last bind, create-to-bind latency p50/p99, the
creation rate alone (the API server's ceiling here), and CPU seconds used meanwhile by the scheduler,
kube-apiserver, etcd and kwok (where the time goes), the binding process's peak RSS, and ``api_per_pod``:
the API server's requests (by verb and resource) and watch events sent (by kind) per pod, from its own
counters, so a difference between systems names the writes and watches one of them adds. The counters are
read once those writes have settled after the last bind (the next shape starts clean, and a write counts
whether it lands before or after the last bind). ``--repeat N`` runs every shape N times, each system in
each repeat; ``comparison`` then gives the median ratio and every ratio, since one sample of a shape moves
by 10-20% on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.benchlib.apiserver import api_counts, clear, per_pod
from benchmarks.benchlib.objects import api_pod, api_podgroup
from benchmarks.benchlib.procfs import cpu_seconds, peak_rss_mib
from benchmarks.benchlib.profiling import FORMATS as PROFILE_FORMATS
from benchmarks.benchlib.profiling import profiler
from benchmarks.benchlib.profiling import stop as stop_profilers
from benchmarks.benchlib.stats import percentile
from benchmarks.benchlib.systems import (
    REPO,
    launch_null_binder,
    launch_vc_controller_manager,
    launch_vc_scheduler,
    launch_volcano_py_controller,
    launch_volcano_py_scheduler,
    wait_first_cycle,
    wait_null_ready,
    wait_ready,
)
from benchmarks.build_volcano import ensure_volcano
from volcano_py import log
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.eventloop import DEFAULT_EVENT_LOOP, EVENT_LOOPS
from volcano_py.kube.kinds import PODGROUPS, PODS
from volcano_py.kube.waiting import event_within

PROFILE_SLICE_SECONDS = 5


def progress(message: str) -> None:
    print(f"[bench_e2e] {message}", file=sys.stderr, flush=True)


def _writes(counts: dict[str, float]) -> float:
    return sum(v for k, v in counts.items() if k.split(" ")[0] in ("POST", "PATCH", "PUT", "DELETE")
               and not k.endswith(" leases"))  # fmt: skip


async def settled(cluster: DevCluster, within: float = 120.0) -> tuple[dict[str, float], float]:
    """The counters once the writes that follow the last bind (Events, PodGroup status, KWOK's pod status)
    have stopped, and how long that took: the next shape must not pay for this one's backlog, and a write
    per pod counts whether it lands before or after the last bind."""
    began = time.monotonic()
    counts = api_counts(cluster)
    while time.monotonic() - began < within:
        await asyncio.sleep(2.0)
        again = api_counts(cluster)
        if _writes(again) == _writes(counts):
            return again, round(time.monotonic() - began, 1)
        counts = again
    return counts, round(time.monotonic() - began, 1)


def per_second(stamps: Iterable[float], start: float, seconds: int | None = None) -> list[int]:
    """How many of ``stamps`` fall in each whole second from ``start`` (up to the last, or ``seconds``)."""
    offsets = [int(t - start) for t in stamps if t >= start]
    counts = [0] * (seconds if seconds is not None else max(offsets, default=-1) + 1)
    for offset in offsets:
        if offset < len(counts):
            counts[offset] += 1
    return counts


async def apiserver_profiles(cluster: DevCluster, folder: Path, stem: str, done: asyncio.Event) -> None:
    """Back-to-back CPU profiles of kube-apiserver (``/debug/pprof/profile``) until ``done``: what the API
    server spends its CPU on while a system binds a shape. ``go tool pprof -top FILES`` merges them."""
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    part = 0
    while not done.is_set():
        fetch = await asyncio.create_subprocess_exec(
            str(cluster.kubectl_binary), f"--kubeconfig={cluster.kubeconfig}",
            "get", "--raw", f"/debug/pprof/profile?seconds={PROFILE_SLICE_SECONDS}",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        data, _ = await fetch.communicate()
        await asyncio.to_thread((folder / f"{stem}-{part:02d}.pb.gz").write_bytes, data)
        part += 1


async def run_shape(client: KubeClient, cluster: DevCluster, pids: dict[str, int], jobs: int, size: int,
                    gang_singles: bool, concurrency: int, system: str,
                    repeat: int = 0, pprof: Path | None = None) -> dict[str, Any]:  # fmt: skip
    namespace = cluster.create_namespace(f"bench-{jobs}x{size}-{system}-{repeat}")
    total = jobs * size
    created: dict[str, float] = {}
    bound: dict[str, float] = {}
    all_bound = asyncio.Event()

    async def watch() -> None:
        path = PODS.collection_path(namespace)
        query: dict[str, str | int] = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "resourceVersion": "0",
            "timeoutSeconds": 3600,
        }
        while True:
            try:
                async for event in client.stream(path, query, read_timeout=3600):
                    obj = event.get("object", {})
                    if event.get("type") == "ERROR":
                        raise RuntimeError(f"watch error: {obj}")
                    query["resourceVersion"] = obj.get("metadata", {}).get("resourceVersion", "0")
                    if obj.get("spec", {}).get("nodeName"):
                        name = obj["metadata"]["name"]
                        bound.setdefault(name, time.time())
                        if len(bound) >= total:
                            all_bound.set()
                            return
            except Exception as exc:  # the measurement must survive a dropped watch: resume it
                progress(f"watch dropped ({exc!r}); resuming")
                await asyncio.sleep(0.2)

    timeline: list[dict[str, float]] = []

    async def sample_cpu() -> None:
        # Cores used by each process in each second: which one is saturated in which phase (creation, tail).
        own = {**pids, "bench": os.getpid()}
        last = {name: cpu_seconds(pid) for name, pid in own.items()}
        while True:
            await asyncio.sleep(1.0)
            now = {name: cpu_seconds(pid) for name, pid in own.items()}
            timeline.append({name: round(now[name] - last[name], 2) for name in own})
            last = now

    watcher = asyncio.create_task(watch())
    profiles = (
        asyncio.create_task(apiserver_profiles(cluster, pprof, f"{jobs}x{size}-{system}-{repeat}", all_bound))
        if pprof is not None
        else None
    )
    await asyncio.sleep(0.5)
    counts_before = api_counts(cluster)
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    gang = size > 1 or gang_singles
    work: asyncio.Queue[tuple[int, int]] = asyncio.Queue()
    for j in range(jobs):
        for i in range(size):
            work.put_nowait((j, i))

    async def creator() -> None:
        while not work.empty():
            j, i = work.get_nowait()
            group = f"job{j}" if gang else None
            if gang and i == 0:
                await client.create(PODGROUPS.collection_path(namespace), api_podgroup(f"job{j}", size))
            name = f"job{j}-{i}"
            while True:
                try:
                    await client.create(PODS.collection_path(namespace), api_pod(name).group(group).obj())
                    break
                except ApiError as exc:
                    if exc.status not in (429, 500, 503, 504):
                        raise
                    await asyncio.sleep(0.1)
            created[name] = time.time()

    # Members of one gang must not be created before its PodGroup: one creator per gang when gangs are large.
    started = time.time()
    sampler = asyncio.create_task(sample_cpu())
    if gang and size > 1:

        async def gang_creator(j: int) -> None:
            group = f"job{j}"
            await client.create(PODGROUPS.collection_path(namespace), api_podgroup(group, size))
            names = [f"job{j}-{i}" for i in range(size)]
            slots = asyncio.Semaphore(max(1, concurrency // min(jobs, concurrency)))

            async def one(name: str) -> None:
                async with slots:
                    await client.create(PODS.collection_path(namespace), api_pod(name).group(group).obj())
                    created[name] = time.time()

            await asyncio.gather(*(one(n) for n in names))

        gang_slots = asyncio.Semaphore(concurrency)

        async def limited(j: int) -> None:
            async with gang_slots:
                await gang_creator(j)

        await asyncio.gather(*(limited(j) for j in range(jobs)))
    else:
        await asyncio.gather(*(creator() for _ in range(concurrency)))
    creates_done = time.time()
    progress(f"{jobs}x{size}: {total} pods created in {creates_done - started:.1f}s")
    if not await event_within(all_bound, max(120.0, total / 20)):
        progress(f"{jobs}x{size}: only {len(bound)}/{total} bound before the timeout")
    watcher.cancel()
    sampler.cancel()
    await asyncio.gather(watcher, sampler, return_exceptions=True)
    if profiles is not None:
        all_bound.set()
        await profiles  # the slice under way ends within PROFILE_SLICE_SECONDS
    after = {name: cpu_seconds(pid) for name, pid in pids.items()}
    counts_after, settle_seconds = await settled(cluster)
    requests_per_pod = per_pod(counts_before, counts_after, total)
    first_create = min(created.values())
    last_bind = max(bound.values()) if bound else time.time()
    latencies = [(bound[n] - created[n]) * 1000 for n in bound if n in created]
    last_create = max(created.values())
    first_bind_after = min((t for t in bound.values() if t > last_create), default=None)
    created_each = per_second(created.values(), started, len(timeline))
    bound_each = per_second(bound.values(), started, len(timeline))
    result = {
        "shape": f"{jobs}x{size}",
        "gang": gang,
        "pods": total,
        "bound": len(bound),
        "seconds_first_create_to_last_bind": round(last_bind - first_create, 2),
        # For gangs the last binds can only follow the last creates: this tail is what the scheduler adds.
        "seconds_last_create_to_last_bind": round(last_bind - last_create, 2),
        # Where the tail goes: the wait for the first bind after the last create (the session that places
        # the last gangs), then binds per second in each second after it.
        "seconds_last_create_to_first_bind_after": (
            round(first_bind_after - last_create, 2) if first_bind_after is not None else None
        ),
        "tail_binds_per_second": per_second((t for t in bound.values() if t > last_create), last_create),
        "pods_per_second": round(len(bound) / max(1e-9, last_bind - first_create), 1),
        "create_rate_pods_per_second": round(total / max(1e-9, creates_done - started), 1),
        "create_to_bind_ms_p50": round(percentile(latencies, 0.50), 1),
        "create_to_bind_ms_p99": round(percentile(latencies, 0.99), 1),
        "cpu_seconds": {name: round(after[name] - before[name], 2) for name in pids},
        "scheduler_peak_rss_mib": round(peak_rss_mib(pids["scheduler"]), 1),
        # Per second from the first create: each process's cores, and how many pods were created and bound.
        "cpu_timeline": [
            {**cores, "created": created_each[i], "bound": bound_each[i]} for i, cores in enumerate(timeline)
        ],
        "api_per_pod": requests_per_pod,
        "settle_seconds_after_last_bind": settle_seconds,
    }
    await clear(client, cluster, namespace)
    return result


# volcano-py with one setting changed, to weigh that setting in one run: the flags each variant adds.
VARIANTS: dict[str, list[str]] = {
    "volcano-py-asyncio": ["--event-loop", "asyncio"],
    "volcano-py-fixed-period": ["--burst-quiet", "0"],
}
SYSTEMS = ("null", "volcano-py", *VARIANTS, "volcano-py-before", "volcano-py-deployed", "volcano")


def start_system(
    system: str, args: argparse.Namespace, cluster: DevCluster, log_file: Any
) -> dict[str, subprocess.Popen[bytes]]:
    """Start the processes of ``system`` (``scheduler``, and for Volcano its ``vc-controller-manager``) and
    return once they are ready to bind (start-up not measured)."""
    if system == "volcano":
        return start_volcano(args, cluster, log_file)
    if system == "null":
        binder = launch_null_binder(
            cluster.kubeconfig, log_file, bind_concurrency=args.bind_concurrency, event_loop=args.event_loop
        )
        wait_null_ready(binder)
        return {"scheduler": binder}
    env = dict(os.environ)
    cwd = None
    if system == "volcano-py-before":
        # The scheduler of another checkout, same flags. ``python -m`` puts its working directory first on
        # sys.path, ahead of PYTHONPATH, so it must start in that checkout too.
        env["PYTHONPATH"] = cwd = str(args.before_tree)
        imported = subprocess.run(
            [sys.executable, "-c", "import volcano_py; print(volcano_py.__file__)"],
            cwd=cwd, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        if not Path(imported).resolve().is_relative_to(Path(cwd).resolve()):
            raise RuntimeError(f"--before-tree {cwd}: volcano_py is imported from {imported} instead")
    # An older tree may not know --event-loop: it runs with its own defaults.
    flags = (
        [] if system == "volcano-py-before" else ["--event-loop", args.event_loop, *VARIANTS.get(system, [])]
    )
    process, metrics_port = launch_volcano_py_scheduler(
        cluster.kubeconfig, log_file, level=args.scheduler_log_level, env=env, cwd=cwd,
        flags=["--schedule-period", str(args.schedule_period),
               "--bind-concurrency", str(args.bind_concurrency), *flags],
    )  # fmt: skip
    wait_ready(metrics_port, process)
    if system != "volcano-py-deployed":
        return {"scheduler": process}
    # With the controller, as deployed: it gives plain pods their PodGroups, as Volcano's does. No
    # webhooks, as Volcano runs here without its webhook-manager.
    controller, controller_port = launch_volcano_py_controller(
        cluster.kubeconfig, log_file, level=args.scheduler_log_level
    )
    wait_ready(controller_port, controller)
    return {"scheduler": process, "volcano-py-controller": controller}


def start_volcano(
    args: argparse.Namespace, cluster: DevCluster, log_file: Any
) -> dict[str, subprocess.Popen[bytes]]:
    """Volcano's vc-controller-manager (it gives plain pods their PodGroups) and vc-scheduler with its
    built-in default conf, Volcano's defaults otherwise; ready once the scheduler has run a cycle, which it
    does only after its caches have synced."""
    controllers = launch_vc_controller_manager(args.volcano_bin, cluster.kubeconfig, log_file)
    scheduler, metrics_port = launch_vc_scheduler(
        args.volcano_bin, cluster.kubeconfig, log_file, schedule_period=args.schedule_period
    )
    processes = {"scheduler": scheduler, "vc-controller-manager": controllers}
    wait_first_cycle(metrics_port, processes)
    return processes


def compare(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per shape: each system's pods/s as a fraction of the null binder's in the same repeat (the median when
    there are several, with every ratio listed), and CPU costs per pod bound (medians)."""
    by_shape: dict[str, dict[int, dict[str, dict[str, Any]]]] = {}
    for result in results:
        by_shape.setdefault(result["shape"], {}).setdefault(result.get("repeat", 0), {})[result["system"]] = (
            result
        )
    out = []
    for shape, repeats in by_shape.items():
        ratios: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        api: dict[str, list[float]] = {}
        for systems in repeats.values():
            null = systems.get("null")
            for name, r in systems.items():
                cpu.setdefault(name, []).append(r["binder_cpu_ms_per_pod"])
                api.setdefault(name, []).append(
                    1000 * r["cpu_seconds"].get("kube-apiserver", 0) / max(1, r["bound"])
                )
                if name != "null" and null and null["pods_per_second"]:
                    ratios.setdefault(name, []).append(
                        round(r["pods_per_second"] / null["pods_per_second"], 3)
                    )
        out.append({
            "shape": shape,
            **{f"{name}_over_null": round(statistics.median(v), 3) for name, v in ratios.items()},
            **{f"{name}_over_null_each": v for name, v in ratios.items() if len(v) > 1},
            "cpu_ms_per_pod_bound": {name: round(statistics.median(v), 2) for name, v in cpu.items()},
            "apiserver_cpu_ms_per_pod": {name: round(statistics.median(v), 2) for name, v in api.items()},
        })  # fmt: skip
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    with DevCluster() as cluster:
        progress(f"creating {args.nodes} nodes")
        began = time.monotonic()
        cluster.create_nodes(args.nodes, cpu="32", memory="256Gi", gpus=8, pods=110, timeout=600)
        progress(f"{args.nodes} nodes Ready in {time.monotonic() - began:.1f}s")
        cluster.apply_crds(REPO / "crds")
        state = json.loads((cluster.layout.root / "state.json").read_text())
        # The API server, etcd and kwok do the binding's work; KCM and kube-scheduler only watch.
        bystanders = {"kube-controller-manager", "kube-scheduler"}
        children = {c["name"]: c["pid"] for c in state["children"] if c["name"] not in bystanders}
        with open(args.scheduler_log, "wb") as log_file:
            # Interleaved: each shape runs under every system before the next shape, so a change in the
            # machine's load touches both sides of a ratio alike.
            for shape, repeat in ((shape, k) for shape in args.shapes for k in range(args.repeat)):
                jobs, size = (int(x) for x in shape.lower().split("x"))
                for system in args.system:
                    progress(
                        f"{shape} with {system}"
                        + (f" (repeat {repeat + 1}/{args.repeat})" if args.repeat > 1 else "")
                    )
                    processes = start_system(system, args, cluster, log_file)
                    fmt = args.profile_format
                    spies = [
                        spy
                        for name, process in processes.items()
                        if (spy := profiler(args.profile, system, shape, name, process.pid, fmt))
                    ]
                    try:
                        result = asyncio.run(
                            measure_shape(
                                args,
                                cluster,
                                {**{name: p.pid for name, p in processes.items()}, **children},
                                jobs,
                                size,
                                system,
                                repeat,
                            )
                        )
                    finally:
                        stop_profilers(spies)
                        for process in processes.values():
                            process.terminate()
                        for process in processes.values():
                            process.wait(30)
                    result["system"] = system
                    result["repeat"] = repeat
                    result["binder_cpu_ms_per_pod"] = round(
                        1000 * result["cpu_seconds"]["scheduler"] / max(1, result["bound"]), 2
                    )
                    # With its controller too (volcano, volcano-py-deployed): what the system spends per pod.
                    spent = sum(result["cpu_seconds"][name] for name in processes)
                    result["system_cpu_ms_per_pod"] = round(1000 * spent / max(1, result["bound"]), 2)
                    progress(json.dumps(result))
                    results.append(result)
    return {
        "benchmark": "e2e",
        "nodes": args.nodes,
        "schedule_period_s": args.schedule_period,
        "create_concurrency": args.concurrency,
        "bind_concurrency": args.bind_concurrency,
        "cpus": os.cpu_count(),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "results": results,
        "comparison": compare(results),
    }


async def measure_shape(
    args: argparse.Namespace,
    cluster: DevCluster,
    pids: dict[str, int],
    jobs: int,
    size: int,
    system: str,
    repeat: int,
) -> dict[str, Any]:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    try:
        return await run_shape(
            client, cluster, pids, jobs, size, args.gang_singles, args.concurrency, system, repeat,
            args.apiserver_profile,
        )  # fmt: skip
    finally:
        await client.close()


def main() -> None:
    log.configure("warning")  # logs to stderr; stdout carries the JSON alone
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--shapes", nargs="+", default=["10000x1", "500x20", "20x500", "1x10000"])
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run each shape N times, every system in each (ratios per repeat)",
    )
    parser.add_argument("--gang-singles", action="store_true", help="give one-pod jobs a PodGroup too")
    parser.add_argument("--concurrency", type=int, default=64, help="pod creates in flight")
    parser.add_argument("--schedule-period", type=float, default=1.0)
    parser.add_argument("--bind-concurrency", type=int, default=64, help="binds in flight, both systems")
    parser.add_argument(
        "--event-loop",
        choices=EVENT_LOOPS,
        default=DEFAULT_EVENT_LOOP,
        help="the event loop of the null binder and volcano-py (volcano-py-asyncio runs asyncio's)",
    )
    parser.add_argument(
        "--system",
        nargs="+",
        choices=SYSTEMS,
        default=["null", "volcano-py"],
        help="null: the round-robin binder without policy (this control plane's ceiling); volcano-py; "
        "volcano-py-asyncio: volcano-py on the standard event loop; volcano-py-fixed-period: with "
        "--burst-quiet 0 (a cycle every period, as Volcano); "
        "volcano-py-before: the scheduler of the checkout given by --before-tree; volcano-py-deployed: "
        "with `volcano-py controller` too (PodGroups for plain pods, as Volcano's controller); "
        "volcano: Volcano's own vc-scheduler and vc-controller-manager, built from --volcano-src",
    )
    parser.add_argument("--before-tree", type=Path, help="a checkout of volcano-py to compare against")
    parser.add_argument(
        "--volcano-src",
        type=Path,
        help="a checkout of volcano-sh/volcano: --system volcano builds its vc-scheduler and "
        "vc-controller-manager from it (benchmarks/build_volcano.py, cached) and runs them",
    )
    parser.add_argument("--scheduler-log", type=Path, default=Path("bench_e2e_scheduler.log"))
    parser.add_argument("--scheduler-log-level", default="warning")
    parser.add_argument(
        "--profile", type=Path, help="a folder: py-spy flame graphs of our processes, one per shape"
    )
    parser.add_argument(
        "--profile-format",
        choices=PROFILE_FORMATS,
        default="flamegraph",
        help="raw: py-spy's collapsed stacks (.txt) instead of an SVG",
    )
    parser.add_argument(
        "--apiserver-profile",
        type=Path,
        help="a folder: kube-apiserver CPU profiles (pprof) while each system binds each shape",
    )
    args = parser.parse_args()
    if "volcano-py-before" in args.system and not args.before_tree:
        parser.error("--system volcano-py-before needs --before-tree PATH (a checkout of an older commit)")
    args.volcano_bin = None
    if "volcano" in args.system:
        if not args.volcano_src:
            parser.error("--system volcano needs --volcano-src PATH (a checkout of volcano-sh/volcano)")
        args.volcano_bin = ensure_volcano(args.volcano_src.resolve())  # built before the cluster starts
    print(json.dumps(run(args), indent=2))


if __name__ == "__main__":
    main()
