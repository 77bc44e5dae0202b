"""One agent scheduler attempt, as its worker runs it, against the pods the cluster holds; prints JSON lines.

No server: the agent scheduler's own cache and feed (``SchedulerCache`` with its ``shown_as``, ``AgentFeed``)
are fed watch events the way its informers would be, over ``--nodes`` nodes (32 CPUs each) already holding
``--held`` bound pods of the agent scheduler. Then, ``--repeat`` times, one pending pod arrives and is placed:
the cache's snapshot with it as the pod placed (``snapshot``), the session of the agent conf over it
(``session``: the views brought up to date, then allocate), both (``attempt``); then its bind is assumed, the
watch brings it bound two attempts later, and running three after that, as on a live cluster. A second case,
``one-gone``, deletes one held pod before each arrival (a finished pod cleaned up), which numbers every pod
afresh.

Each line: p50 and max of wall milliseconds per part, and the load average. What the live latency adds to
this (the watch, the bind's request, the event loop's other work) is ``bench_agent``'s.

Usage: python -m benchmarks.bench_agent_attempt [--nodes 5000] [--held 3000 10000] [--repeat 300]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from typing import Any

from kubernetes_asyncio import client as k8s_client

from benchmarks.benchlib.objects import NAMESPACE, api_pod, make_node, make_queue, node_name
from volcano_py import log
from volcano_py.api import constants as c
from volcano_py.kube.client import KubeClient
from volcano_py.kube.store import EventType
from volcano_py.scheduler.agent import pods as agent_pods
from volcano_py.scheduler.agent.conf import agent_registry, load_agent_conf
from volcano_py.scheduler.runtime.agent_feed import AgentFeed
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.cycle import DefaultCore

Obj = dict[str, Any]
AGENT = c.AGENT_SCHEDULER_NAME


class Cluster:
    """The agent scheduler's cache and feed, fed as its informers would be."""

    def __init__(self, client: KubeClient, nodes: int) -> None:
        self.cache = SchedulerCache(
            client, scheduler_names=(AGENT,), partners=[c.SCHEDULER_NAME, AGENT],
            shown_as=functools.partial(agent_pods.shown_as, AGENT),
        )  # fmt: skip
        self.feed = AgentFeed(AGENT, self.cache, gone=lambda _key: None)
        self.cache.watchers.append(self.feed.on_change)
        self.version = 0
        self.nodes = nodes
        for i in range(nodes):
            node = make_node(i).uid(f"uid-{node_name(i)}").ready().obj()
            node["status"]["allocatable"] = {"cpu": "32", "memory": "256Gi", "pods": "110"}
            self.watch("nodes", EventType.ADDED, node)
        for queue in (c.ROOT_QUEUE, c.DEFAULT_QUEUE):
            self.watch("queues", EventType.ADDED, make_queue(queue).open().obj())

    def watch(self, kind: str, event: EventType, obj: Obj) -> None:
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)
        informer = self.cache.informers[kind]
        delta = informer.store.apply(event, obj)
        if delta is not None:
            informer._dispatch(delta)

    def pod(self, i: int, node: str = "", phase: str = "Pending") -> Obj:
        body = api_pod(f"p{i}").ns().uid(f"uid-p{i}").scheduler(AGENT).obj()
        if node:
            body["spec"]["nodeName"] = node
        body["status"] = {"phase": phase}
        return body


def run_case(cluster: Cluster, core: DefaultCore, first: int, repeat: int, gone: bool) -> dict[str, Any]:
    conf = load_agent_conf(None)
    times: dict[str, list[float]] = {"snapshot": [], "session": [], "attempt": []}
    bound: list[tuple[int, str]] = []
    oldest = 0
    for i in range(first, first + repeat):
        if gone:
            cluster.watch("pods", EventType.DELETED, cluster.pod(oldest))
            oldest += 1
        cluster.watch("pods", EventType.ADDED, cluster.pod(i))
        key = f"{NAMESPACE}/p{i}"
        began = time.perf_counter()
        state = cluster.cache.snapshot(placing={key}, podgroups=False)
        snapped = time.perf_counter()
        outcome = core.run(state, conf, datetime.now(UTC))
        ended = time.perf_counter()
        times["snapshot"].append((snapped - began) * 1000)
        times["session"].append((ended - snapped) * 1000)
        times["attempt"].append((ended - began) * 1000)
        (bind,) = outcome.result.binds
        cluster.cache.assume(key, f"uid-p{i}", bind.node)
        bound.append((i, bind.node))
        if len(bound) > 2:  # the watch brings the bind two attempts later, the kubelet's start three later
            j, node = bound[-3]
            cluster.watch("pods", EventType.MODIFIED, cluster.pod(j, node))
        if len(bound) > 5:
            j, node = bound[-6]
            cluster.watch("pods", EventType.MODIFIED, cluster.pod(j, node, "Running"))
    return {
        part: {"p50_ms": round(statistics.median(values), 3), "max_ms": round(max(values), 3)}
        for part, values in times.items()
    }


async def measure(nodes: int, held: int, repeat: int) -> list[dict[str, Any]]:
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration()))
    try:
        cluster = Cluster(client, nodes)
        for i in range(held):
            cluster.watch("pods", EventType.ADDED, cluster.pod(i, node_name(i % nodes), "Running"))
        core = DefaultCore((AGENT,), registry=agent_registry())
        run_case(cluster, core, held, 20, gone=False)  # warm: the first attempts read every object
        lines = []
        first = held + 20
        for case, gone in (("one-new", False), ("one-gone", True)):
            figures = run_case(cluster, core, first, repeat, gone)
            first += repeat
            lines.append({"benchmark": "agent-attempt", "nodes": nodes, "held": held, "case": case,
                          **figures, "load_average": round(os.getloadavg()[0], 2)})  # fmt: skip
        return lines
    finally:
        await client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, nargs="+", default=[5000])
    parser.add_argument("--held", type=int, nargs="+", default=[3000, 10000])
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args(argv)
    if args.repeat < 1 or min(args.nodes) < 1 or min(args.held) < 0:
        parser.error("--repeat and --nodes must be at least 1, --held at least 0")
    log.configure("warning")
    for nodes in args.nodes:
        for held in args.held:
            print(f"[bench_agent_attempt] {nodes:,} nodes, {held:,} pods held", file=sys.stderr, flush=True)
            for line in asyncio.run(measure(nodes, held, args.repeat)):
                print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
