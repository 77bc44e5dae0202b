"""Preemption- and reclaim-heavy sessions over a full cluster; prints one JSON line per run.

Workloads, on N nodes of 8 GPUs / 96 CPUs / 768 GiB, every GPU held by low-priority work (a mix of whole
gangs of 2-GPU pods and elastic jobs of 1-GPU pods) when high-priority gangs (2-16 pods of 1, 2, 4 or 8
GPUs, minMember = size) arrive:

  preempt   everything in one queue; the arrivals preempt lower-priority jobs
  reclaim   the running work fills queue ``batch`` (deserved: half the GPUs), the arrivals land in queue
            ``train`` (deserved: the other half) and reclaim from ``batch``

Reported: seconds per session, evictions, gangs made placeable, evictions per placed gang, and the
check that no victim gang was left below its minMember.

Usage: python -m benchmarks.bench_preempt [--nodes 1000] [--workload preempt reclaim] [--arrivals 40]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

from benchmarks.benchlib.objects import Obj, make_node, make_pod, make_podgroup, make_queue, node_name
from volcano_py.log import configure
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.snapshot import Snapshot

CONF = """
actions: "enqueue, allocate, {action}, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: capacity
  - name: nodeorder
"""

PRIORITY_CLASSES = [{"metadata": {"name": "low"}, "value": 10}, {"metadata": {"name": "high"}, "value": 1000}]


def pod(name: str, group: str, gpu: int, n: int, *, node: str | None, priority: str) -> Obj:
    return (
        make_pod(name).stored(n).req(cpu=str(gpu * 10), memory=f"{gpu * 80}Gi", gpu=gpu).group(group)
        .priority(priority, 1000 if priority == "high" else 10)
        .on(node).phase("Running" if node else "Pending").obj()
    )  # fmt: skip


def podgroup(name: str, min_member: int, queue: str, priority: str, phase: str) -> Obj:
    return (
        make_podgroup(name, min_member)
        .ns()
        .created()
        .queue(queue)
        .priority_class(priority)
        .phase(phase)
        .obj()
    )


def full_cluster(nodes: int, queue: str, rng: random.Random) -> tuple[list[Obj], list[Obj]]:
    """Every GPU of every node held: per node either one 4-pod gang of 2-GPU pods, or 1-GPU pods of an
    elastic job (minMember 2) that spans several nodes."""
    pods: list[Obj] = []
    groups: list[Obj] = []
    elastic: list[tuple[str, int]] = []
    for i in range(nodes):
        name = node_name(i)
        if rng.random() < 0.5:
            group = f"gang-{i}"
            groups.append(podgroup(group, 4, queue, "low", "Running"))
            pods.extend(pod(f"{group}-{k}", group, 2, len(pods), node=name, priority="low") for k in range(4))
        else:
            if not elastic or elastic[-1][1] >= 24:
                group = f"elastic-{i}"
                groups.append(podgroup(group, 2, queue, "low", "Running"))
                elastic.append((group, 0))
            group, used = elastic[-1]
            pods.extend(
                pod(f"{group}-{used + k}", group, 1, len(pods), node=name, priority="low") for k in range(8)
            )
            elastic[-1] = (group, used + 8)
    return pods, groups


def arrivals(count: int, queue: str, rng: random.Random, start: int) -> tuple[list[Obj], list[Obj]]:
    pods: list[Obj] = []
    groups: list[Obj] = []
    for j in range(count):
        size, gpu = rng.choice([2, 4, 8, 16]), rng.choice([1, 2, 4, 8])
        name = f"urgent-{j}"
        groups.append(podgroup(name, size, queue, "high", "Inqueue"))
        pods.extend(
            pod(f"{name}-{k}", name, gpu, start + len(pods), node=None, priority="high") for k in range(size)
        )
    return pods, groups


def queues(nodes: int, workload: str) -> list[Obj]:
    if workload == "preempt":
        return [make_queue("default").obj()]
    return [make_queue(name).deserved(gpu=str(nodes * 4)).obj() for name in ("batch", "train")]


def run(workload: str, nodes: int, count: int, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    running_queue, arriving_queue = ("default", "default") if workload == "preempt" else ("batch", "train")
    pods, groups = full_cluster(nodes, running_queue, rng)
    new_pods, new_groups = arrivals(count, arriving_queue, rng, len(pods))
    action = "preempt" if workload == "preempt" else "reclaim"
    conf = load_conf(CONF.format(action=action))
    snapshot = Snapshot.build(
        nodes=[make_node(i).obj() for i in range(nodes)],
        pods=pods + new_pods,
        podgroups=groups + new_groups,
        queues=queues(nodes, workload),
        priority_classes=PRIORITY_CLASSES,
    )
    min_member = {g["metadata"]["name"]: g["spec"]["minMember"] for g in groups}
    members: dict[str, int] = {}
    for p in pods:
        group = p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
        members[group] = members.get(group, 0) + 1
    started = time.perf_counter()
    result = run_session(snapshot, conf, "2026-01-01T01:00:00Z")
    seconds = time.perf_counter() - started
    placed: dict[str, int] = {}
    for p in result.pipelined:
        placed[p.job] = placed.get(p.job, 0) + 1
    need = {f"bench/{g['metadata']['name']}": g["spec"]["minMember"] for g in new_groups}
    gangs = sum(1 for job, n in placed.items() if n >= need.get(job, 1 << 30))
    lost: dict[str, int] = {}
    for e in result.evictions:
        group = e.name.rsplit("-", 1)[0]
        lost[group] = lost.get(group, 0) + 1
    broken = sum(1 for g, n in lost.items() if 0 < members[g] - n < min_member[g])
    return {
        "workload": workload,
        "nodes": nodes,
        "running_pods": len(pods),
        "arriving_gangs": count,
        "seconds": round(seconds, 3),
        "action_seconds": {k: round(v, 3) for k, v in result.timings.items()},
        "evictions": len(result.evictions),
        "gangs_placed": gangs,
        "evictions_per_placed_gang": round(len(result.evictions) / gangs, 2) if gangs else None,
        "victim_gangs_left_below_min": broken,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000])
    parser.add_argument(
        "--workload", nargs="+", choices=["preempt", "reclaim"], default=["preempt", "reclaim"]
    )
    parser.add_argument("--arrivals", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    configure("warning", json=True)
    for workload in args.workload:
        for nodes in args.nodes:
            print(json.dumps(run(workload, nodes, args.arrivals, args.seed)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
