"""rescheduling's lowNodeUtilization arithmetic: which running pods to move off over-used nodes.

A node is *low* when it is schedulable and every resource with a threshold is used below it (``thresholds``,
percent of allocatable); a node that is not low is *high* when some resource is used above its target
(``targetThresholds``). Nothing moves when no node is low, when every node is, when none is high, or when
no more than ``numberOfNodes`` are low. Otherwise the high nodes are taken most used first (cpu% + memory%),
and on each its pods in eviction order (lowest priority first, then BestEffort, Burstable, Guaranteed); a
pod is taken while the node is still at or above a target and the low nodes still have room below their
targets in every resource. Each taken pod's request comes off the node's use and off that room; with
``nodeFit`` a pod is taken only if some single low node has room for its whole request, and that node's room
is the one charged.

Volcano reads utilization from a metrics source; here it is the pods' requests, so the numbers are the ones
the scheduler places by.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar

T = TypeVar("T")

# The resources a threshold can name: Volcano's cpu and memory, and the pod count.
RESOURCES: Final = ("cpu", "memory", "pods")
# Volcano's defaults: every threshold and target at 100 percent.
DEFAULT_PERCENT: Final = 100.0


@dataclass(frozen=True, slots=True)
class LowNodeConf:
    thresholds: Mapping[str, float] = field(default_factory=lambda: dict.fromkeys(RESOURCES, DEFAULT_PERCENT))
    targets: Mapping[str, float] = field(default_factory=lambda: dict.fromkeys(RESOURCES, DEFAULT_PERCENT))
    number_of_nodes: int = 0
    node_fit: bool = True


@dataclass(slots=True)
class NodeUse(Generic[T]):
    """One node: what it offers and what its pods request, per resource of ``RESOURCES``, and its running
    pods that may be moved, in eviction order, each with its request."""

    name: str
    allocatable: Mapping[str, float]
    used: dict[str, float]
    schedulable: bool = True
    pods: Sequence[tuple[T, Mapping[str, float]]] = ()

    def percent(self, resource: str) -> float:
        offered = self.allocatable.get(resource, 0.0)
        return 100.0 * self.used.get(resource, 0.0) / offered if offered > 0 else 0.0

    def score(self) -> float:
        return self.percent("cpu") + self.percent("memory")


def is_low(node: NodeUse[T], conf: LowNodeConf) -> bool:
    return node.schedulable and all(node.percent(r) < limit for r, limit in conf.thresholds.items())


def is_high(node: NodeUse[T], conf: LowNodeConf) -> bool:
    return any(node.percent(r) > limit for r, limit in conf.targets.items())


def _at_target(node: NodeUse[T], conf: LowNodeConf) -> list[str]:
    return [r for r, limit in conf.targets.items() if node.percent(r) >= limit]


def _room(node: NodeUse[T], conf: LowNodeConf) -> dict[str, float]:
    """What the node can take before it reaches its targets."""
    return {
        r: conf.targets.get(r, DEFAULT_PERCENT) * node.allocatable.get(r, 0.0) / 100.0 - node.used.get(r, 0.0)
        for r in RESOURCES
    }


def _fits(room: Mapping[str, float], request: Mapping[str, float]) -> bool:
    return all(room[r] >= request.get(r, 0.0) for r in RESOURCES)


def _take(room: dict[str, float], request: Mapping[str, float]) -> None:
    for r in RESOURCES:
        room[r] -= request.get(r, 0.0)


def victims(nodes: Sequence[NodeUse[T]], conf: LowNodeConf) -> list[tuple[T, str]]:
    """The pods to move, in order, each with why (the node it leaves and what it is over)."""
    low = [n for n in nodes if is_low(n, conf)]
    high = [n for n in nodes if not is_low(n, conf) and is_high(n, conf)]
    if not low or len(low) == len(nodes) or not high or len(low) <= conf.number_of_nodes:
        return []
    rooms = [_room(n, conf) for n in low]
    total = {r: sum(room[r] for room in rooms) for r in RESOURCES}
    out: list[tuple[T, str]] = []
    for node in sorted(high, key=lambda n: -n.score()):
        over = ", ".join(
            f"{r} requested {node.percent(r):.0f}% of allocatable, target {conf.targets[r]:g}%"
            for r in _at_target(node, conf)
        )
        why = (
            f"lowNodeUtilization: node {node.name} is over its targetThresholds ({over}) while "
            f"{len(low)} node(s) are under their thresholds"
        )
        for pod, request in node.pods:
            if not _at_target(node, conf) or any(total[r] <= 0 for r in RESOURCES):
                break
            if conf.node_fit:
                room = next((room for room in rooms if _fits(room, request)), None)
                if room is None:
                    continue
                _take(room, request)
            _take(total, request)
            for r in RESOURCES:
                node.used[r] = node.used.get(r, 0.0) - request.get(r, 0.0)
            out.append((pod, why))
    return out
