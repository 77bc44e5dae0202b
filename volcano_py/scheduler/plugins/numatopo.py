"""NUMA fit for CPU-pinned pods, as pure functions over a node's Numatopology (the numa-aware plugin's math).

The kubelet's static CPU manager pins a Guaranteed container to whole CPUs, and its topology manager refuses
a pod (TopologyAffinityError, after it was bound) whose CPUs cannot come from the NUMA cells its policy
demands. The scheduler repeats the kubelet's hint logic beforehand: for a container of ``n`` CPUs, a set of
cells is a hint when its free CPUs hold ``n``; a hint is preferred when no smaller set of cells could hold
``n`` even on an empty node; the best hint is preferred before not, then the narrowest, then the lowest.
``single-numa-node`` admits a preferred one-cell hint, ``restricted`` any preferred hint, ``best-effort``
anything (taking the best hint), ``none`` does not look.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from volcano_py.api.batch import NumaPolicy
from volcano_py.api.bodies.numatopology import (
    numatopology_allocatable,
    numatopology_cpu_detail,
    numatopology_policy,
)
from volcano_py.api.bodies.pod import pod_containers
from volcano_py.api.nodeinfo import CpusetError, PolicyName, parse_cpuset
from volcano_py.resources import QuantityError, parse_quantity


@dataclass(slots=True)
class NodeNuma:
    """A node's cells: which cell each CPU is in, the CPUs still free, and the kubelet's policies."""

    cpu_manager: str
    topology: str
    cell_of: dict[int, int]
    free: set[int] = field(default_factory=set)

    @property
    def cells(self) -> list[int]:
        return sorted(set(self.cell_of.values()))

    def capacity(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for cell in self.cell_of.values():
            out[cell] = out.get(cell, 0) + 1
        return out

    def free_by_cell(self) -> dict[int, int]:
        out = dict.fromkeys(self.cells, 0)
        for cpu in self.free:
            out[self.cell_of[cpu]] += 1
        return out


def node_numa(topology: Mapping[str, Any]) -> NodeNuma | None:
    """From a Numatopology object; None when it says nothing usable about CPUs."""
    detail = numatopology_cpu_detail(topology)
    cell_of: dict[int, int] = {}
    for cpu, info in detail.items():
        if str(cpu).isdigit() and isinstance(info, Mapping):
            cell_of[int(cpu)] = int(info.get("numa") or 0)
    if not cell_of:
        return None
    allocatable = numatopology_allocatable(topology, "cpu")
    try:
        free = set(parse_cpuset(allocatable)) if allocatable is not None else set(cell_of)
    except CpusetError:
        return None
    return NodeNuma(
        cpu_manager=numatopology_policy(topology, PolicyName.CPU_MANAGER),
        topology=numatopology_policy(topology, PolicyName.TOPOLOGY_MANAGER),
        cell_of=cell_of,
        free=free & set(cell_of),
    )


# --- the pod --------------------------------------------------------------------------------------------


def _quantity(resources: Mapping[str, Any], part: str, name: str) -> Fraction | None:
    value = (resources.get(part) or {}).get(name)
    if value is None:
        return None
    try:
        return parse_quantity(str(value))
    except QuantityError:
        return None


def guaranteed(pod: Mapping[str, Any]) -> bool:
    """Kubernetes' Guaranteed QoS: every container limits cpu and memory, with requests equal to limits."""
    containers = list(pod_containers(pod))
    if not containers:
        return False
    for container in containers:
        resources = container.get("resources") or {}
        for name in ("cpu", "memory"):
            limit = _quantity(resources, "limits", name)
            request = _quantity(resources, "requests", name)
            if limit is None or limit == 0 or (request is not None and request != limit):
                return False
    return True


def pinned_cpus(pod: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(container name, whole CPUs) of the containers the static CPU manager pins (integer CPU requests)."""
    out: list[tuple[str, int]] = []
    for container in pod_containers(pod):
        resources = container.get("resources") or {}
        cpu = _quantity(resources, "requests", "cpu") or _quantity(resources, "limits", "cpu")
        if cpu is not None and cpu > 0 and cpu.denominator == 1:
            out.append((str(container.get("name") or ""), int(cpu)))
    return out


# --- hints --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hint:
    cells: tuple[int, ...]
    preferred: bool


def best_hint(free: Mapping[int, int], capacity: Mapping[int, int], cpus: int) -> Hint | None:
    """The kubelet's best NUMA hint for ``cpus`` CPUs, or None when no set of cells has them free."""
    cells = sorted(capacity)
    fewest = next(
        (
            size
            for size in range(1, len(cells) + 1)
            if any(sum(capacity[c] for c in subset) >= cpus for subset in itertools.combinations(cells, size))
        ),
        None,
    )
    for size in range(1, len(cells) + 1):
        for subset in itertools.combinations(cells, size):
            if sum(free.get(c, 0) for c in subset) >= cpus:
                return Hint(subset, size == fewest)
    return None


def admits(policy: str, hint: Hint | None) -> bool:
    if policy in (NumaPolicy.NONE.value, NumaPolicy.BEST_EFFORT.value, ""):
        return True
    if hint is None or not hint.preferred:
        return False
    return policy != NumaPolicy.SINGLE_NUMA_NODE.value or len(hint.cells) == 1


@dataclass(frozen=True, slots=True)
class Assignment:
    cpus: frozenset[int]
    cells: frozenset[int]


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: str


def place(numa: NodeNuma, policy: str, containers: Sequence[tuple[str, int]]) -> Assignment | Refusal:
    """CPUs for every pinned container in turn (the lowest free ids of the best hint's cells), or why not."""
    free = set(numa.free)
    capacity = numa.capacity()
    taken: set[int] = set()
    for name, cpus in containers:
        by_cell = dict.fromkeys(capacity, 0)
        for cpu in free:
            by_cell[numa.cell_of[cpu]] += 1
        hint = best_hint(by_cell, capacity, cpus)
        if not admits(policy, hint):
            largest = max(by_cell.values(), default=0)
            if policy == NumaPolicy.SINGLE_NUMA_NODE.value:
                return Refusal(
                    f"have no NUMA node with {cpus} free CPUs for container {name} "
                    f"(policy {policy}; the freest NUMA node has {largest})"
                )
            return Refusal(
                f"cannot give container {name} its {cpus} CPUs on the fewest NUMA nodes (policy {policy})"
            )
        if hint is None:
            continue  # best-effort with nothing free in any cell set: the kubelet places it unpinned
        chosen = sorted(cpu for cpu in free if numa.cell_of[cpu] in hint.cells)[:cpus]
        free.difference_update(chosen)
        taken.update(chosen)
    return Assignment(frozenset(taken), frozenset(numa.cell_of[c] for c in taken))
