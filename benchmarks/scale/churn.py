"""``bench_scale``'s churn mode: on the filled cluster, jobs (a PodGroup and its pods) arriving at a steady
rate for ``--minutes``; bind latency and cycle time per ``--window``."""

from __future__ import annotations

import asyncio
import math
import time

from benchmarks.benchlib import peer_kai as kai
from benchmarks.benchlib import peer_kube
from benchmarks.benchlib import peer_yunikorn as yunikorn
from benchmarks.benchlib.apiserver import BindWatch, clear, count_where
from benchmarks.benchlib.objects import api_pod, api_podgroup
from benchmarks.benchlib.procfs import cpu_seconds, rss_mib
from benchmarks.benchlib.stats import (
    churn_windows,
    cycle_quantiles,
    gang_ready_latencies,
    partial_gangs,
    percentile,
)
from benchmarks.benchlib.systems import stop
from benchmarks.scale.bench import JSON, Bench, load_average, scrape, wait_count
from benchmarks.scale.systems import AGENT, start_schedulers
from volcano_py.api import constants as c
from volcano_py.devcluster import COMPLETE_AFTER
from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import PODGROUPS, PODS


async def churn(bench: Bench, client: KubeClient, system: str, filled: int) -> JSON:
    args = bench.args
    namespace = bench.cluster.create_namespace(f"churn-{system}")
    schedulers = start_schedulers(bench, system)
    started = next(iter(schedulers.values()))  # the one that serves the cycle histogram, if any
    alive = [one.process for one in schedulers.values()]
    try:
        for one in schedulers.values():
            await asyncio.to_thread(one.ready, args.deadline)
        watch = BindWatch(client, namespace)
        watcher = await watch.from_now()
        cycles = [await asyncio.to_thread(scrape, started.metrics_url)]
        loads: list[float] = []
        start = time.time()
        annotations = {COMPLETE_AFTER: f"{args.churn_job_seconds}s"}
        in_flight = asyncio.Semaphore(args.concurrency)

        async def submit(j: int) -> None:
            async with in_flight:
                group = f"c{j}"
                if system == kai.SYSTEM:  # KAI's own PodGroup, which its pods name as KAI reads it
                    await client.create(
                        kai.PODGROUPS.collection_path(namespace), kai.podgroup(group, args.churn_size)
                    )
                elif system not in (yunikorn.SYSTEM, AGENT):  # YuniKorn's gang is a task group on its pods
                    gang = [(PODGROUPS.collection_path(namespace), api_podgroup(group, args.churn_size))]
                    for path, body in peer_kube.own_terms(system, gang):  # coscheduling's own PodGroup
                        await client.create(path, body)

                async def create(i: int) -> None:
                    name = f"{group}-{i}"
                    if system == kai.SYSTEM:
                        body = kai.pod(name, group)
                    elif system == AGENT:  # a plain pod addressed to it: the agent takes no PodGroup
                        body = api_pod(name).scheduler(c.AGENT_SCHEDULER_NAME).obj()
                    else:
                        body = api_pod(name).group(group).obj()
                    body["metadata"].setdefault("annotations", {}).update(annotations)
                    if system == yunikorn.SYSTEM:
                        body = yunikorn.as_member(body, group, args.churn_size)
                    ((path, body),) = peer_kube.own_terms(system, [(PODS.collection_path(namespace), body)])
                    await client.create(path, body)
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
            if any(process.poll() is not None for process in alive):
                raise RuntimeError(f"{system} exited; see --scheduler-log")
        await asyncio.gather(*submitted)
        await wait_count(bench, watch, len(watch.created), min(args.deadline, 120.0), alive)
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
            "partial_gangs": partial_gangs(watch.created, watch.bound),
            "bind_ms_p50": round(percentile(latencies, 0.50), 1),
            "bind_ms_p99": round(percentile(latencies, 0.99), 1),
            "gang_ready_bind_ms_p50": round(percentile(ready, 0.50), 1),
            "gang_ready_bind_ms_p99": round(percentile(ready, 0.99), 1),
            "scheduler_cpu_s": round(sum(cpu_seconds(process.pid) for process in alive), 2),
            **{key: round(sum(rss_mib(process.pid)[key] for process in alive), 1)
               for key in ("rss_mib", "peak_rss_mib")},
            "load_average": load_average(),
            **(cycle_quantiles(cycles[0], cycles[-1]) if started.metrics_url else {}),
            "windows": churn_windows(
                watch.created, watch.bound, cycles, loads, start, args.window,
                math.ceil(args.minutes * 60 / args.window), filled,
            ),
        }  # fmt: skip
    finally:
        stop(alive)
        await clear(client, bench.cluster, namespace)
