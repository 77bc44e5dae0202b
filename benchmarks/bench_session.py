"""One scheduling session (enqueue + allocate + backfill) over synthetic clusters; prints JSON lines.

Workloads, at 1,000 and 5,000 nodes of 8 GPUs / 96 CPUs / 768 GiB:
  gang-heavy     jobs of 8-256 identical pods (1, 2, 4 or 8 GPUs each), minMember = size
  heterogeneous  one pod per job, every pod a different request
  backlog        ten one-pod jobs per node, all alike (100m CPU) and not yet admitted: the first session of
                 ``bench_scale``'s one-pod backlog, whose enqueue admits them all

Confs: ``default`` (Volcano's built-in conf plus cpsat, used when none is given), ``volcano`` (Volcano's
Helm-shipped volcano-scheduler.conf: the built-in conf plus binpack) and ``volcano-ci`` (the plugins of its
volcano-scheduler-ci.conf: that plus sla, DRA-aware predicates and network-topology-aware, with
enqueue/allocate/backfill run here) and ``every-name`` (every action and plugin of Volcano's registries);
a ratio line compares volcano-ci with each other conf run.

``--dra``: each case runs twice, its GPUs once as ``nvidia.com/gpu`` requests (``"gpus": "extended"``) and
once through Dynamic Resource Allocation (``"gpus": "dra"``): no GPU in the nodes' allocatable, a
ResourceSlice of 8 devices per node (``volcano-py up``'s fake driver), and per GPU pod a ResourceClaim made
from a template for its count of devices, as kube-controller-manager makes it; a ratio line gives the DRA
run's pods/s over the extended-resource run's. Progress goes to stderr.

Usage: python -m benchmarks.bench_session [--nodes 1000 5000] [--workload gang-heavy heterogeneous]
       [--conf default volcano volcano-ci] [--repeat 3] [--python-gc] [--dra]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import sys
import time
from typing import Any

from benchmarks.benchlib.objects import Obj, make_node
from benchmarks.benchlib.workloads import WORKLOADS
from volcano_py import log
from volcano_py.api import dra
from volcano_py.devcluster.dra import device_class, gpu_slice
from volcano_py.resources import GPU
from volcano_py.scheduler.core import EVERY_VOLCANO_NAME_CONF, load_conf, run_session
from volcano_py.scheduler.framework.conf import VOLCANO_SHIPPED_CONF
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.runtime.heap import YOUNG_THRESHOLD

GPUS_PER_NODE = 8
# How a case's GPUs are asked for: extended resources, or DRA claims on ResourceSlices.
EXTENDED, DRA = "extended", "dra"


def as_claims(pods: list[Obj]) -> tuple[list[Obj], list[Obj]]:
    """The pods with their ``nvidia.com/gpu`` requests moved to ResourceClaims, and the claims: one per GPU
    pod, made from template ``gpus-<n>`` and owned by the pod, as the resourceclaim controller leaves it."""
    out: list[Obj] = []
    claims: list[Obj] = []
    for p in pods:
        requests = p["spec"]["containers"][0]["resources"]["requests"]
        count = int(requests.get(GPU, 0))
        if not count:
            out.append(p)
            continue
        meta = p["metadata"]
        claim_name = f"{meta['name']}-gpu"
        exactly = {"deviceClassName": dra.EXAMPLE_GPU_CLASS, "count": count}
        container = {
            "name": "c",
            "resources": {
                "requests": {k: v for k, v in requests.items() if k != GPU},
                "claims": [{"name": "gpu"}],
            },
        }
        out.append(
            {
                **p,
                "spec": {
                    **p["spec"],
                    "containers": [container],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": f"gpus-{count}"}],
                },
                "status": {
                    **p["status"],
                    "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim_name}],
                },
            }
        )
        claims.append(
            {
                "apiVersion": dra.RESOURCE_API_VERSION,
                "kind": dra.RESOURCE_CLAIM_KIND,
                "metadata": {
                    "name": claim_name,
                    "namespace": meta["namespace"],
                    "uid": f"claim-{meta['uid']}",
                    "ownerReferences": [
                        {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                         "controller": True},
                    ],
                },
                "spec": {"devices": {"requests": [{"name": "gpus", "exactly": exactly}]}},
            }
        )  # fmt: skip
    return out, claims


VOLCANO_CI_PLUGINS = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""
CONFS: dict[str, str | None] = {
    "default": None,
    "volcano": VOLCANO_SHIPPED_CONF,
    "volcano-ci": VOLCANO_CI_PLUGINS,
    "every-name": EVERY_VOLCANO_NAME_CONF,
}


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def progress(message: str) -> None:
    print(f"bench_session: {message}", file=sys.stderr, flush=True)


def run(
    workload: str,
    nodes: int,
    seed: int = 1,
    conf_name: str = "default",
    repeat: int = 1,
    gpus_as: str = EXTENDED,
) -> dict[str, Any]:
    rng = random.Random(seed)
    pods, groups = WORKLOADS[workload](nodes, rng)
    node_objs = [make_node(i).gpus(GPUS_PER_NODE if gpus_as == EXTENDED else 0).obj() for i in range(nodes)]
    classes: list[Obj] = []
    slices: list[Obj] = []
    claims: list[Obj] = []
    if gpus_as == DRA:
        pods, claims = as_claims(pods)
        classes = [device_class()]
        slices = [gpu_slice(n["metadata"]["name"], GPUS_PER_NODE) for n in node_objs]
    conf = load_conf(CONFS[conf_name])
    runs: list[float] = []
    best: tuple[float, float, float, SessionResult] | None = None
    for attempt in range(repeat):
        progress(f"{workload} {nodes} nodes conf {conf_name} gpus {gpus_as}: session {attempt + 1}/{repeat}")
        started = time.perf_counter()
        snapshot = Snapshot.build(
            nodes=node_objs,
            pods=pods,
            podgroups=groups,
            device_classes=classes,
            resource_slices=slices,
            resource_claims=claims,
        )
        built = time.perf_counter()
        # The last run's garbage is not this session's cost (a live scheduler collects it between cycles).
        gc.collect()
        cpu_started = time.process_time()
        result = run_session(snapshot, conf, "2026-01-01T01:00:00Z")
        cpu = time.process_time() - cpu_started
        seconds = time.perf_counter() - built
        runs.append(round(seconds, 3))
        if best is None or seconds < best[0]:
            best = (seconds, cpu, built - started, result)
    assert best is not None
    seconds, cpu, snapshot_seconds, result = best
    return {
        "workload": workload,
        "nodes": nodes,
        "conf": conf_name,
        "gpus": gpus_as,
        "pending_pods": len(pods),
        "jobs": len(groups),
        "placed_pods": len(result.binds),
        "unschedulable_jobs": len(result.explanations),
        "snapshot_seconds": round(snapshot_seconds, 3),
        # The fastest of --repeat runs (each on a fresh snapshot), and all of them.
        "seconds": round(seconds, 3),
        "seconds_runs": runs,
        "pods_per_second": round(len(result.binds) / seconds, 1) if seconds else None,
        # CPU time of this process: on a shared machine it is the cost that wall time hides.
        "cpu_seconds": round(cpu, 3),
        "pods_per_cpu_second": round(len(result.binds) / cpu, 1) if cpu else None,
        "action_seconds": {k: round(v, 3) for k, v in result.timings.items()},
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "gc_thresholds": list(gc.get_threshold()),
    }


def dra_ratio(extended: dict[str, Any], claimed: dict[str, Any]) -> dict[str, Any]:
    """The DRA run against the extended-resource run of the same case."""

    def over(key: str) -> float | None:
        a, b = claimed[key], extended[key]
        return round(a / b, 3) if a and b else None

    return {
        "workload": extended["workload"],
        "nodes": extended["nodes"],
        "conf": extended["conf"],
        "extended_pods_per_second": extended["pods_per_second"],
        "dra_pods_per_second": claimed["pods_per_second"],
        "dra_over_extended_pods_per_second": over("pods_per_second"),
        "dra_over_extended_pods_per_cpu_second": over("pods_per_cpu_second"),
        "placed_pods": {EXTENDED: extended["placed_pods"], DRA: claimed["placed_pods"]},
        "load_average": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--workload", nargs="+", choices=sorted(WORKLOADS), default=sorted(WORKLOADS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--conf", nargs="+", choices=sorted(CONFS), default=["default"])
    parser.add_argument("--repeat", type=int, default=1, help="sessions per case; the fastest is reported")
    parser.add_argument(
        "--dra", action="store_true", help="run each case with its GPUs as DRA claims too, and their ratio"
    )
    parser.add_argument(
        "--python-gc",
        action="store_true",
        help="keep CPython's collector thresholds (default: the scheduler process's, runtime/heap.py)",
    )
    args = parser.parse_args(argv)
    if not args.python_gc:
        _, middle, old = gc.get_threshold()
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    log.configure("warning")
    for workload in args.workload:
        for nodes in args.nodes:
            results = {name: run(workload, nodes, args.seed, name, args.repeat) for name in args.conf}
            for result in results.values():
                print(json.dumps(result), flush=True)
            if args.dra:
                for name, extended in results.items():
                    claimed = run(workload, nodes, args.seed, name, args.repeat, DRA)
                    print(json.dumps(claimed), flush=True)
                    print(json.dumps(dra_ratio(extended, claimed)), flush=True)
            ci = results.get("volcano-ci")
            for name, base in results.items():
                if ci is None or name == "volcano-ci":
                    continue
                ratio = {
                    "workload": workload,
                    "nodes": nodes,
                    f"ci_over_{name}_seconds": round(ci["seconds"] / base["seconds"], 3),
                    f"ci_over_{name}_cpu_seconds": round(ci["cpu_seconds"] / base["cpu_seconds"], 3),
                    "load_average": round(os.getloadavg()[0], 2),
                }
                print(json.dumps(ratio), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
