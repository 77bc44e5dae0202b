"""Volcano's HyperNode scores (plugin ``network-topology-aware``), as pure functions over resource totals.

A gang with a ``networkTopology`` goes to the HyperNode, among those of the lowest tier where it fits, that
its whole request would fill the most: per weighted resource ``(used + request) / allocatable``, averaged by
weight, 0 when any weighted resource would overflow. Equal best scores are told apart by the share of the
job's tasks already running there. A pod without a topology scores each node by the same fill ratio of the
HyperNode holding it at every tier, tier ``t`` weighted ``fading ** (t - 1)``, and 1 at a tier where no
HyperNode holds the node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from volcano_py.resources import CPU, MEMORY

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# Volcano scales every plugin score to kube-scheduler's node score range before weighting.
MAX_SCORE = 100.0


@dataclass(frozen=True, slots=True)
class BinpackWeights:
    """``hypernode.binpack.cpu`` / ``.memory`` and, per resource named in ``.resources``, its weight."""

    cpu: int = 1
    memory: int = 1
    others: Mapping[str, int] = field(default_factory=dict)

    def of(self, resource: str) -> int | None:
        """The weight of ``resource``, or None when it does not count toward the score."""
        if resource == CPU:
            return self.cpu
        if resource == MEMORY:
            return self.memory
        return self.others.get(resource)


def fill_score(
    request: Mapping[str, float],
    used: Mapping[str, float],
    allocatable: Mapping[str, float],
    weights: BinpackWeights,
) -> float:
    """How full ``request`` leaves a HyperNode, in [0, 1]: 0 when it would overflow any weighted resource
    or when no requested resource is weighted."""
    total = 0.0
    weight_sum = 0
    for name, amount in request.items():
        weight = weights.of(name)
        if weight is None or amount <= 0:
            continue
        have = allocatable.get(name, 0.0)
        after = used.get(name, 0.0) + amount
        if after > have:
            return 0.0
        total += weight * after / have
        weight_sum += weight
    return total / weight_sum if weight_sum > 0 else 0.0


def hypernode_scores(
    fill: Mapping[str, float], tasks_there: Mapping[str, int], job_tasks: int, weight: int
) -> dict[str, float]:
    """Each candidate's final score: its fill score, plus (only when several share the best fill) the share
    of the job's ``job_tasks`` tasks already on it, times 100 x ``weight``."""
    scores = dict(fill)
    best = max(scores.values(), default=0.0)
    tied = [name for name, score in scores.items() if score == best]
    if len(tied) > 1:
        for name in tied:
            scores[name] += tasks_there.get(name, 0) / job_tasks if job_tasks else 1.0
    return {name: MAX_SCORE * weight * score for name, score in scores.items()}


def tier_weights(tiers: Sequence[int], fading: float) -> dict[int, float]:
    """Weight of each tier in a pod's score: ``fading ** (tier - 1)`` (so tier 1 weighs 1, even at 0)."""
    return {tier: fading ** (tier - 1) for tier in tiers}  # 0.0 ** 0 is 1, as in Go


def hypernode_totals(index: IntArray, amounts: IntArray, columns: IntArray, count: int) -> IntArray:
    """Per HyperNode of one tier (``count`` of them), the sum of ``amounts`` (a row per node) over its nodes,
    for ``columns``; ``index``: each node's HyperNode at that tier, -1 for none."""
    held = index >= 0
    where = index[held]
    sums = [np.bincount(where, weights=amounts[held, c], minlength=count) for c in columns.tolist()]
    # bincount sums in float64, exact below 2**53 (8 PiB of memory in bytes): back to the table's integers.
    stacked = np.stack(sums, axis=1) if sums else np.zeros((count, 0), dtype=np.float64)
    result: IntArray = np.rint(stacked).astype(np.int64)
    return result


def faded_scores(
    per_tier: Mapping[int, FloatArray | None], weights: Mapping[int, float], count: int
) -> FloatArray:
    """Nodes' scores for a pod without topology, in [0, 1]: per node the weighted mean over tiers of the fill
    score of its HyperNode at that tier (NaN, or ``None`` for the whole tier: no HyperNode of that tier holds
    the node, which scores 1)."""
    total_weight = sum(weights.values())
    out: FloatArray = np.zeros(count, dtype=np.float64)
    if total_weight <= 0:
        return out
    for tier, weight in weights.items():
        scores = per_tier.get(tier)
        out += weight * (1.0 if scores is None else np.where(np.isnan(scores), 1.0, scores))
    result: FloatArray = out / total_weight
    return result
