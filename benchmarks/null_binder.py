"""The null binder: binds every pending ``schedulerName: volcano`` pod to the next node, round-robin, with no
policy at all. It runs on the scheduler's own client stack (the same KubeClient, informer and bind call), so
its pods/s is what this control plane on this machine can bind at most: the ceiling bench_e2e compares the
real scheduler against.

It prints ``ready`` on stdout once it has listed the nodes and the pending pods, and runs until SIGTERM.

Usage: python -m benchmarks.null_binder --kubeconfig K [--bind-concurrency 64] [--event-loop uvloop]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
import sys

from volcano_py import log
from volcano_py.kube import eventloop
from volcano_py.kube.binding import bind_pod
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.eventloop import DEFAULT_EVENT_LOOP, EVENT_LOOPS
from volcano_py.kube.informer import Informer
from volcano_py.kube.kinds import NODES, PODS
from volcano_py.kube.store import Delta, EventType


async def serve(kubeconfig: str, scheduler_name: str, bind_concurrency: int, stop: asyncio.Event) -> None:
    client = KubeClient(await load_api_client(kubeconfig))
    work: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()
    sent: set[str] = set()

    def on_pod(delta: Delta) -> None:
        pod = delta.new
        if delta.type is EventType.DELETED or pod is None:
            return
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        if key not in sent and not (pod.get("spec") or {}).get("nodeName"):
            sent.add(key)
            work.put_nowait((str(meta.get("namespace")), str(meta.get("name")), str(meta.get("uid"))))

    nodes = Informer(client, NODES, lambda _delta: None)
    pending = f"spec.schedulerName={scheduler_name},spec.nodeName="
    pods = Informer(client, PODS, on_pod, field_selector=pending)

    async def binder() -> None:
        await nodes.synced.wait()
        names = sorted(str(n["metadata"]["name"]) for n in nodes.store.values())
        turn = itertools.cycle(names)
        while True:
            namespace, name, uid = await work.get()
            try:
                await bind_pod(client, namespace, name, uid, next(turn))
            except ApiError as exc:
                if exc.status not in (404, 409):  # gone, or bound already: nothing to do
                    print(f"null binder: bind {namespace}/{name}: {exc}", file=sys.stderr)

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(nodes.run()), group.create_task(pods.run())]
            tasks += [group.create_task(binder()) for _ in range(bind_concurrency)]
            await nodes.synced.wait()
            await pods.synced.wait()
            print("ready", flush=True)
            await stop.wait()
            for task in tasks:
                task.cancel()
    finally:
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--scheduler-name", default="volcano")
    parser.add_argument("--bind-concurrency", type=int, default=64)
    parser.add_argument("--event-loop", choices=EVENT_LOOPS, default=DEFAULT_EVENT_LOOP)
    args = parser.parse_args()
    log.configure("warning")  # to stderr: stdout carries only the "ready" line

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        await serve(args.kubeconfig, args.scheduler_name, args.bind_concurrency, stop)

    eventloop.run(run(), args.event_loop)


if __name__ == "__main__":
    main()
