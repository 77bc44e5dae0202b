"""volcano-py, Volcano and the null binder at Volcano's real cluster sizes on the local control plane; JSON
on stdout, progress on stderr, an SVG of how each cost grows with ``--plot``.

Each ``(nodes, pods)`` point of ``--nodes`` and ``--pods`` gets a fresh DevCluster with that many KWOK nodes.
In it each ``--mode`` runs every ``--system`` in turn (``null``: ``null_binder.py``, the ceiling of this
control plane; ``volcano-py``; ``volcano-py-agent``, one-pod jobs in backlog and churn: volcano-py's agent
scheduler, plain pods addressed to it, ``--agent-workers`` workers; ``volcano``: Volcano's vc-scheduler and
vc-controller-manager built from ``--volcano-src`` by ``build_volcano.py``; ``volcano-py-sharded``, backlog
only: two volcano-py schedulers, each hard-sharded on half the nodes by a NodeShard the bench creates and
serving half the jobs under a schedulerName of its own, ``benchlib/sharded.py``; ``yunikorn``, backlog and
churn: Apache YuniKorn's scheduler built from ``--yunikorn-src`` by ``build_yunikorn.py``, each job one of its
applications and each gang a task group, its placeholder pods not counted, ``benchlib/peer_yunikorn.py``;
``kai``, backlog and churn: NVIDIA KAI-Scheduler's scheduler and binder, with its pod-grouper for one-pod
jobs, built from ``--kai-src`` by ``build_kai.py``, each shape in KAI's own PodGroups,
``benchlib/peer_kai.py``; ``kube-scheduler``, one-pod jobs only, and ``coscheduling``, scheduler-plugins'
Coscheduling, each gang its PodGroup ``scheduling.x-k8s.io``, ``benchlib/peer_kube.py``), each as its own
process, so its CPU and RSS are its own (the sharded system's and KAI's are the sums over its processes, each
also given under ``schedulers`` or ``processes``; the sharded ones with their pods bound, last bind and pods
bound outside their shard); the backlog runs the null binder again after each other system
(``--bracket-null``) and rates each against the null runs on either side of it. Every line carries the load
average; backlog and churn lines count the gangs left partly bound (``partial_gangs``).

backlog   For each shape (``1``: one-pod jobs, plain pods; ``20``: gangs of 20, each with a PodGroup of
          minMember 20) ``pods`` pods are created while no scheduler runs (Volcano's controller-manager and
          KAI's pod-grouper do run for plain pods, which need them for their PodGroups: the bench waits for
          them), then the scheduler starts. Reported: seconds from its start to the first and to the last
          bind, pods/s over that span, its CPU per pod and peak RSS, its cycle time p50/p99 (volcano-py,
          Volcano; from its start to the last bind, idle cycles included), and the CPU of kube-apiserver,
          etcd and kwok meanwhile and the API server's largest RSS.
restart   The cluster filled with ``pods`` running pods in gangs of ``--running-gang`` with their PodGroups
          (created bound, as bench_restart does) and ``--finished-jobs`` Volcano Jobs whose status is
          Completed (the history of Volcano's issue #5819: 140,000 pods and 87,031 Jobs there). Per system
          its scheduler runs, is SIGKILLed, a new one-pod job is created and the scheduler started again:
          seconds to synced (``/readyz``; Volcano's first cycle, which it runs once synced) and to that
          pod's bind, and RSS. Then the controller (``volcano-py controller`` / ``vc-controller-manager``,
          with its scheduler up): SIGKILLed, a new one-pod ``batch.volcano.sh`` Job created, started again:
          seconds to the Job's PodGroup and pod.
churn     On the filled cluster, jobs (a PodGroup and ``--churn-size`` pods created together, as a Job
          controller does, that KWOK completes after ``--churn-job-seconds``) arrive at ``--churn-rate``
          jobs/s for ``--minutes``; finished pods stay, so the cluster grows. Per ``--window``: bind latency
          p50/p99 (created -> bound, from a watch) of the pods created in it and, from the scheduler's
          ``volcano_e2e_scheduling_latency_milliseconds`` histogram (volcano-py and Volcano both serve it),
          cycle time p50/p99.
trace     Alone, on its own cluster: the openb GPU trace (``--trace-dir``, ../shared/traces/openb) live. Its
          1,523 nodes drawn evenly to ``--nodes`` (every k-th, or each repeated in place), as KWOK nodes
          with the trace's cores, memory and ``nvidia.com/gpu``; its pods in proportion, in creation order,
          with ``openb-gangs``' gangs of 2-4 eight-GPU pods (``benchlib/openb.py``, as ``bench_placement``);
          a share of a GPU asked for as a whole card; each gang its system's own gang object (none for the
          null binder and kube-scheduler). Created at ``--trace-rate`` pods/s while the system runs; nothing
          departs, so the cluster fills and refuses work. Per system: pods bound, GPUs allocated and stranded
          at the first refusal and at the end, gangs partly bound, gang wait p50/p90, one-pod wait p50/p99,
          CPU and peak RSS (``scale/trace.py``, its rules in ``scale/tracework.py``). ``--pods`` is unused.

The modes are ``scale/backlog.py``, ``scale/restart.py``, ``scale/churn.py`` and ``scale/trace.py``; each
system starts in ``scale/systems.py``. A point that does not fit stops the run, with the reason in the JSON:
memory in use on the machine above ``--max-memory-used`` (``/proc/meminfo``), or a phase not done within
``--deadline``.

Usage: python -m benchmarks.bench_scale --nodes 1000 2000 5000 --pods 10000 50000 100000 \\
           --system null volcano-py volcano --volcano-src /path/to/volcano --plot scale.svg > scale.json
       python -m benchmarks.bench_scale --mode trace --nodes 1000 --system null volcano-py volcano kai \\
           yunikorn kube-scheduler coscheduling --volcano-src ... --kai-src ... --yunikorn-src ... \\
           --scheduler-plugins-src ... > trace.json
       python -m benchmarks.bench_scale --plot-from scale.json --plot scale.svg
       python -m benchmarks.bench_scale --plot-style systems --plot-from one.json trace.json --plot a.svg
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from benchmarks.benchlib import peer_kai as kai
from benchmarks.benchlib import peer_kube, peersplot, scaleplot
from benchmarks.benchlib import peer_yunikorn as yunikorn
from benchmarks.benchlib.limits import memory_stop, parse_meminfo, scale_points
from benchmarks.benchlib.procfs import meminfo, rss_mib
from benchmarks.benchlib.profiling import FORMATS as PROFILE_FORMATS
from benchmarks.benchlib.sharded import SYSTEM as SHARDED
from benchmarks.benchlib.stats import bracketed, of_baseline
from benchmarks.benchlib.systems import REPO
from benchmarks.build_kai import built_commit, ensure_kai
from benchmarks.build_scheduler_plugins import built_from, ensure_scheduler_plugins
from benchmarks.build_volcano import ensure_volcano
from benchmarks.build_yunikorn import ensure_yunikorn
from benchmarks.scale.backlog import backlog
from benchmarks.scale.bench import GANG, JSON, WORKERS, Bench, StopPoint, load_average, progress
from benchmarks.scale.churn import churn
from benchmarks.scale.restart import controller_restart, fill_cluster, scheduler_restart
from benchmarks.scale.systems import AGENT, CONFS, VOLCANO_PY, scheduler_conf, supports
from benchmarks.scale.trace import describe, trace
from benchmarks.scale.tracework import node_bodies, workload
from volcano_py import log
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import KubeClient, load_api_client

SYSTEMS = ("null", "volcano-py", AGENT, "volcano", SHARDED, yunikorn.SYSTEM, kai.SYSTEM, *peer_kube.SYSTEMS)
BACKLOG_AND_CHURN_ONLY = (AGENT, yunikorn.SYSTEM, kai.SYSTEM)  # no restart mode for these
NO_CONTROLLER = ("null", *BACKLOG_AND_CHURN_ONLY, *peer_kube.SYSTEMS)  # no controller restart for these
MODES = ("backlog", "restart", "churn", "trace")
TRACE = "trace"  # run alone: its cluster is the trace's nodes, not the other modes' uniform ones
TRACE_DIR = REPO.parent / "shared" / "traces" / "openb"


# -- the run -------------------------------------------------------------------------------------------------


async def measure_point(bench: Bench, nodes: int, pods: int, point: JSON) -> None:
    args = bench.args
    client = KubeClient(await load_api_client(str(bench.kubeconfig)))
    try:
        if TRACE in args.mode:
            work = workload(args.trace_dir, nodes)
            point["trace"] = describe(work, str(args.trace_dir), args.trace_rate)
            point["trace"]["runs"] = []
            for system in args.system:
                progress(f"trace: {work.pods:,} pods on {nodes:,} nodes ({work.gpus:,} GPUs): {system}")
                point["trace"]["runs"].append(await trace(bench, client, system, work))
                bench.measured(point["trace"]["runs"][-1])
            return
        if "backlog" in args.mode:
            point["backlog"] = []
            for size in args.shapes:
                shape: list[JSON] = []
                systems = [system for system in args.system if supports(system, size)]
                for system in bracketed(systems) if args.bracket_null else systems:
                    progress(f"backlog {pods:,} pods in jobs of {size}: {system}")
                    line = await backlog(bench, client, pods, size, system)
                    shape.append(line)
                    point["backlog"].append(line)
                    of_baseline(shape)
                    bench.measured(line)
        if "restart" not in args.mode and "churn" not in args.mode:
            return
        point["fill"] = await fill_cluster(bench, client, nodes, pods)
        systems = [system for system in args.system if system != SHARDED]  # the sharded one: backlog only
        if "restart" in args.mode:
            point["restart"] = []
            for system in (s for s in systems if s not in BACKLOG_AND_CHURN_ONLY):
                progress(f"scheduler restart on {pods:,} pods: {system}")
                point["restart"].append(await scheduler_restart(bench, client, system, pods))
                bench.measured(point["restart"][-1])
            for system in (s for s in systems if s not in NO_CONTROLLER):
                progress(f"controller restart with {args.finished_jobs:,} finished Jobs: {system}")
                point["restart"].append(await controller_restart(bench, client, system, pods))
                bench.measured(point["restart"][-1])
        if "churn" in args.mode:
            point["churn"] = []
            for system in (s for s in systems if supports(s, args.churn_size)):
                progress(f"churn for {args.minutes} min on {pods:,} pods: {system}")
                line = await churn(bench, client, system, pods)
                point["churn"].append(line)
                bench.measured(line)
    finally:
        await client.close()


def run(args: argparse.Namespace) -> JSON:
    result: JSON = {"benchmark": "scale", "modes": args.mode, "systems": args.system, "cpus": os.cpu_count(),
                    "schedule_period_s": args.schedule_period, "points": []}  # fmt: skip
    confs = {system: scheduler_conf(args.conf, system, args.volcano_src) for system in args.system}
    if args.volcano_py_conf:
        confs.update({system: args.volcano_py_conf for system in args.system if system in VOLCANO_PY})
    if any(confs.values()):  # the conf each Volcano scheduler read, and its text
        result["confs"] = {system: {"file": str(conf), "text": conf.read_text()}
                           for system, conf in confs.items() if conf is not None}  # fmt: skip
    if args.yunikorn:  # what was built: the shim's commit, the core's version
        result["yunikorn_build"] = args.yunikorn.record
    if args.kai_bin:
        result["kai_commit"] = built_commit(args.kai_bin)
    if args.coscheduling_bin:  # what was built: scheduler-plugins' commit and tag
        result["coscheduling_build"] = built_from(args.coscheduling_bin)

    def save() -> None:
        if args.out:  # a long run stopped part way still leaves what it measured
            args.out.write_text(json.dumps(result, indent=2))

    points = scale_points(args.nodes, args.pods)
    if TRACE in args.mode:  # the trace's pods, drawn in proportion to the nodes
        points = sorted({(n, workload(args.trace_dir, n).pods) for n in args.nodes})
    for nodes, pods in points:
        point: JSON = {"nodes": nodes, "pods": pods, "load_average_at_start": load_average()}
        result["points"].append(point)
        reason = memory_stop(parse_meminfo(meminfo()), args.max_memory_used)
        if reason is None:
            reason = run_point(args, nodes, pods, point, save)
        if reason:
            point["stopped"] = result["stopped"] = reason
            progress(f"stopped at {nodes:,} nodes / {pods:,} pods: {reason}")
            break
        save()
    save()
    return result


def run_point(
    args: argparse.Namespace, nodes: int, pods: int, point: JSON, save: Callable[[], None]
) -> str | None:
    """Measure one point in a fresh cluster; the reason it did not fit, or None."""
    with DevCluster() as cluster, open(args.scheduler_log, "ab") as log_file:
        progress(f"creating {nodes:,} nodes")
        began = time.monotonic()
        try:
            if TRACE in args.mode:  # the trace's nodes, drawn to this many
                bodies = node_bodies(workload(args.trace_dir, nodes).nodes)
                names = cluster.create_node_manifests(bodies, timeout=args.deadline)
            else:
                names = cluster.create_nodes(
                    nodes, cpu="32", memory="256Gi", gpus=8, pods=110, timeout=args.deadline
                )
        except Exception as exc:  # the nodes alone do not fit in time: a larger point would not either
            return f"{nodes:,} nodes not Ready within {args.deadline:.0f} s: {exc}"
        point["nodes_ready_s"] = round(time.monotonic() - began, 1)
        progress(f"{nodes:,} nodes Ready in {point['nodes_ready_s']}s")
        cluster.apply_crds(REPO / "crds")
        if yunikorn.SYSTEM in args.system:
            yunikorn.install(cluster, args.scheduler_log_level)
        if kai.SYSTEM in args.system:
            kai.install(cluster, args.kai_src)
        peer_kube.install(cluster, args.system, args.scheduler_plugins_src)
        state = json.loads((cluster.layout.root / "state.json").read_text())
        workers = {child["name"]: child["pid"] for child in state["children"] if child["name"] in WORKERS}
        bench = Bench(args, cluster, log_file, workers, save, node_names=names)
        try:
            asyncio.run(measure_point(bench, nodes, pods, point))
        except StopPoint as stopped:
            return str(stopped)
        point["apiserver_rss_mib_at_end"] = rss_mib(workers["kube-apiserver"])
        point["load_average_at_end"] = load_average()
    return None


def write_plot(results: list[JSON], path: Path, style: str = "growth") -> None:
    """``growth``: how each cost grows with the cluster (one result); ``systems``: every system side by
    side at one size, the results' measures gathered (``benchlib/peersplot.py``)."""
    if style == "systems":
        points = {(p["nodes"], p["pods"]) for r in results for p in r.get("points", [])[:1]}
        sizes = ", ".join(f"{nodes:,} nodes" for nodes in sorted({nodes for nodes, _ in points}))
        path.write_text(peersplot.render(results, f"bench_scale: every system at {sizes or 'no point'}"))
    else:
        path.write_text(scaleplot.render(results[0]))
    progress(f"plot written to {path}")


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000])
    parser.add_argument("--pods", type=int, nargs="+", default=[10_000])
    parser.add_argument(
        "--mode", nargs="+", choices=MODES, default=[m for m in MODES if m != TRACE],
        help="trace runs alone, on the openb trace's nodes (--pods unused: its pods scale with the nodes)",
    )  # fmt: skip
    parser.add_argument("--system", nargs="+", choices=SYSTEMS, default=["null", "volcano-py"])
    parser.add_argument("--volcano-src", type=Path, help="a Volcano checkout, for --system volcano")
    parser.add_argument("--yunikorn-src", type=Path, help="a yunikorn-k8shim checkout, for --system yunikorn")
    parser.add_argument("--kai-src", type=Path, help="a KAI-Scheduler checkout, for --system kai")
    peer_kube.add_arguments(parser)
    parser.add_argument(
        "--shapes",
        type=int,
        nargs="+",
        default=[1, GANG],
        help="backlog job sizes: 1 (plain pods) and 20 (gangs with a PodGroup)",
    )
    parser.add_argument("--gang-singles", action="store_true", help="give one-pod jobs a PodGroup too")
    parser.add_argument(
        "--conf", choices=CONFS, default="builtin",
        help="volcano-py's and Volcano's scheduler conf: the one built in, or the one each Helm chart ships",
    )  # fmt: skip
    parser.add_argument(
        "--volcano-py-conf", type=Path, help="volcano-py's scheduler conf file (over --conf's)"
    )
    parser.add_argument(
        "--bracket-null",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="in the backlog, run the null binder before and after each other system, and give each of "
        "those its rate against the mean of the two (of_null)",
    )
    parser.add_argument(
        "--finished-jobs",
        type=int,
        default=5000,
        help="Completed Volcano Jobs in the restart's history (#5819 had 87,031)",
    )
    parser.add_argument(
        "--running-gang",
        type=int,
        default=GANG,
        help="pods per PodGroup of the restart's running pods (#5819 had 140,000 pods in 87,031 Jobs: "
        "1.6 per Job)",
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="churn's length")
    parser.add_argument("--window", type=float, default=60.0, help="churn's reporting window, seconds")
    parser.add_argument("--churn-rate", type=float, default=2.0, help="jobs arriving per second")
    parser.add_argument("--churn-size", type=int, default=10, help="pods per churn job")
    parser.add_argument(
        "--churn-create",
        choices=("together", "one-by-one"),
        default="together",
        help="a churn job's pods created concurrently, as Volcano's Job controller creates them, or each "
        "after the last (the shape of the churn runs before the fifteenth round)",
    )
    parser.add_argument("--trace-dir", type=Path, default=TRACE_DIR, help="the openb trace's CSV files")
    parser.add_argument("--trace-rate", type=float, default=20.0, help="trace pods created per second")
    parser.add_argument(
        "--trace-refused-after",
        type=float,
        default=30.0,
        help="seconds a trace pod waits unbound before the cluster counts as refusing work",
    )
    parser.add_argument(
        "--trace-settle", type=float, default=30.0, help="the trace's end: seconds after a bind with no other"
    )
    parser.add_argument("--churn-job-seconds", type=float, default=30.0, help="how long a churn pod runs")
    parser.add_argument(
        "--deadline",
        type=float,
        default=3600.0,
        help="seconds a phase (creates, binds, a restart) may take before the point stops",
    )
    parser.add_argument(
        "--max-memory-used",
        type=float,
        default=0.85,
        help="stop when this fraction of the machine's memory is in use",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=30.0,
        help="seconds after filling, and after a process's first start, before the kill",
    )
    parser.add_argument(
        "--quiet-cores",
        type=float,
        default=0.5,
        help="a backlog's scheduler starts once the API server, etcd and KWOK use fewer cores than this",
    )
    parser.add_argument("--quiet-limit", type=float, default=180.0, help="seconds to wait for that at most")
    parser.add_argument("--concurrency", type=int, default=64, help="creates in flight")
    parser.add_argument("--schedule-period", type=float, default=1.0)
    parser.add_argument("--bind-concurrency", type=int, default=64)
    parser.add_argument(
        "--agent-workers",
        type=int,
        default=2,
        help=f"{AGENT}'s --scheduler-worker-count (bench_agent's best at 5,000 nodes)",
    )
    parser.add_argument("--scheduler-log", type=Path, default=Path("bench_scale_scheduler.log"))
    parser.add_argument("--scheduler-log-level", default="warning")
    parser.add_argument("--out", type=Path, help="also write the JSON here, after each measurement")
    parser.add_argument(
        "--profile",
        type=Path,
        help="a folder: py-spy flame graphs of our scheduler per backlog run, and of each restart",
    )
    parser.add_argument(
        "--profile-format",
        choices=PROFILE_FORMATS,
        default="flamegraph",
        help="raw: py-spy's collapsed stacks (.txt) instead of an SVG",
    )
    parser.add_argument("--plot", type=Path, help="write the SVG of how each cost grows here")
    parser.add_argument(
        "--plot-from", type=Path, nargs="+", help="redraw --plot from these JSON results; runs nothing"
    )
    parser.add_argument(
        "--plot-style", choices=("growth", "systems"), default="growth",
        help="growth: each cost against the cluster's size; systems: a bar per system at one size",
    )  # fmt: skip
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.plot_from and not args.plot:
        parser.error("--plot-from needs --plot PATH.svg to write")
    for path in args.plot_from or ():
        if not path.is_file():
            parser.error(f"--plot-from {path}: no such file (the JSON a run printed)")
    if args.plot_from and len(args.plot_from) > 1 and args.plot_style != "systems":
        parser.error("--plot-from with several results draws --plot-style systems only")
    try:
        scale_points(args.nodes, args.pods)
    except ValueError as err:
        parser.error(str(err))
    if any(size < 1 for size in args.shapes) or args.churn_size < 1 or args.churn_rate <= 0:
        parser.error("--shapes and --churn-size must be at least 1, --churn-rate above 0")
    if TRACE in args.mode and args.mode != [TRACE]:
        parser.error("--mode trace runs alone: its cluster is the trace's nodes")
    if TRACE in args.mode and (others := [s for s in (SHARDED, AGENT) if s in args.system]):
        parser.error(f"--mode trace does not run {', '.join(others)} (one-pod jobs or shards of their own)")
    if (
        TRACE in args.mode
        and not (args.trace_dir / "openb_pod_list_default.csv").is_file()
        and not args.plot_from
    ):
        parser.error(f"--trace-dir {args.trace_dir}: no openb_pod_list_default.csv there")
    if args.trace_rate <= 0:
        parser.error("--trace-rate must be above 0")
    if not 0 < args.max_memory_used <= 1:
        parser.error(f"--max-memory-used is a fraction in (0, 1], got {args.max_memory_used}")
    if args.conf == "shipped" and "volcano" in args.system and args.volcano_src:
        shipped = scheduler_conf(args.conf, "volcano", args.volcano_src)
        if shipped is None or not shipped.is_file():
            parser.error(f"--conf shipped: no {shipped} in --volcano-src (Volcano's chart conf)")
    if args.volcano_py_conf and not args.volcano_py_conf.is_file():
        parser.error(f"--volcano-py-conf {args.volcano_py_conf}: no such file")
    args.volcano_bin = None
    if "volcano" in args.system and not args.plot_from:
        if not args.volcano_src:
            parser.error("--system volcano needs --volcano-src PATH (a checkout of volcano-sh/volcano)")
        args.volcano_bin = ensure_volcano(args.volcano_src.resolve())  # built before any cluster starts
    args.yunikorn = None
    if yunikorn.SYSTEM in args.system and not args.plot_from:
        if not args.yunikorn_src:
            parser.error("--system yunikorn needs --yunikorn-src PATH (a checkout of apache/yunikorn-k8shim)")
        args.yunikorn = ensure_yunikorn(args.yunikorn_src.resolve())
    args.kai_bin = None
    if kai.SYSTEM in args.system and not args.plot_from:
        if not args.kai_src:
            parser.error("--system kai needs --kai-src PATH (a checkout of NVIDIA/KAI-Scheduler)")
        args.kai_src = args.kai_src.resolve()
        args.kai_bin = ensure_kai(args.kai_src)
    args.coscheduling_bin = None
    if peer_kube.COSCHEDULING in args.system and not args.plot_from:
        if not args.scheduler_plugins_src:
            parser.error("--system coscheduling needs --scheduler-plugins-src PATH (its v0.34 checkout)")
        args.coscheduling_bin = ensure_scheduler_plugins(args.scheduler_plugins_src.resolve())
    return args


def main() -> None:
    log.configure("warning")  # logs to stderr; stdout carries the JSON alone
    args = parse_args()
    if args.plot_from:
        write_plot([json.loads(path.read_text()) for path in args.plot_from], args.plot, args.plot_style)
        return
    result = run(args)
    print(json.dumps(result, indent=2))
    if args.plot:
        write_plot([result], args.plot, args.plot_style)


if __name__ == "__main__":
    main()
