"""Consolidation on the openb trace with gangs: CP-SAT moves, greedy moves, and none; JSON on stdout.

Each seed builds one workload (``volcano_py.sim.workload.openb`` with ``gang_variant``: every 8-GPU pod of
the trace becomes a gang of 2 or 4 such pods, drawn from the seed; durations are the trace's
``deletion_time - creation_time``; arrivals are multiplied by ``--arrival-scale``), and every policy replays
that same workload through the real Session in the simulator (``volcano_py.sim``):

  cpsat               Volcano's shipped conf plus the cpsat plugin: no consolidation.
  consolidate         cpsat plus the consolidate action (CP-SAT planner: fewest moves, each moved pod
                      re-placed in the same plan).
  consolidate-greedy  the same action with ``planner: greedy``: empty the emptiest nodes until the gang fits.

The defaults are the regime the results in docs/solver.md come from: pods 1,600-2,500 of the trace (900
jobs, 17 gangs, arrivals over ~10 minutes at ``--arrival-scale 0.002``) on every 8th node (191 nodes, 777
GPUs), each run stopped 30 simulated minutes after the last arrival. GPU demand climbs to ~90 % of the
cluster by the end of the arrivals, so gangs wait on scattered free GPUs rather than on capacity.

``--node-every K`` keeps every K-th node of the trace's node list (sorted by GPUs, so the mix of node sizes
is kept) so that a few thousand jobs load the cluster; ``--max-jobs`` replays the first N pods of the list
and ``--skip-jobs`` leaves out the first ones in arrival order (a window of the trace).
Reported per policy and seed: gang wait (queueing delay of jobs of more than one pod) mean and p95, the
same over all jobs, the GPU allocation rate (time-weighted allocated GPUs / total) over the arrival window
and over the whole run, stranded GPUs (mean), evictions and the GPU-minutes the evicted pods had run, how
long moved pods waited to be bound again, sessions and wall time. Every session asserts no gang is left
partly evicted (the simulator raises). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from volcano_py import log
from volcano_py.resources import GPU
from volcano_py.sim import workload as wl
from volcano_py.sim.engine import SimResult, Simulator, stderr_progress
from volcano_py.sim.policies import conf_for
from volcano_py.sim.report import mean, percentile, summary

POLICIES = ("cpsat", "consolidate", "consolidate-greedy")


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def workload(args: argparse.Namespace, seed: int) -> wl.Workload:
    load = wl.openb(
        args.openb / "openb_node_list_all_node.csv",
        args.openb / "openb_pod_list_default.csv",
        max_jobs=args.max_jobs,
        gang_variant=True,
        seed=seed,
        arrival_scale=args.arrival_scale,
    )
    nodes = sorted(load.nodes, key=lambda n: (n.allocatable.amount(GPU), n.name))[:: args.node_every]
    return replace(load, nodes=tuple(nodes), jobs=load.jobs[args.skip_jobs :])


def allocation_between(result: SimResult, start: float, end: float) -> float:
    """Time-weighted allocated GPUs / total between ``start`` and ``end`` (samples hold until the next)."""
    samples = result.samples
    area = 0.0
    for here, after in zip(samples, [*samples[1:], None], strict=True):
        lo = max(here.at, start)
        hi = min(after.at if after else end, end)
        if hi > lo:
            area += here.allocated_gpus * (hi - lo)
    span = end - start
    return area / span / (result.total_gpus or 1) if span > 0 else 0.0


def measure(result: SimResult, load: wl.Workload) -> dict[str, Any]:
    report = summary(result)
    first, last = load.jobs[0].arrival, load.jobs[-1].arrival
    gangs = sum(1 for j in load.jobs if j.replicas > 1)
    return {
        "gangs": gangs,
        "gangs_placed": len(result.gang_delay),
        "gang_wait_mean_s": mean(result.gang_delay),
        "gang_wait_p95_s": percentile(result.gang_delay, 95),
        "gang_wait_max_s": max(result.gang_delay, default=None),
        "job_wait_mean_s": mean(result.queueing_delay),
        "job_wait_p95_s": percentile(result.queueing_delay, 95),
        "gpu_allocation_arrivals": round(allocation_between(result, first, last), 4),
        "gpu_allocation_run": report["gpu_allocation_mean"],
        "stranded_gpus_mean": report["stranded_gpus_mean"],
        "evictions": result.evictions,
        "evicted_gpu_minutes": report["evicted_gpu_minutes"],
        "moved_pods_rebound": len(result.moved_wait),
        "moved_wait_mean_s": mean(result.moved_wait),
        "moved_wait_p95_s": percentile(result.moved_wait, 95),
        "completion_p95_s": percentile(result.completion_time, 95),
        "jobs_unfinished": result.unfinished_jobs,
        "sessions": result.sessions,
        "simulated_s": result.end_time,
        "wall_s": round(result.session_seconds, 1),
    }


def pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over seeds of each figure (None when a seed has none)."""
    out: dict[str, Any] = {}
    for key in runs[0]:
        if key == "seed":
            continue
        values = [r[key] for r in runs if r[key] is not None]
        out[key] = round(sum(values) / len(values), 4) if values else None
    return out


def tree_commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--openb", type=Path, required=True, help="directory holding the openb CSV files")
    parser.add_argument("--max-jobs", type=int, default=2500, help="replay the first N pods (default 2500)")
    parser.add_argument(
        "--arrival-scale", type=float, default=0.002, help="multiply arrival times (default 0.002)"
    )
    parser.add_argument(
        "--skip-jobs",
        type=int,
        default=1600,
        help="leave out the first N jobs in arrival order (default 1600; the first pods arrive months "
        "before the rest, and its 8-GPU pods are mostly between pods 1,600 and 3,400)",
    )
    parser.add_argument("--node-every", type=int, default=8, help="keep every K-th node (default 8)")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0, 1, 2], help="workload seeds (default 0 1 2)"
    )
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES)
    parser.add_argument(
        "--drain",
        type=float,
        default=1800.0,
        help="stop each run this many simulated seconds after the last arrival (default 1800; a negative "
        "value runs until every job has finished, and the trace's longest pods run for months)",
    )
    args = parser.parse_args(argv)
    if args.node_every < 1 or args.arrival_scale <= 0:
        parser.error("--node-every must be >= 1 and --arrival-scale > 0")
    log.configure("warning", json=True)  # stdout carries only the JSON result
    runs: dict[str, list[dict[str, Any]]] = {p: [] for p in args.policies}
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for seed in args.seeds:
        load = workload(args, seed)
        gpus = sum(n.allocatable.amount(GPU) for n in load.nodes) / 1000
        progress(
            f"seed {seed}: {len(load.jobs)} jobs ({sum(j.replicas > 1 for j in load.jobs)} gangs) on "
            f"{len(load.nodes)} nodes, {gpus:g} GPUs"
        )
        for policy in args.policies:
            horizon = load.jobs[-1].arrival + args.drain if args.drain >= 0 else None
            result = Simulator(load, conf_for(policy), horizon=horizon, progress=stderr_progress).run()
            figures = measure(result, load)
            runs[policy].append({"seed": seed, **figures})
            progress(f"  {policy}: {json.dumps(figures)}")
    json.dump(
        {
            "started": started,
            "commit": tree_commit(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "argv": sys.argv[1:] if argv is None else list(argv),
            "results": {
                policy: {"per_seed": per_seed, "mean_over_seeds": pooled(per_seed)}
                for policy, per_seed in runs.items()
            },
        },
        sys.stdout,
        indent=2,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
