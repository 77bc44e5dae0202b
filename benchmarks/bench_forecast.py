"""``vcctl job why``'s estimate on a large, busy cluster, without an API server; prints JSON lines.

A cluster of ``--nodes`` nodes (96 CPUs each) holding ``--pods`` pods of 3 CPUs in 10-pod jobs, laid in
layers that each cover every node once: a sixth of the layers finished (Succeeded, their PodGroups
Completed), the rest Running, so every node is equally busy (21 CPUs idle at 30 pods a node). Each job
declares its runtime (``volcano-py.io/expected-runtime``), drawn from ``RUNTIMES`` ten minutes apart, the
first ending ten minutes from now. One gang is waiting (PodGroup Pending): ``--gang`` pods of 30 CPUs, more
than any node has idle now, so it starts only once a few jobs on enough nodes have ended.

Then what ``vcctl job why`` runs for that gang, each within the wall-seconds bound it has there:

  forecast   ``volcano_py.forecast.forecast`` (``Bounds(seconds=--seconds)``): sessions run, wall seconds,
             the gang's estimated start (None: no estimate)
  whatif     ``what_would_make_it_run`` (``Budget(seconds=--seconds)``): sessions run, wall seconds, the
             suggestions proved

Each reported with the load average, so a reader can tell a quiet run from a loaded one. The same script
runs on an older checkout (it imports nothing newer than the two entry points), for before/after numbers.

Usage: python -m benchmarks.bench_forecast [--nodes 1000] [--pods 30000] [--gang 64] [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from datetime import UTC, datetime
from typing import Any

from benchmarks.benchlib.objects import Obj, make_node, make_pod, make_queue, node_name
from benchmarks.benchlib.workloads import podgroup
from volcano_py import log
from volcano_py.api import constants as c
from volcano_py.forecast import Bounds, forecast
from volcano_py.scheduler.core import ClusterObjects, load_conf
from volcano_py.whatif import Budget, what_would_make_it_run

NOW = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
STARTED = "2026-01-01T00:30:00Z"
JOB = 10  # pods per running or finished job
FINISHED_SHARE = 6  # one layer of jobs in this many has finished
RUNTIMES = 50  # distinct declared runtimes, ten minutes apart
GANG = "bench/waiting"


def progress(message: str) -> None:
    print(f"bench_forecast: {message}", file=sys.stderr, flush=True)


def cluster(nodes: int, pods: int, gang: int) -> ClusterObjects:
    node_objs = [make_node(i).uid(f"uid-{node_name(i)}").version(1).ready().obj() for i in range(nodes)]
    pod_objs: list[Obj] = []
    groups: list[Obj] = []
    rng = random.Random(1)
    for j in range(pods // JOB):
        name = f"job-{j}"
        finished = j * JOB // nodes % FINISHED_SHARE == 0
        groups.append(podgroup(name, JOB, "Completed" if finished else "Running"))
        runtime = f"{40 + 10 * rng.randrange(RUNTIMES)}m"  # started half an hour ago
        for i in range(JOB):
            node = node_name((j * JOB + i) % nodes)
            pod = make_pod(f"{name}-{i}").stored(j).version(1).req(cpu="3", memory="8Gi").group(name).on(node)
            pod = pod.annotate(c.EXPECTED_RUNTIME_KEY, runtime).phase("Succeeded" if finished else "Running")
            body = pod.obj()
            body["status"]["startTime"] = STARTED
            pod_objs.append(body)
    groups.append(podgroup("waiting", gang, "Pending"))
    for i in range(gang):
        pod = make_pod(f"waiting-{i}").stored(i).version(1).req(cpu="30", memory="64Gi").group("waiting")
        pod_objs.append(pod.annotate(c.EXPECTED_RUNTIME_KEY, "1h").obj())
    queues = [make_queue(name).version(1).open().obj() for name in ("root", "default")]
    return ClusterObjects(nodes=node_objs, pods=pod_objs, podgroups=groups, queues=queues)


def run(nodes: int, pods: int, gang: int, seconds: float) -> list[dict[str, Any]]:
    objects = cluster(nodes, pods, gang)
    conf = load_conf(None)
    base = {"nodes": nodes, "pods": len(objects.pods), "gang": gang, "budget_s": seconds}
    progress(f"{nodes} nodes, {len(objects.pods)} pods: the forecast")
    began = time.monotonic()
    answer = forecast(objects, conf, NOW, bounds=Bounds(seconds=seconds))
    wall = time.monotonic() - began
    eta = answer.etas.get(GANG)
    start = eta.start if eta is not None else None
    lines: list[dict[str, Any]] = [
        {
            "case": "forecast",
            **base,
            "sessions": answer.sessions,
            "seconds": round(wall, 2),
            "exhausted": answer.exhausted,
            "estimate": start.isoformat() if start is not None else None,
            "note": eta.why_unknown if eta is not None else "not waiting",
            "load_average": round(os.getloadavg()[0], 2),
        }
    ]
    progress(f"forecast: {answer.sessions} sessions, {wall:.1f}s; the what-if search")
    began = time.monotonic()
    found = what_would_make_it_run(objects, GANG, conf, now=STARTED, budget=Budget(seconds=seconds))
    wall = time.monotonic() - began
    lines.append(
        {
            "case": "whatif",
            **base,
            "sessions": found.sessions,
            "seconds": round(wall, 2),
            "exhausted": found.exhausted,
            "runs_now": found.runs_now,
            "suggestions": [s.text() for s in found.suggestions],
            "load_average": round(os.getloadavg()[0], 2),
        }
    )
    progress(f"whatif: {found.sessions} sessions, {wall:.1f}s")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=30000)
    parser.add_argument("--gang", type=int, default=64, help="pods of the waiting gang")
    parser.add_argument("--seconds", type=float, default=5.0, help="the forecast's and the what-if's bound")
    args = parser.parse_args(argv)
    log.configure("warning")
    for line in run(args.nodes, args.pods, args.gang, args.seconds):
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
