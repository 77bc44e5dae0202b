"""Faults on purpose, the long form: JSON on stdout, progress on stderr.

A fresh DevCluster with ``--nodes`` KWOK nodes (8 GPUs each) and our CRDs; the scheduler and controller run
as child processes behind a fault proxy; a steady workload of Volcano Jobs (gangs 1-64, two priorities with
preemption, some failing on purpose) runs while every fault kind of ``chaoslib.driver`` is injected
``--rounds`` times in a shuffled order. Reported per kind: faults injected, recovery to the next bind
(p50/p99/max, from the moment the fault began), invariant violations; and overall: violations, work lost
(Jobs that did not end in their planned phase, or lost pods' work), refused submissions, evictions, the
proxy's counts, the wall time and the load average at the end (two cores are shared on the machines here).

    python -m benchmarks.chaos --rounds 5 --jobs 200 > chaos.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.chaoslib.config import ALL_FAULT_KINDS, ChaosConfig
from benchmarks.chaoslib.driver import run_chaos
from volcano_py import log
from volcano_py.devcluster import DevCluster
from volcano_py.kube.leader import LeaseTiming

REPO = Path(__file__).resolve().parent.parent


def progress(message: str) -> None:
    print(f"[chaos {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=120, help="workload Jobs (default 120)")
    parser.add_argument(
        "--in-flight",
        type=int,
        default=14,
        help="workload Jobs unfinished at once (default 14: more GPUs asked than the 128 there, so gangs "
        "wait and high-priority ones preempt)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="times each fault kind is injected (default 3)")
    parser.add_argument(
        "--faults",
        nargs="+",
        choices=ALL_FAULT_KINDS,
        help="the fault kinds to inject (default: every kind; the leader-* ones need --ha)",
    )
    parser.add_argument(
        "--ha",
        action="store_true",
        help="two schedulers and two controllers electing leaders; adds the failover and fencing faults",
    )
    parser.add_argument("--lease-duration", type=int, default=5, help="with --ha (default 5s)")
    parser.add_argument("--renew-deadline", type=float, default=4.0, help="with --ha (default 4s)")
    parser.add_argument("--retry-period", type=float, default=1.0, help="with --ha (default 1s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--work-dir", type=Path, help="logs of the scheduler and controller (default: a temp dir)"
    )
    parser.add_argument(
        "--scheduler-conf",
        type=Path,
        help="the scheduler's conf (default: volcano-py up's), e.g. one with shuffle and rescheduling",
    )
    args = parser.parse_args()
    log.configure("warning")  # logs to stderr: stdout is the JSON alone
    work_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="volcano-py-chaos-"))
    config = ChaosConfig(
        work_dir=work_dir,
        jobs=args.jobs,
        in_flight=args.in_flight,
        rounds=args.rounds,
        faults=tuple(args.faults or ()),
        seed=args.seed,
        ha=args.ha,
        lease=LeaseTiming(args.lease_duration, args.renew_deadline, args.retry_period),
        **({"scheduler_conf": args.scheduler_conf.read_text()} if args.scheduler_conf else {}),
    )
    with DevCluster(out=sys.stderr) as cluster:
        progress(f"creating {args.nodes} nodes")
        cluster.create_nodes(args.nodes, cpu="32", memory="256Gi", gpus=8, pods=110)
        cluster.apply_crds(REPO / "crds")
        progress(f"logs in {work_dir}")
        report = asyncio.run(run_chaos(cluster, config, progress))
    print(
        json.dumps(
            {
                "benchmark": "chaos",
                "nodes": args.nodes,
                "gpus": args.nodes * 8,
                "jobs": args.jobs,
                "rounds": args.rounds,
                "seed": args.seed,
                "scheduler_conf": str(args.scheduler_conf or "volcano-py up's"),
                "ha": args.ha,
                "cpus": os.cpu_count(),
                **report.summary(),
                "records": [
                    {"kind": f.kind, "at_s": f.at_s, "recovery_s": f.recovery_s, "failover_s": f.failover_s,
                     "landed": f.landed, "violations": f.violations}
                    for f in report.faults
                ],
            },
            indent=2,
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
