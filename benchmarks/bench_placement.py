"""Greedy binpack versus CP-SAT placement on the same arrival sequence; JSON on stdout, progress on stderr.

Workloads:
  openb          the openb trace (``--openb DIR``): every pod is a one-pod job, in creation order.
  openb-gangs    the same trace with a gang of 2-4 eight-GPU pods (hard, inside one rack) every 40 arrivals.
  gang-heavy     synthetic: 8-GPU nodes in racks of 8 (tier 1) and spines of 8 racks (tier 2); mostly gangs.

Jobs arrive in sessions of ``--session`` jobs; each session is one ``solve``/``greedy`` call over the live
cluster; nothing departs, so the cluster fills until it refuses work. Reported per run: GPUs allocated and
stranded when the first job is refused and at the end, gangs inside one tier-1 HyperNode, hard-topology
violations, and per-session solve time. ``--timing-nodes`` repeats gang-heavy at other sizes, CP-SAT only.
The openb trace has no topology; racks of 8 consecutive nodes and spines of 8 racks are laid over it. The
trace is read, and its gangs laid, by ``benchlib/openb.py``, which ``bench_scale --mode trace`` replays live.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.benchlib import openb as trace
from volcano_py import log
from volcano_py.api.meta import NetworkTopologyMode
from volcano_py.api.topology import HyperNode, MemberType
from volcano_py.resources import CPU, GPU, MEMORY, Resource
from volcano_py.scheduler.solver import (
    Gang,
    NodeClass,
    PlacementPlan,
    PlacementProblem,
    SolverBudget,
    TaskClass,
    greedy,
    solve,
)
from volcano_py.scheduler.solver.fragmentation import StrandedGpus
from volcano_py.scheduler.solver.hypernode_tree import (
    HyperNodeTree,
    NetworkTopology,
    build_tree,
)

DIMS = (CPU, MEMORY, GPU)
MI = 2**20
HARD_RACK = NetworkTopology(NetworkTopologyMode.HARD, highest_tier_allowed=1)
HARD_SPINE = NetworkTopology(NetworkTopologyMode.HARD, highest_tier_allowed=2)
SOFT = NetworkTopology(NetworkTopologyMode.SOFT)


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Cluster:
    names: list[str]
    alloc: np.ndarray
    free: np.ndarray
    tree: HyperNodeTree

    @property
    def gpus(self) -> int:
        return int(self.alloc[:, 2].sum())

    def copy(self) -> Cluster:
        return Cluster(self.names, self.alloc, self.free.copy(), self.tree)

    def node_classes(self) -> tuple[NodeClass, ...]:
        rows = np.concatenate([self.free, self.alloc], axis=1)
        keys, inverse = np.unique(rows, axis=0, return_inverse=True)
        members: list[list[str]] = [[] for _ in keys]
        for i, k in enumerate(inverse.ravel().tolist()):
            members[k].append(self.names[i])
        out = []
        for k, key in enumerate(keys.tolist()):
            free = Resource(dict(zip(DIMS, key[:3], strict=True)))
            alloc = Resource(dict(zip(DIMS, key[3:], strict=True)))
            out.append(NodeClass(f"k{k}", free, alloc, tuple(members[k])))
        return tuple(out)


def racks_and_spines(names: Sequence[str], rack: int = 8, spine: int = 8) -> HyperNodeTree:
    def hypernode(
        name: str, tier: int, kind: MemberType, members: Sequence[str], tier_name: str
    ) -> HyperNode:
        return HyperNode.model_validate(
            {
                "metadata": {"name": name},
                "spec": {
                    "tier": tier,
                    "tierName": tier_name,
                    "members": [
                        {"type": kind.value, "selector": {"exactMatch": {"name": m}}} for m in members
                    ],
                },
            }
        )

    specs: list[HyperNode] = []
    rack_names = []
    for r, start in enumerate(range(0, len(names), rack)):
        rack_names.append(f"rack-{r}")
        specs.append(hypernode(rack_names[-1], 1, MemberType.NODE, names[start : start + rack], "rack"))
    for s, start in enumerate(range(0, len(rack_names), spine)):
        members = rack_names[start : start + spine]
        specs.append(hypernode(f"spine-{s}", 2, MemberType.HYPERNODE, members, "spine"))
    return build_tree(specs, {n: {} for n in names})


def make_cluster(names: list[str], alloc_rows: list[tuple[int, int, int]]) -> Cluster:
    alloc = np.array(alloc_rows, dtype=np.int64)
    return Cluster(names, alloc, alloc.copy(), racks_and_spines(names))


def job(
    name: str, pods: int, cpu_m: int, mem: int, gpu_m: int, topology: NetworkTopology | None = None
) -> Gang:
    task = TaskClass("worker", Resource({CPU: cpu_m, MEMORY: mem, GPU: gpu_m}), pods, pods)
    return Gang(name, (task,), pods, 0, topology)


# Workloads -------------------------------------------------------------------------------------------------
def openb(directory: Path, gangs: bool) -> tuple[Cluster, list[Gang]]:
    nodes = trace.read_nodes(directory)
    cluster = make_cluster(
        [n.name for n in nodes], [(n.cpu_milli, n.memory_mib * MI, n.gpus * 1000) for n in nodes]
    )
    jobs: list[Gang] = []
    for one in trace.arrivals(trace.read_pods(directory), gangs):
        shape = one.shape
        topology = HARD_RACK if one.gang else None
        jobs.append(
            job(one.name, one.size, shape.cpu_milli, shape.memory_mib * MI, shape.gpu_milli, topology)
        )
    return cluster, jobs


def gang_heavy(nodes: int, seed: int = 11) -> tuple[Cluster, list[Gang]]:
    """8-GPU nodes (64 cores, 512Gi); gangs with mixed CPU-per-GPU ratios; CPU-only pods that eat cores."""
    cluster = make_cluster([f"node-{i:05d}" for i in range(nodes)], [(64000, 512 * 2**30, 8000)] * nodes)
    rng = random.Random(seed)
    jobs: list[Gang] = []
    demand = 0
    i = 0

    def gpu_pod() -> tuple[int, int, int]:
        gpu = rng.choice([1, 2, 4])
        return gpu * rng.choice([4000, 6000, 8000, 12000]), gpu * rng.choice([32, 48, 64]) * 2**30, gpu * 1000

    while demand < cluster.gpus * 1.3:
        roll = rng.random()
        topo: NetworkTopology | None
        if roll < 0.25:  # data-parallel gangs of partial-node pods, hard inside one rack
            pods, (cpu, mem, gpu), topo = rng.choice([4, 6, 8, 12, 16]), gpu_pod(), HARD_RACK
        elif roll < 0.40:  # whole-node gangs, hard inside one spine
            pods, (cpu, mem, gpu), topo = rng.choice([2, 4, 8]), (48000, 384 * 2**30, 8000), HARD_SPINE
        elif roll < 0.65:  # soft-topology gangs
            pods, (cpu, mem, gpu), topo = rng.choice([2, 3, 4, 6]), gpu_pod(), SOFT
        elif roll < 0.85:  # single GPU pods
            pods, (cpu, mem, gpu), topo = 1, gpu_pod(), None
        else:  # CPU-only pods that land on GPU nodes
            pods, topo = 1, None
            cpu, mem, gpu = rng.choice([4000, 8000, 16000, 32000]), rng.choice([16, 64]) * 2**30, 0
        if topo is HARD_RACK:
            # Keep each rack gang placeable in an empty rack (8 nodes) with room to spare.
            per_node = min(8000 // gpu, 64000 // cpu, (512 * 2**30) // mem)
            pods = min(pods, 4 * per_node)
        jobs.append(job(f"job-{i}", pods, cpu, mem, gpu, topo))
        demand += pods * gpu
        i += 1
    return cluster, jobs


def likely_sizes(jobs: Sequence[Gang]) -> tuple[Resource, ...]:
    """Distinct GPU requests, reduced per GPU amount to the Pareto-smallest and Pareto-largest cpu/memory
    pairs: the smallest decide whether anything fits (stranded), the largest what big pods lose."""
    by_gpu: dict[int, set[tuple[int, int]]] = {}
    for g in jobs:
        for t in g.tasks:
            if t.request.amount(GPU) > 0:
                by_gpu.setdefault(t.request.amount(GPU), set()).add(
                    (t.request.amount(CPU), t.request.amount(MEMORY))
                )
    out = []
    for gpu, pairs in sorted(by_gpu.items()):
        for cpu, mem in sorted(pairs):
            below = any(c <= cpu and m <= mem and (c, m) != (cpu, mem) for c, m in pairs)
            above = any(c >= cpu and m >= mem and (c, m) != (cpu, mem) for c, m in pairs)
            if not below or not above:
                out.append(Resource({CPU: cpu, MEMORY: mem, GPU: gpu}))
    return tuple(out)


# Running ---------------------------------------------------------------------------------------------------
def stranded(cluster: Cluster, likely: Sequence[Resource]) -> float:
    measure = StrandedGpus(list(DIMS), likely)
    in_use = (cluster.free != cluster.alloc).any(axis=1)
    total = 0
    for row, used in zip(cluster.free.tolist(), in_use.tolist(), strict=True):
        total += measure.of(tuple(row), used)
    return total / 1000.0


def run(
    cluster: Cluster,
    jobs: Sequence[Gang],
    method: str,
    session: int,
    budget: SolverBudget,
    likely: tuple[Resource, ...],
    stop_at_refusal: bool = False,
) -> dict[str, object]:
    place: Callable[[PlacementProblem], PlacementPlan] = (
        greedy if method == "greedy" else (lambda p: solve(p, budget))
    )
    requests = {g.name: {t.name: t.request for t in g.tasks} for g in jobs}
    index = {n: i for i, n in enumerate(cluster.names)}
    first_refusal: dict[str, object] | None = None
    session_ms: list[float] = []
    cpu_ms: list[float] = []  # CPU time of the same calls: what the numbers are without other load
    placed_gangs = in_rack = hard_placed = hard_violations = refused = 0
    hard_bound = {
        g.name: g.topology.highest_tier_allowed
        for g in jobs
        if g.topology and g.topology.mode.value == "hard"
    }
    started = time.perf_counter()
    for s, start in enumerate(range(0, len(jobs), session)):
        batch = jobs[start : start + session]
        problem = PlacementProblem(cluster.node_classes(), tuple(batch), cluster.tree, likely)
        cpu_began = time.process_time()
        plan = place(problem)
        cpu_ms.append((time.process_time() - cpu_began) * 1000.0)
        session_ms.append(plan.solve_ms)
        for placement in plan.placed.values():
            for a in placement.assignments:
                req = requests[placement.gang][a.task]
                cluster.free[index[a.node]] -= np.array(
                    [req.amount(d) * a.count for d in DIMS], dtype=np.int64
                )
            if len(placement.nodes()) > 1 or placement.pods() > 1:
                placed_gangs += 1
                in_rack += placement.tier == 1
            if placement.gang in hard_bound:
                hard_placed += 1
                bound = hard_bound[placement.gang]
                hard_violations += bound is None or placement.tier > bound
        assert (cluster.free >= 0).all(), "a plan overcommitted a node"
        refused += len(plan.unplaced)
        if plan.unplaced and first_refusal is None:
            allocated = (cluster.gpus - int(cluster.free[:, 2].sum())) / 1000.0
            first_refusal = {
                "jobs_seen": start + len(batch),
                "gpus_allocated": allocated,
                "gpu_allocation_pct": round(100.0 * allocated * 1000 / cluster.gpus, 2),
                "stranded_gpus": stranded(cluster, likely),
                "reason_example": next(iter(plan.unplaced.values())).reason[:200],
            }
            if stop_at_refusal:
                break
        if s % 50 == 0:
            progress(f"  {method}: session {s}, {start + len(batch)}/{len(jobs)} jobs, {refused} refused")
    allocated = (cluster.gpus - int(cluster.free[:, 2].sum())) / 1000.0
    times = np.array(session_ms)
    return {
        "method": method,
        "sessions": len(session_ms),
        "first_refusal": first_refusal,
        "end": {
            "gpus_allocated": allocated,
            "gpu_allocation_pct": round(100.0 * allocated * 1000 / cluster.gpus, 2),
            "stranded_gpus": stranded(cluster, likely),
            "jobs_refused": refused,
        },
        "gangs_placed": placed_gangs,
        "gangs_in_one_tier1_hypernode": in_rack,
        "hard_topology_gangs_placed": hard_placed,
        "hard_topology_violations": hard_violations,
        "session_ms_p50": round(float(np.percentile(times, 50)), 2),
        "session_ms_p99": round(float(np.percentile(times, 99)), 2),
        "session_ms_max": round(float(times.max()), 2),
        "session_cpu_ms_p50": round(float(np.percentile(cpu_ms, 50)), 2),
        "session_cpu_ms_p99": round(float(np.percentile(cpu_ms, 99)), 2),
        "wall_s": round(time.perf_counter() - started, 1),
    }


def compare(
    name: str, cluster: Cluster, jobs: list[Gang], session: int, budget: SolverBudget
) -> dict[str, object]:
    likely = likely_sizes(jobs)
    progress(f"{name}: {len(cluster.names)} nodes, {cluster.gpus // 1000} GPUs, {len(jobs)} jobs")
    runs = {m: run(cluster.copy(), jobs, m, session, budget, likely) for m in ("greedy", "cpsat")}
    out: dict[str, object] = {
        "workload": name,
        "nodes": len(cluster.names),
        "gpus": cluster.gpus // 1000,
        **runs,
    }
    for moment in ("first_refusal", "end"):
        g, c = runs["greedy"][moment], runs["cpsat"][moment]
        if isinstance(g, dict) and isinstance(c, dict) and g["stranded_gpus"]:
            out[f"stranded_reduction_pct_{moment}"] = round(
                100.0 * (1 - c["stranded_gpus"] / g["stranded_gpus"]), 1
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--openb", type=Path, help="directory holding the openb CSV files")
    parser.add_argument("--session", type=int, default=16, help="jobs per scheduling session (default 16)")
    parser.add_argument(
        "--budget-ms", type=float, default=200.0, help="CP-SAT budget per session (default 200)"
    )
    parser.add_argument("--nodes", type=int, default=1000, help="gang-heavy cluster size (default 1000)")
    parser.add_argument("--timing-nodes", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument(
        "--timing-sessions", type=int, default=60, help="sessions per timing run (default 60)"
    )
    parser.add_argument(
        "--only", nargs="*", default=["openb", "openb-gangs", "gang-heavy", "timing"], help="parts to run"
    )
    args = parser.parse_args(argv)
    log.configure("warning", json=True)  # stdout carries only the JSON result
    budget = SolverBudget(time_ms=args.budget_ms)
    results: list[dict[str, object]] = []
    if args.openb:
        for gangs in (False, True):
            name = "openb-gangs" if gangs else "openb"
            if name in args.only:
                cluster, jobs = openb(args.openb, gangs)
                results.append(compare(name, cluster, jobs, args.session, budget))
    if "gang-heavy" in args.only:
        cluster, jobs = gang_heavy(args.nodes)
        results.append(compare("gang-heavy", cluster, jobs, args.session, budget))
    timing = []
    for nodes in args.timing_nodes if "timing" in args.only else []:
        cluster, jobs = gang_heavy(nodes)
        jobs = jobs[: args.timing_sessions * args.session]
        progress(f"timing: {nodes} nodes, {len(jobs)} jobs")
        r = run(cluster, jobs, "cpsat", args.session, budget, likely_sizes(jobs))
        timing.append(
            {
                "nodes": nodes,
                **{
                    k: r[k]
                    for k in (
                        "sessions",
                        "session_ms_p50",
                        "session_ms_p99",
                        "session_ms_max",
                        "session_cpu_ms_p50",
                        "session_cpu_ms_p99",
                    )
                },
            }
        )
    json.dump(
        {"budget_ms": args.budget_ms, "session_jobs": args.session, "results": results, "timing": timing},
        sys.stdout,
        indent=2,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
