"""A node's CPU utilisation, and what each sharding policy makes of it: pass or not (filter), how good
(score), how many to keep (select). The arithmetic is Volcano's, so a node lands in the same shard under
either.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api import constants
from volcano_py.api.bodies.node import node_capacity
from volcano_py.api.bodies.pod import pod_containers
from volcano_py.api.objects import annotations_of, labels_of, name_of
from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.api.shard_policies import AllocationRate, NodeLimit, PolicyArguments, ShardPolicy, Warmup
from volcano_py.resources import QuantityError, amount_of

# Utilisation is compared at two decimals, bounds and node alike: 0.6049 is 0.60 to filter and score.
UTIL_SCALE = 100


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """What the sharding rules need of a node: its labels, CPU capacity, and the CPU its pods request."""

    name: str
    cpu_capacity_milli: int
    cpu_requested_milli: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def cpu_utilisation(self) -> float:
        """Requested over capacity, at most 1; a node reporting no CPU counts as idle, as in Volcano."""
        if self.cpu_capacity_milli <= 0:
            return 0.0
        return min(1.0, self.cpu_requested_milli / self.cpu_capacity_milli)


def _cpu_milli(resources: Mapping[str, Any] | None) -> int:
    value = (resources or {}).get("cpu")
    if value is None:
        return 0
    try:
        return amount_of("cpu", value)
    except QuantityError:
        return 0  # the API server admitted it; a value we cannot read must not stop the whole assignment


def pod_cpu_milli(pod: Mapping[str, Any]) -> int:
    """The CPU a pod holds on its node, in millicores.

    Volcano's reading: the containers' CPU requests of a pod still holding the node (not Succeeded or Failed,
    not the mirror of a static pod). Init containers and overhead are left out, as Volcano leaves them out.
    """
    if pod_phase(pod) in (PodPhase.SUCCEEDED, PodPhase.FAILED):
        return 0
    if constants.MIRROR_POD_ANNOTATION_KEY in annotations_of(pod):
        return 0
    return sum(
        _cpu_milli((container.get("resources") or {}).get("requests")) for container in pod_containers(pod)
    )


def node_usage(node: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> NodeUsage:
    """A node's usage from its object and the pods bound to it (wire form): what they hold
    (``pod_cpu_milli``) over the node's CPU *capacity* (not allocatable), as Volcano reads it."""
    return NodeUsage(
        name=name_of(node),
        cpu_capacity_milli=_cpu_milli(node_capacity(node)),
        cpu_requested_milli=sum(pod_cpu_milli(pod) for pod in pods),
        labels=dict(labels_of(node)),
    )


def rounded(value: float) -> float:
    """To two decimals, halves away from zero as Go's ``math.Round`` (Python's ``round`` makes 0.125 0.12)."""
    scaled = value * UTIL_SCALE
    whole = math.trunc(scaled)
    if abs(scaled - whole) >= 0.5:
        whole += 1 if scaled > 0 else -1
    return whole / UTIL_SCALE


# --- the policies ------------------------------------------------------------------------------------------


def passes(policy: PolicyArguments, node: NodeUsage) -> bool:
    """The filter: only allocation-rate filters; a node passes a policy that does not."""
    if isinstance(policy, AllocationRate):
        util = rounded(node.cpu_utilisation)
        return rounded(policy.min_cpu_util) <= util <= rounded(policy.max_cpu_util)
    return True


def score(policy: PolicyArguments, node: NodeUsage) -> float | None:
    """The score in [0, 1], or None for a policy that does not score (node-limit)."""
    if isinstance(policy, AllocationRate):
        low, high = rounded(policy.min_cpu_util), rounded(policy.max_cpu_util)
        if high == low:
            return 1.0
        # Busier is better within the band: work packs onto busy nodes and idle ones stay free for others.
        return min(1.0, max(0.0, (rounded(node.cpu_utilisation) - low) / (high - low)))
    if isinstance(policy, Warmup):
        return 1.0 if node.labels.get(policy.label) == policy.value else 0.0
    return None


def select(policy: PolicyArguments, ranked: Sequence[NodeUsage]) -> Sequence[NodeUsage]:
    """The selection: node-limit keeps the best ``maxNodes``; ``minNodes`` is reported, never padded."""
    if isinstance(policy, NodeLimit) and 0 < policy.max_nodes < len(ranked):
        return ranked[: policy.max_nodes]
    return ranked


def weighted_score(policies: Sequence[ShardPolicy], node: NodeUsage) -> float:
    """The sum of weight times score over the scoring policies."""
    total = 0.0
    for policy in policies:
        value = score(policy.arguments, node)
        if value is not None:
            total += policy.weight * value
    return total


def below_minimum(policies: Sequence[ShardPolicy], count: int) -> int | None:
    """The largest ``minNodes`` a shard of ``count`` nodes falls short of, or None."""
    wanted = [p.arguments.min_nodes for p in policies if isinstance(p.arguments, NodeLimit)]
    short = [n for n in wanted if count < n]
    return max(short) if short else None
