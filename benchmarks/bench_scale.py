"""volcano-py, Volcano and the null binder at Volcano's real cluster sizes on the local control plane; JSON
on stdout, progress on stderr, an SVG of how each cost grows with ``--plot``.

Each ``(nodes, pods)`` point of ``--nodes`` and ``--pods`` gets a fresh DevCluster with that many KWOK
nodes. In it each ``--mode`` runs every ``--system`` in turn (``null``: ``null_binder.py``, the ceiling of
this control plane; ``volcano-py``; ``volcano``: Volcano's vc-scheduler and vc-controller-manager built from
``--volcano-src`` by ``build_volcano.py``; ``volcano-py-sharded``, backlog only: two volcano-py schedulers,
each hard-sharded on half the nodes by a NodeShard the bench creates and serving half the jobs under a
schedulerName of its own, ``benchlib/sharded.py``), each as its own process, so its CPU and RSS are its own
(the sharded system's are the sums over its two, each also given under ``schedulers`` with its pods bound,
its last bind and its pods bound outside its shard); the backlog runs the null binder again after each other
system (``--bracket-null``) and rates each against the null runs on either side of it. Every line carries
the load average.

backlog   For each shape (``1``: one-pod jobs, plain pods; ``20``: gangs of 20, each with a PodGroup of
          minMember 20) ``pods`` pods are created while no scheduler runs (Volcano's controller-manager does
          run for plain pods, which need it for their PodGroups: the bench waits for them), then the
          scheduler starts. Reported: seconds from its start to the first and to the last bind, pods/s over
          that span, its CPU per pod and peak RSS, its cycle time p50/p99 (volcano-py, Volcano; from its
          start to the last bind, idle cycles included), and the CPU of kube-apiserver, etcd and kwok
          meanwhile and the API server's largest RSS.
restart   The cluster filled with ``pods`` running pods in gangs of ``--running-gang`` with their PodGroups
          (created bound, as bench_restart does) and ``--finished-jobs`` Volcano Jobs whose status is
          Completed (the history of Volcano's issue #5819: 140,000 pods and 87,031 Jobs there). Per system
          its scheduler runs, is SIGKILLed, a new one-pod job is created and the scheduler started again:
          seconds to synced (``/readyz``; Volcano's first cycle, which it runs once synced) and to that
          pod's bind, and RSS. Then the controller (``volcano-py controller`` / ``vc-controller-manager``,
          with its scheduler up): SIGKILLed, a new one-pod ``batch.volcano.sh`` Job created, started again:
          seconds to the Job's PodGroup and pod.
churn     On the filled cluster, jobs (a PodGroup and ``--churn-size`` pods created together, as a Job
          controller does, that KWOK completes after ``--churn-job-seconds``) arrive at ``--churn-rate``
          jobs/s for ``--minutes``; finished pods stay, so the cluster grows. Per ``--window``: bind latency
          p50/p99 (created -> bound, from a watch) of the pods created in it and, from the scheduler's
          ``volcano_e2e_scheduling_latency_milliseconds`` histogram (volcano-py and Volcano both serve it),
          cycle time p50/p99.

A point that does not fit stops the run, with the reason in the JSON: memory in use on the machine above
``--max-memory-used`` (``/proc/meminfo``), or a phase not done within ``--deadline``.

Usage: python -m benchmarks.bench_scale --nodes 1000 2000 5000 --pods 10000 50000 100000 \\
           --system null volcano-py volcano --volcano-src /path/to/volcano --plot scale.svg > scale.json
       python -m benchmarks.bench_scale --plot-from scale.json --plot scale.svg
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import math
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.benchlib import scaleplot
from benchmarks.benchlib.apiserver import (
    BindWatch,
    api_counts,
    clear,
    count,
    count_where,
    create_all,
    fill,
    per_pod,
    resource_version,
)
from benchmarks.benchlib.limits import deadline_stop, memory_stop, parse_meminfo, scale_points
from benchmarks.benchlib.objects import api_pod, api_podgroup, container, make_job
from benchmarks.benchlib.pool import each
from benchmarks.benchlib.procfs import cpu_seconds, meminfo, rss_mib
from benchmarks.benchlib.profiling import FORMATS as PROFILE_FORMATS
from benchmarks.benchlib.profiling import profiler
from benchmarks.benchlib.profiling import stop as stop_profilers
from benchmarks.benchlib.sharded import SYSTEM as SHARDED
from benchmarks.benchlib.sharded import (
    launch_sharded_schedulers,
    nodeshards,
    scheduler_names,
    scheduler_of,
    shard_nodes,
)
from benchmarks.benchlib.stats import (
    bracketed,
    busy_cores,
    churn_windows,
    cycle_quantiles,
    gang_ready_latencies,
    histogram_buckets,
    of_baseline,
    percentile,
)
from benchmarks.benchlib.systems import (
    REPO,
    launch_null_binder,
    launch_vc_controller_manager,
    launch_vc_scheduler,
    launch_volcano_py_controller,
    launch_volcano_py_scheduler,
    stop,
    wait_first_cycle,
    wait_null_ready,
    wait_ready,
)
from benchmarks.build_volcano import ensure_volcano
from volcano_py import log
from volcano_py.api import constants as c
from volcano_py.devcluster import COMPLETE_AFTER, DevCluster
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import JOBS, NODESHARDS, PODGROUPS, PODS

SYSTEMS = ("null", "volcano-py", "volcano", SHARDED)
MODES = ("backlog", "restart", "churn")
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


# -- the systems --------------------------------------------------------------------------------------------


@dataclass
class Started:
    process: subprocess.Popen[bytes]
    ready: Callable[[float], None]  # blocks until ready, at most that many seconds
    metrics_url: str | None = None  # where the cycle histogram is served


def start_scheduler(bench: Bench, system: str) -> Started:
    args = bench.args
    if system == "null":
        binder = launch_null_binder(bench.kubeconfig, bench.log_file, bind_concurrency=args.bind_concurrency)
        return Started(binder, lambda _within: wait_null_ready(binder))
    if system == "volcano":
        vc, port = launch_vc_scheduler(
            args.volcano_bin, bench.kubeconfig, bench.log_file, schedule_period=args.schedule_period
        )
        return Started(
            vc, lambda within: wait_first_cycle(port, {"vc-scheduler": vc}, within),
            f"http://127.0.0.1:{port}/metrics",
        )  # fmt: skip
    ours, port = launch_volcano_py_scheduler(
        bench.kubeconfig, bench.log_file, level=args.scheduler_log_level,
        flags=["--schedule-period", str(args.schedule_period),
               "--bind-concurrency", str(args.bind_concurrency)],
    )  # fmt: skip
    return Started(ours, lambda within: wait_ready(port, ours, within), f"http://127.0.0.1:{port}/metrics")


def start_schedulers(bench: Bench, system: str) -> dict[str, Started]:
    """Per scheduler process of ``system`` (one, or the sharded system's two), its name and start."""
    if system != SHARDED:
        return {"scheduler": start_scheduler(bench, system)}
    args = bench.args
    launched = launch_sharded_schedulers(
        bench.kubeconfig, bench.log_file, level=args.scheduler_log_level,
        flags=["--schedule-period", str(args.schedule_period),
               "--bind-concurrency", str(args.bind_concurrency)],
    )  # fmt: skip
    return {
        f"scheduler {name}": Started(
            process, functools.partial(wait_ready, port, process), f"http://127.0.0.1:{port}/metrics"
        )
        for name, (process, port) in launched.items()
    }


def start_controller(bench: Bench, system: str) -> Started:
    if system == "volcano":
        vc = launch_vc_controller_manager(bench.args.volcano_bin, bench.kubeconfig, bench.log_file)
        # It serves no readiness here (--enable-healthz=false, as bench_e2e runs it): alive is ready.
        return Started(vc, lambda _within: None)
    ours, port = launch_volcano_py_controller(
        bench.kubeconfig, bench.log_file, level=bench.args.scheduler_log_level
    )
    return Started(ours, lambda within: wait_ready(port, ours, within))


# -- the API -------------------------------------------------------------------------------------------------


async def guarded(
    bench: Bench, work: Awaitable[Any], what: str, wanted: int, done: Callable[[], Awaitable[int]]
) -> Any:
    """``work``'s result; StopPoint if the machine's memory goes above the limit meanwhile, or if it is not
    done within ``--deadline`` (then ``done`` says how far it got)."""
    task = asyncio.ensure_future(work)
    began = time.monotonic()
    while True:
        finished, _ = await asyncio.wait({task}, timeout=5.0)
        if finished:
            return task.result()
        reason = memory_stop(parse_meminfo(meminfo()), bench.args.max_memory_used)
        elapsed = time.monotonic() - began
        if reason is None and elapsed >= bench.args.deadline:
            reason = deadline_stop(what, await done(), wanted, elapsed, bench.args.deadline)
        if reason:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise StopPoint(reason)


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


def job(name: str, *, annotations: dict[str, str] | None = None) -> JSON:
    """A one-task, one-pod Volcano Job, complete without the admission webhook's defaults."""
    main = container("w", cpu="100m")
    return (
        make_job(name)
        .scheduler()
        .max_retry(3)
        .task("w", 1, main, annotations=annotations or {}, restart_never=True)
        .obj()
    )


def completed_status() -> JSON:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"status": {"state": {"phase": "Completed", "reason": "", "lastTransitionTime": now},
                       "minAvailable": 1, "succeeded": 1, "version": 1}}  # fmt: skip


async def finished_jobs(client: KubeClient, jobs: int, concurrency: int) -> None:
    """``jobs`` Volcano Jobs, each created and then given a Completed status (the status subresource)."""
    await create_all(client, [(JOBS.collection_path(HISTORY), job(f"done-{i}")) for i in range(jobs)],
                     concurrency)  # fmt: skip

    async def complete(i: int) -> None:
        path = JOBS.object_path(f"done-{i}", HISTORY, "status")
        while True:
            try:
                await client.patch(path, completed_status())
                return
            except ApiError as exc:
                if exc.status not in (429, 500, 503, 504):
                    raise
                await asyncio.sleep(0.2)

    await each(list(range(jobs)), complete, concurrency)


# -- backlog -------------------------------------------------------------------------------------------------


def backlog_bodies(
    namespace: str, total: int, size: int, gang_singles: bool, names: tuple[str, ...] = (c.SCHEDULER_NAME,)
) -> list[tuple[str, JSON]]:
    """PodGroups first, then pods: a member is never created before its group. Job ``j``'s pods have the
    schedulerName ``names[j % len(names)]``."""
    groups: list[tuple[str, JSON]] = []
    members: list[tuple[str, JSON]] = []
    grouped = size > 1 or gang_singles
    for j in range(total // size):
        if grouped:
            groups.append((PODGROUPS.collection_path(namespace), api_podgroup(f"job{j}", size)))
        for i in range(size):
            body = (
                api_pod(f"job{j}-{i}").group(f"job{j}" if grouped else None).scheduler(names[j % len(names)])
            )
            members.append((PODS.collection_path(namespace), body.obj()))
    return groups + members


async def control_plane_quiet(bench: Bench) -> tuple[float, float | None]:
    """Until the API server, etcd and KWOK together use less than ``--quiet-cores`` over ``QUIET_WINDOW``
    seconds, ``--quiet-limit`` at most: (seconds waited, their cores then). The last run's 100,000 deletions
    and this run's creations keep them busy for a minute or more after the calls return, and a system whose
    window opened in that wake paid for it (run M's first null run, in a fresh cluster, drained at 1,018
    pods/s; the two after a clear at 804 and 910)."""
    began = time.monotonic()
    samples: list[tuple[float, float]] = []
    cores: float | None = None
    while True:
        now = time.monotonic()
        samples.append((now, sum(cpu_seconds(pid) for pid in bench.workers.values())))
        cores = busy_cores(samples, QUIET_WINDOW)
        if (cores is not None and cores < bench.args.quiet_cores) or now - began >= bench.args.quiet_limit:
            break
        await asyncio.sleep(1.0)
    waited = round(time.monotonic() - began, 1)
    progress(f"control plane at {cores if cores is None else round(cores, 2)} cores after {waited:.0f}s")
    return waited, None if cores is None else round(cores, 3)


async def backlog(bench: Bench, client: KubeClient, pods: int, size: int, system: str) -> JSON:
    args = bench.args
    shape = f"{pods // size}x{size}"
    bench.backlog_runs += 1
    namespace = bench.cluster.create_namespace(f"backlog-{shape}-{system}-{bench.backlog_runs}".lower())
    total = (pods // size) * size
    # Volcano schedules a plain pod only once its controller has given it a PodGroup.
    needs_controller = system == "volcano" and size == 1 and not args.gang_singles
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        if needs_controller:
            processes["vc-controller-manager"] = start_controller(bench, system).process
        began = time.monotonic()
        path = PODS.collection_path(namespace)
        names = scheduler_names(system)
        bodies = backlog_bodies(namespace, total, size, args.gang_singles, names)
        if system == SHARDED:  # once per cluster: a NodeShard that exists already is kept (create_all)
            shards = [(NODESHARDS.collection_path(), shard) for shard in nodeshards(bench.node_names)]
            await create_all(client, shards, len(shards))
        await guarded(bench, create_all(client, bodies, args.concurrency), "pods created", total,
                      lambda: count(client, path))  # fmt: skip
        created_s = time.monotonic() - began
        progress(f"{shape} {system}: {total:,} pods created in {created_s:.1f}s")
        groups_s = None
        if needs_controller:
            began = time.monotonic()

            async def groups_made() -> None:
                while True:
                    if await count(client, PODGROUPS.collection_path(namespace)) >= total // size:
                        return
                    await asyncio.sleep(2.0)

            await guarded(bench, groups_made(), "PodGroups made by vc-controller-manager", total // size,
                          lambda: count(client, PODGROUPS.collection_path(namespace)))  # fmt: skip
            groups_s = round(time.monotonic() - began, 1)
        quiet_s, quiet_cores = await control_plane_quiet(bench)
        watch = BindWatch(client, namespace)
        watcher = asyncio.create_task(watch.run(await resource_version(client, path)))
        counts_before = api_counts(bench.cluster)
        before = {name: cpu_seconds(pid) for name, pid in bench.workers.items()}
        peak_api = [0.0]

        async def sample_api_rss() -> None:
            while True:
                peak_api[0] = max(peak_api[0], rss_mib(bench.workers["kube-apiserver"])["rss_mib"])
                await asyncio.sleep(1.0)

        sampler = asyncio.create_task(sample_api_rss())
        started_at = time.time()
        schedulers = start_schedulers(bench, system)
        processes.update({name: started.process for name, started in schedulers.items()})
        spies = [profiler(args.profile, system, f"{shape}-{bench.backlog_runs}", name.replace(" ", "-"),
                          started.process.pid, args.profile_format)
                 for name, started in schedulers.items()]  # fmt: skip
        try:
            alive = [started.process for started in schedulers.values()]
            complete = await wait_count(bench, watch, total, args.deadline, alive)
        finally:
            stop_profilers([spy for spy in spies if spy])
        ended = time.time()
        each_one: dict[str, JSON] = {}
        for name, started in schedulers.items():
            if started.process.poll() is not None:
                raise RuntimeError(f"{system}'s {name} exited with code {started.process.returncode} in the "
                                   "backlog; see --scheduler-log")  # fmt: skip
            each_one[name] = {
                "cpu_s": round(cpu_seconds(started.process.pid), 2),
                "peak_rss_mib": rss_mib(started.process.pid)["peak_rss_mib"],
                **(cycle_quantiles({}, scrape(started.metrics_url)) if started.metrics_url else {}),
            }
        spent = sum(one["cpu_s"] for one in each_one.values())
        peak = round(sum(one["peak_rss_mib"] for one in each_one.values()), 1)
        after = {name: cpu_seconds(pid) for name, pid in bench.workers.items()}
        for task in (watcher, sampler):
            task.cancel()
        await asyncio.gather(watcher, sampler, return_exceptions=True)
        counts_after = api_counts(bench.cluster)
        stamps = sorted(watch.bound.values())
        last = stamps[-1] if stamps else ended
        result: JSON = {
            "system": system, "shape": shape, "size": size, "pods": total, "bound": len(stamps),
            "created_s": round(created_s, 1),
            "first_bind_s": round(stamps[0] - started_at, 2) if stamps else None,
            "last_bind_s": round(last - started_at, 2) if stamps else None,
            "pods_per_second": round(len(stamps) / max(1e-9, last - started_at), 1),
            "scheduler_cpu_s": round(spent, 2),
            "cpu_ms_per_pod": round(1000 * spent / max(1, len(stamps)), 2),
            "scheduler_peak_rss_mib": peak,
            "cpu_seconds": {name: round(after[name] - before[name], 2) for name in after},
            "apiserver_rss_mib_max": peak_api[0],
            "api_requests_per_pod": round(sum(
                v - counts_before.get(k, 0.0) for k, v in counts_after.items() if not k.startswith("WATCH")
            ) / max(1, len(stamps)), 2),
            "api_per_pod_by_kind": per_pod(counts_before, counts_after, len(stamps)),
            "watchers_cut": {k.split(" ", 1)[1]: int(v - counts_before.get(k, 0.0))
                             for k, v in counts_after.items()
                             if k.startswith("WATCH-CUT") and v > counts_before.get(k, 0.0)},
            "load_average": load_average(),
            "quiet_wait_s": quiet_s, "control_plane_cores_at_start": quiet_cores,
        }  # fmt: skip
        if len(each_one) == 1:
            result.update({k: v for k, v in next(iter(each_one.values())).items() if k.startswith("cycle_")})
        else:  # per scheduler: its own figures, when its last pod was bound, and its pods off its shard
            shard_of = shard_nodes(bench.node_names)
            for name, one in each_one.items():
                own = name.removeprefix("scheduler ")
                mine = [pod_name for pod_name in watch.bound if scheduler_of(pod_name, names) == own]
                one["bound"] = len(mine)
                one["last_bind_s"] = (
                    round(max(watch.bound[n] for n in mine) - started_at, 2) if mine else None
                )
                one["bound_off_shard"] = sum(watch.node[n] not in shard_of[own] for n in mine)
            result["schedulers"] = each_one
        if groups_s is not None:
            result["controller_podgroups_s"] = groups_s
            result["controller_cpu_s"] = round(cpu_seconds(processes["vc-controller-manager"].pid), 2)
        if not complete:
            result["incomplete"] = f"{len(stamps):,} of {total:,} bound within {args.deadline:.0f} s"
        return result
    finally:
        stop(processes)
        await clear(client, bench.cluster, namespace)


# -- restart -------------------------------------------------------------------------------------------------


async def fill_cluster(bench: Bench, client: KubeClient, nodes: int, pods: int) -> JSON:
    args = bench.args
    bench.cluster.create_namespace(FILL)
    bench.cluster.create_namespace(HISTORY)
    bench.cluster.create_namespace(PROBE)
    began = time.monotonic()
    running = fill(str(bench.kubeconfig), nodes, pods, args.concurrency, FILL, args.running_gang)
    await guarded(
        bench, running, "running pods created", pods, lambda: count(client, PODS.collection_path(FILL))
    )
    filled = time.monotonic() - began
    progress(f"{pods:,} running pods created in {filled:.1f}s")
    began = time.monotonic()
    history_made = finished_jobs(client, args.finished_jobs, args.concurrency)
    await guarded(bench, history_made, "finished Jobs created", args.finished_jobs,
                  lambda: count(client, JOBS.collection_path(HISTORY)))  # fmt: skip
    history = time.monotonic() - began
    progress(f"{args.finished_jobs:,} Completed Volcano Jobs created in {history:.1f}s")
    await asyncio.sleep(args.settle)  # KWOK runs the pods
    return {
        "fill_s": round(filled, 1),
        "running_podgroups": pods // args.running_gang,
        "finished_jobs": args.finished_jobs,
        "finished_jobs_s": round(history, 1),
    }


async def wait_new_bound(client: KubeClient, name: str, namespace: str, within: float) -> float | None:
    """When ``name`` (created before this call) is first seen bound; None if not within ``within``."""
    watch = BindWatch(client, namespace)
    watcher = asyncio.create_task(watch.run("0"))
    try:
        deadline = time.monotonic() + within
        while name not in watch.bound and time.monotonic() < deadline:
            await watch.next_change(1.0)
        return watch.bound.get(name)
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)


async def scheduler_restart(bench: Bench, client: KubeClient, system: str, pods: int) -> JSON:
    args = bench.args
    first = start_scheduler(bench, system)
    try:
        await asyncio.to_thread(first.ready, args.deadline)
        await asyncio.sleep(args.settle)  # it writes the PodGroups' status once
    except RuntimeError as exc:  # not ready within the deadline at this size: say so, measure the others
        return {"system": system, "component": "scheduler", "pods": pods, "incomplete": str(exc)}
    finally:
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(30)
    name = f"probe-{system}"
    await client.create(PODGROUPS.collection_path(PROBE), api_podgroup(name, 1))
    await client.create(PODS.collection_path(PROBE), api_pod(name).group(name).obj())
    started_at, began = time.time(), time.monotonic()
    again = start_scheduler(bench, system)
    spy = profiler(args.profile, system, "restart", "scheduler", again.process.pid, args.profile_format)
    try:
        bound = asyncio.create_task(wait_new_bound(client, name, PROBE, args.deadline))
        synced = None
        try:
            await asyncio.to_thread(again.ready, args.deadline)
            synced = round(time.monotonic() - began, 2)
        except RuntimeError as exc:
            progress(f"restart of {system}: {exc}")
        at = await bound
        stop_profilers([spy] if spy else [])
        return {
            "system": system, "component": "scheduler", "pods": pods, "synced_s": synced,
            "first_bind_s": round(at - started_at, 2) if at else None,
            **rss_mib(again.process.pid), "load_average": load_average(),
        }  # fmt: skip
    finally:
        stop([again.process])


async def first_owned(client: KubeClient, path: str, owner: str, within: float) -> float | None:
    """When the first object of ``path`` owned by uid ``owner`` is seen (it may exist already)."""
    query: dict[str, str | int] = {"watch": "true", "resourceVersion": "0", "timeoutSeconds": int(within)}
    try:
        async with asyncio.timeout(within):
            async for event in client.stream(path, query, read_timeout=within):
                refs = ((event.get("object") or {}).get("metadata") or {}).get("ownerReferences") or []
                if any(ref.get("uid") == owner for ref in refs):
                    return time.time()
    except TimeoutError:
        pass
    return None


async def controller_restart(bench: Bench, client: KubeClient, system: str, pods: int) -> JSON:
    args = bench.args
    scheduler = start_scheduler(bench, system)
    processes = [scheduler.process]
    try:
        await asyncio.to_thread(scheduler.ready, args.deadline)
        first = start_controller(bench, system)
        processes.append(first.process)
        await asyncio.to_thread(first.ready, args.deadline)
        await asyncio.sleep(args.settle)  # it goes through the history once
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(30)
        name = f"probe-job-{system}".lower()
        created = await client.create(JOBS.collection_path(PROBE), job(name))
        uid = str(created["metadata"]["uid"])
        started_at = time.time()
        again = start_controller(bench, system)
        processes.append(again.process)
        spy = profiler(args.profile, system, "restart", "controller", again.process.pid, args.profile_format)
        group, member = await asyncio.gather(
            first_owned(client, PODGROUPS.collection_path(PROBE), uid, args.deadline),
            first_owned(client, PODS.collection_path(PROBE), uid, args.deadline),
        )
        stop_profilers([spy] if spy else [])
        return {
            "system": system, "component": "controller", "pods": pods, "finished_jobs": args.finished_jobs,
            "first_podgroup_s": round(group - started_at, 2) if group else None,
            "first_pod_s": round(member - started_at, 2) if member else None,
            "controller_cpu_s": round(cpu_seconds(again.process.pid), 2),
            **rss_mib(again.process.pid), "load_average": load_average(),
        }  # fmt: skip
    finally:
        stop(processes)


# -- churn ---------------------------------------------------------------------------------------------------


def scrape(url: str | None) -> dict[float, float]:
    if url is None:
        return {}
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return histogram_buckets(response.read().decode(), CYCLE_METRIC)
    except OSError:
        return {}


async def churn(bench: Bench, client: KubeClient, system: str, filled: int) -> JSON:
    args = bench.args
    namespace = bench.cluster.create_namespace(f"churn-{system}")
    started = start_scheduler(bench, system)
    try:
        await asyncio.to_thread(started.ready, args.deadline)
        watch = BindWatch(client, namespace)
        watcher = asyncio.create_task(
            watch.run(await resource_version(client, PODS.collection_path(namespace)))
        )
        cycles = [await asyncio.to_thread(scrape, started.metrics_url)]
        loads: list[float] = []
        start = time.time()
        annotations = {COMPLETE_AFTER: f"{args.churn_job_seconds}s"}
        in_flight = asyncio.Semaphore(args.concurrency)

        async def submit(j: int) -> None:
            async with in_flight:
                group = f"c{j}"
                await client.create(
                    PODGROUPS.collection_path(namespace), api_podgroup(group, args.churn_size)
                )

                async def create(i: int) -> None:
                    body = api_pod(f"{group}-{i}").group(group).obj()
                    body["metadata"]["annotations"].update(annotations)
                    await client.create(PODS.collection_path(namespace), body)
                    watch.created[f"{group}-{i}"] = time.time()

                if args.churn_create == "together":
                    await asyncio.gather(*(create(i) for i in range(args.churn_size)))
                else:
                    for i in range(args.churn_size):
                        await create(i)

        async def scrape_each_window() -> None:
            while True:
                await asyncio.sleep(args.window)
                cycles.append(await asyncio.to_thread(scrape, started.metrics_url))
                loads.append(load_average())

        scraper = asyncio.create_task(scrape_each_window())
        submitted: list[asyncio.Task[None]] = []
        end = start + args.minutes * 60
        j = 0
        while time.time() < end:
            submitted.append(asyncio.create_task(submit(j)))
            j += 1
            await asyncio.sleep(max(0.0, start + j / args.churn_rate - time.time()))
            if started.process.poll() is not None:
                raise RuntimeError(
                    f"{system} exited with code {started.process.returncode}; see --scheduler-log"
                )
        await asyncio.gather(*submitted)
        await wait_count(bench, watch, len(watch.created), min(args.deadline, 120.0), [started.process])
        scraper.cancel()
        await asyncio.gather(scraper, return_exceptions=True)
        cycles.append(await asyncio.to_thread(scrape, started.metrics_url))
        loads.append(load_average())
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        latencies = [(watch.bound[n] - at) * 1000 for n, at in watch.created.items() if n in watch.bound]
        # A churn pod is "<group>-<i>": its gang can be placed only once the gang's last pod exists.
        ready = gang_ready_latencies(
            watch.created, watch.bound, {n: n.rsplit("-", 1)[0] for n in watch.created}
        )
        # KWOK finished them: the cluster grew by pods that are done, as a busy cluster does.
        succeeded = await count_where(client, PODS.collection_path(namespace), "status.phase=Succeeded")
        return {
            "system": system, "pods": filled, "jobs": j, "create": args.churn_create,
            "created": len(watch.created),
            "bound": sum(1 for n in watch.created if n in watch.bound), "succeeded": succeeded,
            "bind_ms_p50": round(percentile(latencies, 0.50), 1),
            "bind_ms_p99": round(percentile(latencies, 0.99), 1),
            "gang_ready_bind_ms_p50": round(percentile(ready, 0.50), 1),
            "gang_ready_bind_ms_p99": round(percentile(ready, 0.99), 1),
            "scheduler_cpu_s": round(cpu_seconds(started.process.pid), 2),
            **rss_mib(started.process.pid), "load_average": load_average(),
            **(cycle_quantiles(cycles[0], cycles[-1]) if started.metrics_url else {}),
            "windows": churn_windows(
                watch.created, watch.bound, cycles, loads, start, args.window,
                math.ceil(args.minutes * 60 / args.window), filled,
            ),
        }  # fmt: skip
    finally:
        stop([started.process])
        await clear(client, bench.cluster, namespace)


# -- the run -------------------------------------------------------------------------------------------------


async def measure_point(bench: Bench, nodes: int, pods: int, point: JSON) -> None:
    args = bench.args
    client = KubeClient(await load_api_client(str(bench.kubeconfig)))
    try:
        if "backlog" in args.mode:
            point["backlog"] = []
            for size in args.shapes:
                shape: list[JSON] = []
                for system in bracketed(args.system) if args.bracket_null else args.system:
                    progress(f"backlog {pods:,} pods in jobs of {size}: {system}")
                    line = await backlog(bench, client, pods, size, system)
                    shape.append(line)
                    point["backlog"].append(line)
                    of_baseline(shape)
                    bench.measured(line)
        if "restart" not in args.mode and "churn" not in args.mode:
            return
        point["fill"] = await fill_cluster(bench, client, nodes, pods)
        systems = [system for system in args.system if system != SHARDED]  # the sharded one: backlog only
        if "restart" in args.mode:
            point["restart"] = []
            for system in systems:
                progress(f"scheduler restart on {pods:,} pods: {system}")
                point["restart"].append(await scheduler_restart(bench, client, system, pods))
                bench.measured(point["restart"][-1])
            for system in (s for s in systems if s != "null"):
                progress(f"controller restart with {args.finished_jobs:,} finished Jobs: {system}")
                point["restart"].append(await controller_restart(bench, client, system, pods))
                bench.measured(point["restart"][-1])
        if "churn" in args.mode:
            point["churn"] = []
            for system in systems:
                progress(f"churn for {args.minutes} min on {pods:,} pods: {system}")
                line = await churn(bench, client, system, pods)
                point["churn"].append(line)
                bench.measured(line)
    finally:
        await client.close()


def run(args: argparse.Namespace) -> JSON:
    result: JSON = {"benchmark": "scale", "modes": args.mode, "systems": args.system, "cpus": os.cpu_count(),
                    "schedule_period_s": args.schedule_period, "points": []}  # fmt: skip

    def save() -> None:
        if args.out:  # a long run stopped part way still leaves what it measured
            args.out.write_text(json.dumps(result, indent=2))

    for nodes, pods in scale_points(args.nodes, args.pods):
        point: JSON = {"nodes": nodes, "pods": pods, "load_average_at_start": load_average()}
        result["points"].append(point)
        reason = memory_stop(parse_meminfo(meminfo()), args.max_memory_used)
        if reason is None:
            reason = run_point(args, nodes, pods, point, save)
        if reason:
            point["stopped"] = result["stopped"] = reason
            progress(f"stopped at {nodes:,} nodes / {pods:,} pods: {reason}")
            break
        save()
    save()
    return result


def run_point(
    args: argparse.Namespace, nodes: int, pods: int, point: JSON, save: Callable[[], None]
) -> str | None:
    """Measure one point in a fresh cluster; the reason it did not fit, or None."""
    with DevCluster() as cluster, open(args.scheduler_log, "ab") as log_file:
        progress(f"creating {nodes:,} nodes")
        began = time.monotonic()
        try:
            names = cluster.create_nodes(
                nodes, cpu="32", memory="256Gi", gpus=8, pods=110, timeout=args.deadline
            )
        except Exception as exc:  # the nodes alone do not fit in time: a larger point would not either
            return f"{nodes:,} nodes not Ready within {args.deadline:.0f} s: {exc}"
        point["nodes_ready_s"] = round(time.monotonic() - began, 1)
        progress(f"{nodes:,} nodes Ready in {point['nodes_ready_s']}s")
        cluster.apply_crds(REPO / "crds")
        state = json.loads((cluster.layout.root / "state.json").read_text())
        workers = {child["name"]: child["pid"] for child in state["children"] if child["name"] in WORKERS}
        bench = Bench(args, cluster, log_file, workers, save, node_names=names)
        try:
            asyncio.run(measure_point(bench, nodes, pods, point))
        except StopPoint as stopped:
            return str(stopped)
        point["apiserver_rss_mib_at_end"] = rss_mib(workers["kube-apiserver"])
        point["load_average_at_end"] = load_average()
    return None


def write_plot(result: JSON, path: Path) -> None:
    path.write_text(scaleplot.render(result))
    progress(f"plot written to {path}")


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000])
    parser.add_argument("--pods", type=int, nargs="+", default=[10_000])
    parser.add_argument("--mode", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--system", nargs="+", choices=SYSTEMS, default=["null", "volcano-py"])
    parser.add_argument("--volcano-src", type=Path, help="a Volcano checkout, for --system volcano")
    parser.add_argument(
        "--shapes",
        type=int,
        nargs="+",
        default=[1, GANG],
        help="backlog job sizes: 1 (plain pods) and 20 (gangs with a PodGroup)",
    )
    parser.add_argument("--gang-singles", action="store_true", help="give one-pod jobs a PodGroup too")
    parser.add_argument(
        "--bracket-null",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="in the backlog, run the null binder before and after each other system, and give each of "
        "those its rate against the mean of the two (of_null)",
    )
    parser.add_argument(
        "--finished-jobs",
        type=int,
        default=5000,
        help="Completed Volcano Jobs in the restart's history (#5819 had 87,031)",
    )
    parser.add_argument(
        "--running-gang",
        type=int,
        default=GANG,
        help="pods per PodGroup of the restart's running pods (#5819 had 140,000 pods in 87,031 Jobs: "
        "1.6 per Job)",
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="churn's length")
    parser.add_argument("--window", type=float, default=60.0, help="churn's reporting window, seconds")
    parser.add_argument("--churn-rate", type=float, default=2.0, help="jobs arriving per second")
    parser.add_argument("--churn-size", type=int, default=10, help="pods per churn job")
    parser.add_argument(
        "--churn-create",
        choices=("together", "one-by-one"),
        default="together",
        help="a churn job's pods created concurrently, as Volcano's Job controller creates them, or each "
        "after the last (the shape of the churn runs before the fifteenth round)",
    )
    parser.add_argument("--churn-job-seconds", type=float, default=30.0, help="how long a churn pod runs")
    parser.add_argument(
        "--deadline",
        type=float,
        default=3600.0,
        help="seconds a phase (creates, binds, a restart) may take before the point stops",
    )
    parser.add_argument(
        "--max-memory-used",
        type=float,
        default=0.85,
        help="stop when this fraction of the machine's memory is in use",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=30.0,
        help="seconds after filling, and after a process's first start, before the kill",
    )
    parser.add_argument(
        "--quiet-cores",
        type=float,
        default=0.5,
        help="a backlog's scheduler starts once the API server, etcd and KWOK use fewer cores than this",
    )
    parser.add_argument("--quiet-limit", type=float, default=180.0, help="seconds to wait for that at most")
    parser.add_argument("--concurrency", type=int, default=64, help="creates in flight")
    parser.add_argument("--schedule-period", type=float, default=1.0)
    parser.add_argument("--bind-concurrency", type=int, default=64)
    parser.add_argument("--scheduler-log", type=Path, default=Path("bench_scale_scheduler.log"))
    parser.add_argument("--scheduler-log-level", default="warning")
    parser.add_argument("--out", type=Path, help="also write the JSON here, after each measurement")
    parser.add_argument(
        "--profile",
        type=Path,
        help="a folder: py-spy flame graphs of our scheduler per backlog run, and of each restart",
    )
    parser.add_argument(
        "--profile-format",
        choices=PROFILE_FORMATS,
        default="flamegraph",
        help="raw: py-spy's collapsed stacks (.txt) instead of an SVG",
    )
    parser.add_argument("--plot", type=Path, help="write the SVG of how each cost grows here")
    parser.add_argument("--plot-from", type=Path, help="redraw --plot from this JSON result; runs nothing")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.plot_from and not args.plot:
        parser.error("--plot-from needs --plot PATH.svg to write")
    if args.plot_from and not args.plot_from.is_file():
        parser.error(f"--plot-from {args.plot_from}: no such file (the JSON a run printed)")
    try:
        scale_points(args.nodes, args.pods)
    except ValueError as err:
        parser.error(str(err))
    if any(size < 1 for size in args.shapes) or args.churn_size < 1 or args.churn_rate <= 0:
        parser.error("--shapes and --churn-size must be at least 1, --churn-rate above 0")
    if not 0 < args.max_memory_used <= 1:
        parser.error(f"--max-memory-used is a fraction in (0, 1], got {args.max_memory_used}")
    args.volcano_bin = None
    if "volcano" in args.system and not args.plot_from:
        if not args.volcano_src:
            parser.error("--system volcano needs --volcano-src PATH (a checkout of volcano-sh/volcano)")
        args.volcano_bin = ensure_volcano(args.volcano_src.resolve())  # built before any cluster starts
    return args


def main() -> None:
    log.configure("warning")  # logs to stderr; stdout carries the JSON alone
    args = parse_args()
    if args.plot_from:
        write_plot(json.loads(args.plot_from.read_text()), args.plot)
        return
    result = run(args)
    print(json.dumps(result, indent=2))
    if args.plot:
        write_plot(result, args.plot)


if __name__ == "__main__":
    main()
