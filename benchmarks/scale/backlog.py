"""``bench_scale``'s backlog mode: ``pods`` pods (one-pod jobs, or gangs with their PodGroups) created
while no scheduler runs, then the system started and timed to its first and last bind, with its CPU, RSS
and cycle time and what the control plane spent meanwhile."""

from __future__ import annotations

import asyncio
import subprocess
import time

from benchmarks.benchlib import peer_kai as kai
from benchmarks.benchlib.apiserver import (
    BindWatch,
    api_counts,
    clear,
    count,
    create_all,
    per_pod,
)
from benchmarks.benchlib.objects import api_pod, api_podgroup
from benchmarks.benchlib.procfs import cpu_seconds, rss_mib
from benchmarks.benchlib.profiling import profiler
from benchmarks.benchlib.profiling import stop as stop_profilers
from benchmarks.benchlib.sharded import SYSTEM as SHARDED
from benchmarks.benchlib.sharded import nodeshards, scheduler_of, shard_nodes
from benchmarks.benchlib.stats import busy_cores, cycle_quantiles, partial_gangs
from benchmarks.benchlib.systems import stop
from benchmarks.scale.bench import (
    JSON,
    QUIET_WINDOW,
    Bench,
    NotMeasured,
    guarded,
    load_average,
    progress,
    scrape,
    wait_count,
)
from benchmarks.scale.systems import in_own_terms, pod_scheduler_names, start_controller, start_schedulers
from volcano_py.api import constants as c
from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import NODESHARDS, PODGROUPS, PODS


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
    # Volcano and KAI schedule a plain pod only once a controller of theirs has given it a PodGroup.
    controller = {"volcano": "vc-controller-manager", kai.SYSTEM: "kai-podgrouper"}.get(system)
    needs_controller = controller is not None and size == 1 and not args.gang_singles
    groups_path = (kai.PODGROUPS if system == kai.SYSTEM else PODGROUPS).collection_path(namespace)
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        if needs_controller and controller:
            started_controller = start_controller(bench, system)
            processes[controller] = started_controller.process
            await asyncio.to_thread(started_controller.ready, args.deadline)
        began = time.monotonic()
        path = PODS.collection_path(namespace)
        names = pod_scheduler_names(system)
        bodies = backlog_bodies(namespace, total, size, args.gang_singles, names)
        bodies = in_own_terms(system, bodies)
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
                    if await count(client, groups_path) >= total // size:
                        return
                    await asyncio.sleep(2.0)

            try:
                await guarded(bench, groups_made(), f"PodGroups made by {controller}", total // size,
                              lambda: count(client, groups_path), late=NotMeasured)  # fmt: skip
            except NotMeasured as behind:
                # A peer's own controller too slow for this size: that system has no rate here, the others do.
                progress(f"{shape} {system}: not measured: {behind}")
                return {"system": system, "shape": shape, "size": size, "pods": total, "bound": 0,
                        "not_measured": str(behind), "load_average": load_average()}  # fmt: skip
            groups_s = round(time.monotonic() - began, 1)
        quiet_s, quiet_cores = await control_plane_quiet(bench)
        watch = BindWatch(client, namespace)
        watcher = await watch.from_now()
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
            "partial_gangs": partial_gangs((b["metadata"]["name"] for _, b in bodies if b["kind"] == "Pod"),
                                           watch.bound),
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
        elif system != SHARDED:  # each process's own figures (KAI's scheduler and binder)
            result["processes"] = each_one
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
        if groups_s is not None and controller:
            result["controller_podgroups_s"] = groups_s
            result["controller_cpu_s"] = round(cpu_seconds(processes[controller].pid), 2)
        if not complete:
            result["incomplete"] = f"{len(stamps):,} of {total:,} bound within {args.deadline:.0f} s"
        return result
    finally:
        stop(processes)
        await clear(client, bench.cluster, namespace)
