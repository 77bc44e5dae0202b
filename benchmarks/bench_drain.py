"""The scheduler core's cycles over a one-pod backlog as it drains, without an API server; prints JSON lines.

``bench_scale.py``'s one-pod backlog, replayed through the runtime's ``DefaultCore.run`` with the objects the
cache would hand it at each cycle: ten one-pod jobs per node (PodGroups Pending, pods alike), then

  first        the session that places them all (enqueue admits every PodGroup, allocate binds every pod)
  assumed      the next cycle: every pod shown bound to its node (the cache's view of an assumed pod)
  confirmed    ``--step`` pods a cycle come back from the watch bound (a new version of each, nodeName set),
               until all have
  running      then ``--step`` a cycle turn Running (KWOK's status patch), until all have

After every cycle each PodGroup is shown with the status the session gave it (the cache shows a status
the binder is writing, or holding back behind the binds, from the moment it is handed over). Each phase's
CPU seconds, its CPU per pod changed, and its cycles' p50/max CPU, with the load average. What a
pod's bind costs the scheduler's own CPU after its session placed it: the live drain's rate is the machine's
CPU over everyone's CPU per pod, so this is the part of ours that grows with the pods bound.

Usage: python -m benchmarks.bench_drain [--nodes 5000] [--step 3500] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from typing import Any

from benchmarks.benchlib.objects import Obj, make_node, make_queue
from benchmarks.benchlib.workloads import backlog
from volcano_py import log
from volcano_py.scheduler.core import ClusterObjects
from volcano_py.scheduler.framework.podgroup_status import podgroup_status
from volcano_py.scheduler.runtime.cache import bound_view
from volcano_py.scheduler.runtime.cycle import CycleOutcome, DefaultCore, default_core
from volcano_py.scheduler.runtime.heap import collect_from_here, tune_collector

NOW = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)


def progress(message: str) -> None:
    print(f"bench_drain: {message}", file=sys.stderr, flush=True)


def versioned(obj: Obj, version: int, **changes: Obj) -> Obj:
    """A new version of ``obj`` as a watch hands it over: a fresh dict, its resourceVersion moved."""
    meta = {**obj["metadata"], "resourceVersion": str(version)}
    return {**obj, "metadata": meta, **changes}


class Drain:
    def __init__(self, nodes: int) -> None:
        self.nodes = [make_node(i).obj() for i in range(nodes)]
        self.pods, self.groups = backlog(nodes, random.Random(1))
        self.queues = [make_queue(name).version(1).open().obj() for name in ("root", "default")]
        self.generation = 0
        self.core: DefaultCore = default_core(("volcano",))
        self.conf = self.core.load_conf(None)

    def cycle(self) -> tuple[CycleOutcome, float]:
        self.generation += 1
        state = ClusterObjects(nodes=list(self.nodes), pods=list(self.pods), podgroups=list(self.groups),
                               queues=self.queues, generation=self.generation)  # fmt: skip
        cpu = time.process_time()
        outcome = self.core.run(state, self.conf, NOW)
        spent = time.process_time() - cpu
        self.promise(outcome)
        return outcome, spent

    def promise(self, outcome: CycleOutcome) -> None:
        """Show each PodGroup with the status the session gave it, as the cache does while the binder holds
        the write back behind the binds."""
        updates = {f"{u.namespace}/{u.name}": u for u in outcome.result.podgroup_updates}
        if updates:
            self.groups = [
                {**g, "status": podgroup_status(updates[key(g)], g.get("status"))} if key(g) in updates else g
                for g in self.groups
            ]


def phase(name: str, cpus: list[float], changed: int, base: dict[str, Any]) -> dict[str, Any]:
    total = sum(cpus)
    return {
        "phase": name,
        **base,
        "cycles": len(cpus),
        "pods_changed": changed,
        "cpu_s": round(total, 3),
        "cpu_us_per_pod": round(total / max(1, changed) * 1e6, 1),
        "cycle_cpu_ms_p50": round(statistics.median(cpus) * 1000, 2),
        "cycle_cpu_ms_max": round(max(cpus) * 1000, 2),
        "load_average": round(os.getloadavg()[0], 2),
    }


def run(nodes: int, step: int) -> list[dict[str, Any]]:
    drain = Drain(nodes)
    base = {"nodes": nodes, "pods": len(drain.pods), "step": step}
    progress(f"{nodes} nodes, {len(drain.pods)} one-pod jobs: the first session")
    first, cpu = drain.cycle()
    binds = {f"{b.namespace}/{b.name}": b for b in first.result.binds}
    if len(binds) != len(drain.pods):
        raise SystemExit(f"first session: {len(binds)} binds for {len(drain.pods)} pods")
    lines = [phase("first", [cpu], len(binds), base)]
    collect_from_here()  # the process freezes what it holds once a cycle has read it

    # The binder's promises: each pod shown on its node (and each PodGroup with its new status, above).
    drain.pods = [bound_view(p, binds[key(p)].node, binds[key(p)].annotations) for p in drain.pods]
    _, cpu = drain.cycle()
    lines.append(phase("assumed", [cpu], len(drain.pods), base))

    for name, change in (("confirmed", confirmed), ("running", running)):
        cpus: list[float] = []
        for start in range(0, len(drain.pods), step):
            for i in range(start, min(start + step, len(drain.pods))):
                drain.pods[i] = change(drain.pods[i])
            outcome, cpu = drain.cycle()
            if outcome.result.binds or outcome.result.evictions:
                raise SystemExit(f"{name}: a cycle decided something over pods already bound")
            cpus.append(cpu)
        lines.append(phase(name, cpus, len(drain.pods), base))
        progress(f"{name}: {sum(cpus):.2f}s CPU over {len(cpus)} cycles")
    return lines


def key(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}"


STAMP = "2026-01-01T01:00:00Z"


def condition(kind: str) -> Obj:
    return {"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": STAMP}


def confirmed(pod: Obj) -> Obj:
    """As the API server leaves a pod it bound: the node, and the PodScheduled condition."""
    return versioned(pod, 2, status={"phase": "Pending", "conditions": [condition("PodScheduled")]})


def running(pod: Obj) -> Obj:
    """As KWOK's stage leaves a bound pod: Running, ready, addresses and its container started."""
    status = {
        "phase": "Running",
        "conditions": [condition(c) for c in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
        "hostIP": "10.0.0.1",
        "podIP": "10.0.0.2",
        "startTime": STAMP,
        "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "image": "busybox",
                               "imageID": "", "started": True, "state": {"running": {"startedAt": STAMP}}}],
    }  # fmt: skip
    return versioned(pod, 3, status=status)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, nargs="+", default=[5000])
    parser.add_argument("--step", type=int, default=3500, help="pods changed between two cycles")
    args = parser.parse_args(argv)
    log.configure("warning")
    tune_collector()
    for nodes in args.nodes:
        for line in run(nodes, args.step):
            print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
