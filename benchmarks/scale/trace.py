"""``bench_scale``'s trace mode: the openb GPU trace replayed live against each system, on KWOK nodes with
the trace's cores, memory and GPUs; how well each places it (GPUs allocated and stranded, gangs whole) and
how long its pods and gangs wait.

The cluster is the trace's 1,523 nodes drawn evenly to ``--nodes`` and its pods in the same proportion, in
creation order, with ``openb-gangs``' gangs (after every 40th pod a gang of 2-4 eight-GPU pods), exactly
as ``bench_placement`` replays it offline (``benchlib/openb.py``); a share of a GPU is asked for as a
whole card; each gang is its system's own gang object, and the null binder and kube-scheduler, which have
none, get its pods bare (``scale/tracework.py``). The null binder ignores capacity: its line is the floor
of the waits, not a placement (``overcommitted_nodes`` says by how much).

Arrival: the scheduler runs first, then the jobs are created at a steady ``--trace-rate`` pods a second (a
gang's pods together, after its gang object), and nothing departs (KWOK keeps every pod Running). A
scheduler then places work as it arrives, as on a real cluster, rather than a whole backlog it could sort
first: the trace's order decides what fragments the cluster, the measure of "stranded GPUs"; and a gang's
wait (its first pod created to its last bound) is what holds it beyond its own arrival, not its place in a
backlog. The trace asks for about twice the cluster's GPUs, so the cluster fills and then refuses work.

Measured per system, each in a namespace of its own with the cluster empty: at the first refusal (the
first pod, in creation order, still unbound ``--trace-refused-after`` seconds after its creation, pods that
fit no empty node left out) and at the end (every pod bound, or, once the last create is
``--trace-refused-after`` seconds old, ``--trace-settle`` seconds without a bind): pods bound, GPUs
allocated, stranded GPUs (``StrandedGpus``: free GPUs on a node in use that none of the workload's GPU
requests fits beside), from each bound pod's node and requests and the nodes' capacities; and, the same at
the first gang refused (the first gang pod so left), the room left for gang pods and the free GPUs split
below a gang pod's size (``gang_pod_room``, ``gpus_free_split``: what a packing conf keeps); gangs whole and
partly bound (a gang scheduler's must be 0); gang wait p50/p90 and one-pod wait p50/p99; the scheduler's
CPU seconds and peak RSS (summed over its processes), the control plane's CPU, the load average (at the
end, and the highest seen). YuniKorn's placeholders hold room for gangs that are not whole: those bound at
the end are counted apart (``yunikorn_placeholders_bound``). Volcano's ``default`` queue is made Open
before each run, as Volcano's queue controller (not run here) would leave it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from benchmarks.benchlib import peer_yunikorn as yunikorn
from benchmarks.benchlib.apiserver import BindWatch, clear
from benchmarks.benchlib.limits import memory_stop, parse_meminfo
from benchmarks.benchlib.objects import make_queue
from benchmarks.benchlib.procfs import cpu_seconds, meminfo, rss_mib
from benchmarks.benchlib.systems import stop
from benchmarks.scale.bench import JSON, Bench, StopPoint, load_average, progress
from benchmarks.scale.systems import start_schedulers
from benchmarks.scale.tracework import (
    GANGLESS,
    GPU_RULE,
    SINGLES_GROUPED,
    SIZE_RULE,
    FirstRefusal,
    Vector,
    Workload,
    capacity,
    fits_empty,
    gang_request,
    job_bodies,
    job_name,
    likely_requests,
    placement,
    request,
    waits,
)
from volcano_py.api import constants as c
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import PODS, QUEUES
from volcano_py.resources import GPU


def describe(work: Workload, trace_dir: str, rate: float) -> JSON:
    """The workload as the JSON states it, once per point."""
    return {
        "trace": trace_dir, "nodes": len(work.nodes), "gpus": work.gpus, "pods": work.pods,
        "jobs": len(work.jobs), "gangs": sum(1 for job in work.jobs if job.gang),
        "size_rule": SIZE_RULE, "gpu_rule": GPU_RULE, "arrival": f"steady, {rate} pods/s; nothing departs",
        "gangless_systems": list(GANGLESS), "one_pod_jobs_with_a_podgroup": list(SINGLES_GROUPED),
    }  # fmt: skip


async def create_job(
    client: KubeClient, bodies: list[tuple[str, JSON]], stamp: Callable[[str], None]
) -> None:
    """The gang object first, then the pods together, each ``stamp``ed once created; a create refused for
    load is tried again."""

    async def one(path: str, body: JSON) -> None:
        while True:
            try:
                await client.create(path, body)
                break
            except ApiError as exc:
                if exc.status not in (429, 500, 503, 504):
                    raise
                await asyncio.sleep(0.2)
        if body.get("kind") == "Pod":
            stamp(body["metadata"]["name"])

    for path, body in bodies:
        if body.get("kind") != "Pod":
            await one(path, body)
    await asyncio.gather(*(one(path, body) for path, body in bodies if body.get("kind") == "Pod"))


async def placeholders_bound(client: KubeClient, namespace: str) -> tuple[int, int]:
    """YuniKorn's placeholders bound in ``namespace`` and the GPUs they hold."""
    count, gpus, token = 0, 0, ""
    while True:
        page = await client.get(
            PODS.collection_path(namespace), limit=500, **({"continue": token} if token else {})
        )
        for pod in page.get("items") or []:
            if yunikorn.is_placeholder(pod) and (pod.get("spec") or {}).get("nodeName"):
                count += 1
                gpus += sum(
                    int(((one.get("resources") or {}).get("requests") or {}).get(GPU, "0"))
                    for one in pod["spec"]["containers"]
                )
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return count, gpus


async def open_queues(client: KubeClient) -> None:
    """Volcano's ``root`` and ``default`` queues, Open, as an installed Volcano's queue controller leaves
    them: Volcano's scheduler creates them when missing but schedules nothing in a queue not Open, and its
    controller does not run here (volcano-py's scheduler opens the ones it creates)."""
    for queue in (make_queue(c.ROOT_QUEUE).api(), make_queue(c.DEFAULT_QUEUE).api()):
        body = queue.obj()
        body["spec"]["reclaimable"] = body["metadata"]["name"] == c.DEFAULT_QUEUE
        if body["metadata"]["name"] == c.DEFAULT_QUEUE:
            body["spec"]["parent"] = c.ROOT_QUEUE
        try:
            await client.create(QUEUES.collection_path(), body)
        except ApiError as exc:
            if not exc.conflict:
                raise
        status = {"status": {"state": "Open"}}
        await client.patch(QUEUES.object_path(body["metadata"]["name"], None, "status"), status)


async def trace(bench: Bench, client: KubeClient, system: str, work: Workload) -> JSON:
    args = bench.args
    namespace = bench.cluster.create_namespace(f"trace-{system}")
    names = [f"node-{i}" for i in range(len(work.nodes))]
    capacities: dict[str, Vector] = {
        name: capacity(node) for name, node in zip(names, work.nodes, strict=True)
    }
    likely = likely_requests(work.jobs)
    gang = gang_request(work.jobs)
    requests: dict[str, Vector] = {}
    gangs: list[str] = []
    await open_queues(client)
    schedulers = start_schedulers(bench, system)
    alive = [one.process for one in schedulers.values()]
    workers_before = {name: cpu_seconds(pid) for name, pid in bench.workers.items()}
    try:
        for one in schedulers.values():
            await asyncio.to_thread(one.ready, args.deadline)
        watch = BindWatch(client, namespace)
        watcher = await watch.from_now()
        refusal = FirstRefusal(args.trace_refused_after)
        gang_refusal = FirstRefusal(args.trace_refused_after)  # the same over gangs' pods only
        at_refusal: JSON | None = None
        at_gang_refusal: JSON | None = None
        peak_load = [load_average()]
        never_fit = 0

        def placed() -> list[tuple[str, Vector]]:
            return [(watch.node[n], requests[n]) for n in list(watch.bound) if n in requests]

        def refused_at(pod: str) -> JSON:
            return {
                "pod": pod, "at_s": round(time.time() - start, 1), "pods_created": len(watch.created),
                "pods_bound": sum(1 for n in watch.created if n in watch.bound),
                **placement(capacities, placed(), likely, gang),
            }  # fmt: skip

        async def monitor() -> None:
            nonlocal at_refusal, at_gang_refusal
            while True:
                await asyncio.sleep(1.0)
                peak_load[0] = max(peak_load[0], load_average())
                if at_refusal is None and (pod := refusal.check(watch.created, watch.bound, time.time())):
                    at_refusal = refused_at(pod)
                    progress(f"trace {system}: first refusal {at_refusal}")
                if at_gang_refusal is None and (
                    pod := gang_refusal.check(watch.created, watch.bound, time.time())
                ):
                    at_gang_refusal = refused_at(pod)
                    progress(f"trace {system}: first gang refused {at_gang_refusal}")

        in_flight = asyncio.Semaphore(args.concurrency)

        def stamp(name: str) -> None:
            watch.created[name] = time.time()

        async def submit(bodies: list[tuple[str, JSON]]) -> None:
            async with in_flight:
                await create_job(client, bodies, stamp)

        start = time.time()
        monitoring = asyncio.create_task(monitor())
        submitted: list[asyncio.Task[None]] = []
        arrived = 0
        kinds = set(capacities.values())  # a few dozen kinds of node, however many nodes
        for index, job in enumerate(work.jobs):
            name = job_name(index, job)
            if job.gang:
                gangs.append(name)
            fits = fits_empty(job.shape, kinds)
            never_fit += 0 if fits else job.size
            for i in range(job.size):
                requests[f"{name}-{i}"] = request(job.shape)
                if fits:  # the creation order the first refusal is read in
                    refusal.created(f"{name}-{i}")
                    if job.gang:
                        gang_refusal.created(f"{name}-{i}")
            submitted.append(asyncio.create_task(submit(job_bodies(namespace, name, job, system))))
            arrived += job.size
            await asyncio.sleep(max(0.0, start + arrived / args.trace_rate - time.time()))
            if any(process.poll() is not None for process in alive):
                raise RuntimeError(f"{system} exited; see --scheduler-log")
            if index % 500 == 499:
                if reason := memory_stop(parse_meminfo(meminfo()), args.max_memory_used):
                    raise StopPoint(reason)
                progress(
                    f"trace {system}: {arrived:,} of {work.pods:,} pods created, {len(watch.bound):,} bound"
                )
        await asyncio.gather(*submitted)
        created_s = time.time() - start
        # Every pod given --trace-refused-after seconds (so a first refusal, if any, is seen), then settled:
        # every pod bound, or no new bind for --trace-settle seconds (the cluster refuses the rest).
        while (
            len(watch.bound) < len(watch.created)
            and time.time() < start + created_s + args.trace_refused_after
        ):
            await watch.next_change(1.0)
        while len(watch.bound) < len(watch.created):
            seen = len(watch.bound)
            await watch.next_change(args.trace_settle)
            if len(watch.bound) == seen or time.time() - start > args.deadline:
                break
        ended_s = time.time() - start
        await asyncio.sleep(1.5)  # the monitor's last look
        monitoring.cancel()
        watcher.cancel()
        await asyncio.gather(monitoring, watcher, return_exceptions=True)
        workers_after = {name: cpu_seconds(pid) for name, pid in bench.workers.items()}
        result: JSON = {
            "system": system, "pods": work.pods, "created": len(watch.created),
            "created_s": round(created_s, 1), "ended_s": round(ended_s, 1), "pods_fitting_no_node": never_fit,
            "bound": sum(1 for n in watch.created if n in watch.bound),
            "end": placement(capacities, placed(), likely, gang),
            "first_refusal": at_refusal,
            "first_gang_refusal": at_gang_refusal,
            **waits(watch.created, watch.bound, gangs),
            "scheduler_cpu_s": round(sum(cpu_seconds(process.pid) for process in alive), 2),
            "scheduler_peak_rss_mib": round(sum(rss_mib(p.pid)["peak_rss_mib"] for p in alive), 1),
            "cpu_seconds": {n: round(workers_after[n] - workers_before[n], 2) for n in workers_after},
            "load_average": load_average(), "load_average_max": peak_load[0],
        }  # fmt: skip
        if system == yunikorn.SYSTEM:
            count, gpus = await placeholders_bound(client, namespace)
            result["yunikorn_placeholders_bound"] = {"pods": count, "gpus": gpus}
        if len(schedulers) > 1:
            result["processes"] = {
                name: {"cpu_s": round(cpu_seconds(one.process.pid), 2),
                       "peak_rss_mib": rss_mib(one.process.pid)["peak_rss_mib"]}
                for name, one in schedulers.items()
            }  # fmt: skip
        return result
    finally:
        stop(alive)
        await clear(client, bench.cluster, namespace)
