"""Queue share math, pure: weighted water-filling of the cluster into deserved shares, and share ratios.

Vectors here are ``dict[str, float]`` because weights split resources fractionally; callers round at the
edges. ``INF`` stands for "no limit" in a capability.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

INF = math.inf
EPS = 1e-6
Vec = dict[str, float]


@dataclass(slots=True)
class QueueDemand:
    name: str
    weight: float  # a queue's spec.weight, lowered by recent usage when that is turned on
    request: Vec
    capability: Vec = field(default_factory=dict)  # absent name: unlimited
    guarantee: Vec = field(default_factory=dict)


def leq(small: Mapping[str, float], big: Mapping[str, float]) -> bool:
    """``small <= big`` on every name of ``small`` (absent in ``big``: zero), tolerating float sums."""
    return all(v <= big.get(n, 0.0) + EPS for n, v in small.items())


def real_capability(total: Mapping[str, float], guarantees: Mapping[str, Vec], queue: QueueDemand) -> Vec:
    """What a queue can ever hold: its capability, and no more than what others' guarantees leave."""
    others: Vec = {}
    for name, g in guarantees.items():
        if name == queue.name:
            continue
        for r, v in g.items():
            others[r] = others.get(r, 0.0) + v
    out: Vec = {}
    for r, t in total.items():
        room = max(t - others.get(r, 0.0), 0.0)
        out[r] = min(room, queue.capability.get(r, INF))
    return out


def water_fill(total: Mapping[str, float], queues: list[QueueDemand]) -> dict[str, Vec]:
    """Deserved share per queue: repeatedly split what remains by weight among queues still wanting more,
    capping each at its real capability and its request, and never below its guarantee."""
    guarantees = {q.name: q.guarantee for q in queues}
    caps = {q.name: real_capability(total, guarantees, q) for q in queues}
    deserved: dict[str, Vec] = {q.name: {} for q in queues}
    remaining: Vec = dict(total)
    met: set[str] = set()
    while True:
        weight = sum(q.weight for q in queues if q.name not in met)
        if weight == 0:
            break
        before = dict(remaining)
        grown: Vec = {}
        for q in queues:
            if q.name in met:
                continue
            old = deserved[q.name]
            new: Vec = {}
            for r in set(total) | set(q.request) | set(q.guarantee):
                value = old.get(r, 0.0) + remaining.get(r, 0.0) * q.weight / weight
                value = min(value, caps[q.name].get(r, 0.0), q.request.get(r, 0.0))
                new[r] = max(value, q.guarantee.get(r, 0.0))
            deserved[q.name] = new
            for r, v in new.items():
                grown[r] = grown.get(r, 0.0) + v - old.get(r, 0.0)
            capped = all(
                new.get(r, 0.0) >= caps[q.name].get(r, 0.0) - EPS for r in q.request if q.request[r] > 0
            )
            if leq(q.request, new) or capped:
                met.add(q.name)
        for r, v in grown.items():
            remaining[r] = remaining.get(r, 0.0) - v
        if all(v <= EPS for v in remaining.values()) or all(
            abs(remaining.get(r, 0.0) - before.get(r, 0.0)) <= EPS for r in set(remaining) | set(before)
        ):
            break
    return deserved


def share(allocated: Mapping[str, float], deserved: Mapping[str, float]) -> float:
    """max over resources of allocated / deserved; holding what one does not deserve counts as 1."""
    out = 0.0
    for r, a in allocated.items():
        d = deserved.get(r, 0.0)
        ratio = (1.0 if a > EPS else 0.0) if d <= EPS else a / d
        out = max(out, ratio)
    return out
