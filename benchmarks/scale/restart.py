"""``bench_scale``'s restart mode: the cluster filled with running gangs and a history of Completed
Volcano Jobs (``fill_cluster``), then per system its scheduler (``scheduler_restart``) and its controller
(``controller_restart``) SIGKILLed and started again, timed to synced and to the next bind, PodGroup and
pod."""

from __future__ import annotations

import asyncio
import signal
import time

from benchmarks.benchlib import peer_kube
from benchmarks.benchlib.apiserver import BindWatch, count, fill
from benchmarks.benchlib.history import finished_jobs, one_pod_job
from benchmarks.benchlib.objects import api_pod, api_podgroup
from benchmarks.benchlib.procfs import cpu_seconds, rss_mib
from benchmarks.benchlib.profiling import profiler
from benchmarks.benchlib.profiling import stop as stop_profilers
from benchmarks.benchlib.systems import stop
from benchmarks.scale.bench import FILL, HISTORY, JSON, PROBE, Bench, guarded, load_average, progress
from benchmarks.scale.systems import start_controller, start_scheduler
from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import JOBS, PODGROUPS, PODS


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
    history_made = finished_jobs(client, HISTORY, args.finished_jobs, args.concurrency)
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
    probe = [
        (PODGROUPS.collection_path(PROBE), api_podgroup(name, 1)),
        (PODS.collection_path(PROBE), api_pod(name).group(name).obj()),
    ]
    for path, body in peer_kube.own_terms(system, probe):
        await client.create(path, body)
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
        created = await client.create(JOBS.collection_path(PROBE), one_pod_job(name))
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
