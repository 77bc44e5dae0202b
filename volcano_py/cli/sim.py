"""``volcano-py sim``: replay a workload through the real Session with a fake clock; report placement."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from volcano_py.scheduler.core import default_registry, parse_conf
from volcano_py.sim import html
from volcano_py.sim import workload as wl
from volcano_py.sim.engine import SimResult, Simulator, stderr_progress
from volcano_py.sim.policies import POLICIES, conf_for
from volcano_py.sim.report import summary, table

OPENB_POD_LISTS = {
    "default": "openb_pod_list_default.csv",
    "gpuspec33": "openb_pod_list_gpuspec33.csv",
    "multigpu50": "openb_pod_list_multigpu50.csv",
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "sim",
        help="simulate a workload offline and compare placement policies",
        description="Drive the scheduler's Session with a fake clock over a synthetic workload or the openb "
        "trace. Prints a table to stdout (or JSON with --json) and progress to stderr.",
    )
    parser.add_argument("source", choices=("synthetic", "openb"), help="where jobs come from")
    parser.add_argument(
        "--policy",
        action="append",
        choices=sorted(POLICIES),
        help="placement policy to run (repeatable; default: greedy and cpsat)",
    )
    parser.add_argument("--conf", type=Path, help="a volcano-scheduler.conf to run instead of --policy")
    parser.add_argument("--period", type=float, default=1.0, help="schedule period in simulated seconds")
    parser.add_argument("--horizon", type=float, help="stop after this many simulated seconds")
    parser.add_argument("--json", dest="json_out", action="store_true", help="print the JSON report")
    parser.add_argument(
        "--report",
        type=Path,
        help="also write a self-contained HTML page with plots (wait CDF, GPU allocation and stranded GPUs "
        "over time, each policy side by side)",
    )
    parser.add_argument("--seed", type=int, default=0)
    syn = parser.add_argument_group("synthetic")
    syn.add_argument("--nodes", type=int, default=64)
    syn.add_argument("--gpus-per-node", type=int, default=8)
    syn.add_argument("--jobs", type=int, default=300)
    syn.add_argument("--queues", default="default", help="comma-separated queue names jobs rotate over")
    syn.add_argument("--topology-fraction", type=float, default=0.3, help="share of gangs with hard topology")
    syn.add_argument("--philly", type=Path, help="Philly runtime CSV to draw durations from")
    ob = parser.add_argument_group("openb")
    ob.add_argument("--trace-dir", type=Path, help="directory holding the openb CSV files")
    ob.add_argument("--pod-list", choices=sorted(OPENB_POD_LISTS), default="default")
    ob.add_argument("--max-jobs", type=int, help="replay only the first N pods")
    ob.add_argument("--gangs", action="store_true", help="turn 8-GPU pods into gangs of 2-4 such pods")
    ob.add_argument(
        "--shared-gpus",
        action="store_true",
        help="ask GPU fractions as volcano.sh/gpu-memory of one card (Volcano's GPU sharing; deviceshare "
        "places them per card) instead of milli-GPUs of a node",
    )
    ob.add_argument(
        "--arrival-scale",
        type=float,
        default=1.0,
        help="multiply arrival times (e.g. 0.01 packs 100 days of arrivals into 1) to load the cluster",
    )
    parser.set_defaults(func=run)


def _workload(args: argparse.Namespace) -> wl.Workload:
    if args.source == "synthetic" and args.shared_gpus:
        raise SystemExit("volcano-py sim synthetic: --shared-gpus is for openb (its pods have GPU fractions)")
    if args.source == "synthetic":
        return wl.synthetic(
            nodes=args.nodes,
            gpus_per_node=args.gpus_per_node,
            jobs=args.jobs,
            seed=args.seed,
            queues=[q for q in args.queues.split(",") if q] or ["default"],
            durations=wl.philly_durations(args.philly) if args.philly else None,
            topology_fraction=args.topology_fraction,
        )
    if args.trace_dir is None:
        raise SystemExit("volcano-py sim openb: --trace-dir is required (the folder with openb_*.csv files)")
    node_csv = args.trace_dir / "openb_node_list_all_node.csv"
    pod_csv = args.trace_dir / OPENB_POD_LISTS[args.pod_list]
    for path in (node_csv, pod_csv):
        if not path.exists():
            raise SystemExit(f"volcano-py sim openb: {path} not found; --trace-dir must hold the openb CSVs")
    if args.arrival_scale <= 0:
        raise SystemExit(f"volcano-py sim openb: --arrival-scale {args.arrival_scale}: must be > 0")
    return wl.openb(
        node_csv,
        pod_csv,
        max_jobs=args.max_jobs,
        gang_variant=args.gangs,
        seed=args.seed,
        arrival_scale=args.arrival_scale,
        shared_gpus=args.shared_gpus,
    )


def run(args: argparse.Namespace) -> int:
    workload = _workload(args)
    if args.conf:
        confs = {args.conf.name: parse_conf(args.conf.read_text(), default_registry())}
    else:
        names = args.policy or ["greedy", "cpsat"]
        confs = {name: conf_for(name, shared_gpus=args.shared_gpus) for name in names}
    reports: dict[str, dict[str, Any]] = {}
    results: dict[str, SimResult] = {}
    for name, conf in confs.items():
        print(
            f"== {workload.name}: {len(workload.jobs)} jobs on {len(workload.nodes)} nodes, {name}",
            file=sys.stderr,
        )
        result = Simulator(
            workload, conf, period=args.period, horizon=args.horizon, progress=stderr_progress
        ).run()
        reports[name] = summary(result)
        results[name] = result
    if args.report:
        page = html.render(results, title=f"volcano-py sim: {workload.name}")
        args.report.write_text(page, encoding="utf-8")
        print(f"wrote {args.report}", file=sys.stderr)
    if args.json_out:
        print(json.dumps(reports, indent=2))
    else:
        sys.stdout.write(table(reports))
    return 0
