"""Pending work a scheduling session is handed in-process (``bench_session``, ``bench_drain``): pods and their
PodGroups, drawn from a seeded ``random.Random`` so that every run, and every conf compared, meets the same.

  gang-heavy     jobs of 8-256 identical pods (1, 2, 4 or 8 GPUs each), minMember = size, until their GPUs
                 reach 95% of the cluster's (nodes of 8 GPUs)
  heterogeneous  one pod per job, every pod a different request, about 90% of the cluster's CPU
  backlog        ten one-pod jobs per node, all alike (100m CPU) and not yet admitted (PodGroups Pending)
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.benchlib.objects import Obj, make_pod, make_podgroup

Workload = Callable[[int, random.Random], tuple[list[Obj], list[Obj]]]


def pod(name: str, group: str, cpu: str, memory: str, gpu: int, n: int) -> Obj:
    """The ``n``-th pending pod of the workload, of PodGroup ``group``."""
    return make_pod(name).stored(n).req(cpu, memory, gpu).group(group).obj()


def podgroup(name: str, min_member: int, phase: str = "Inqueue") -> Obj:
    return make_podgroup(name, min_member).ns().created().phase(phase).obj()


def gang_heavy(nodes: int, rng: random.Random) -> tuple[list[Obj], list[Obj]]:
    """Gangs until their GPUs reach 95% of the cluster's."""
    budget = int(nodes * 8 * 0.95)
    pods: list[Obj] = []
    groups: list[Obj] = []
    j = 0
    while budget > 0:
        size = rng.choice([8, 16, 32, 64, 128, 256])
        gpu = rng.choice([1, 2, 4, 8])
        if size * gpu > budget:
            size, gpu = max(1, budget // 8), 8
            if size * gpu > budget:
                size, gpu = budget, 1
        budget -= size * gpu
        name = f"gang-{j}"
        groups.append(podgroup(name, size))
        cpu, memory = str(gpu * 10), f"{gpu * 80}Gi"
        pods.extend(pod(f"{name}-{i}", name, cpu, memory, gpu, len(pods)) for i in range(size))
        j += 1
    return pods, groups


def heterogeneous(nodes: int, rng: random.Random) -> tuple[list[Obj], list[Obj]]:
    """One-pod jobs, each request different, sized to fill about 90% of the cluster's CPU."""
    pods: list[Obj] = []
    groups: list[Obj] = []
    count = nodes * 12
    for j in range(count):
        name = f"pod-{j}"
        groups.append(podgroup(name, 1))
        cpu = f"{rng.randint(500, 13_000)}m"
        memory = f"{rng.randint(256, 90_000)}Mi"
        gpu = rng.choice([0, 0, 0, 1])
        pods.append(pod(name, name, cpu, memory, gpu, j))
    return pods, groups


def backlog(nodes: int, rng: random.Random) -> tuple[list[Obj], list[Obj]]:
    """Ten one-pod jobs per node, as a backlog drain finds them: PodGroups Pending, every pod alike."""
    pods: list[Obj] = []
    groups: list[Obj] = []
    for j in range(nodes * 10):
        name = f"job-{j}"
        groups.append(podgroup(name, 1, "Pending"))
        pods.append(pod(name, name, "100m", "0", 0, j))
    return pods, groups


WORKLOADS: dict[str, Workload] = {
    "backlog": backlog,
    "gang-heavy": gang_heavy,
    "heterogeneous": heterogeneous,
}
