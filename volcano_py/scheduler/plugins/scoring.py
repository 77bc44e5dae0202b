"""Node scores, pure and vectorised: each takes rows of allocatable and of used-after-placing amounts for
the resources it looks at and returns one score per node on Kubernetes' 0-100 scale."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
MAX_NODE_SCORE = 100.0


def _fractions(allocatable: IntArray, used: IntArray) -> FloatArray:
    alloc = allocatable.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # A node without the resource reads as empty until something asks for it, then as full.
        frac = np.where(alloc > 0, used / np.where(alloc > 0, alloc, 1.0), np.where(used > 0, 1.0, 0.0))
    result: FloatArray = np.clip(frac, 0.0, 1.0)
    return result


def least_requested(allocatable: IntArray, used: IntArray) -> FloatArray:
    """Spread: the more a node keeps free after the pod, the higher (mean over resources).

    In kube-scheduler's integer arithmetic (each resource's score truncated, then their mean): the
    fractions it drops are what tell apart nodes that a float sum with binpack would call equal."""
    fits = (allocatable > 0) & (used <= allocatable)
    free = np.where(fits, allocatable - used, 0) * int(MAX_NODE_SCORE)
    per_resource = free // np.where(allocatable > 0, allocatable, 1)
    result: FloatArray = (per_resource.sum(axis=1) // max(per_resource.shape[1], 1)).astype(np.float64)
    return result


def most_requested(allocatable: IntArray, used: IntArray) -> FloatArray:
    """Pack: the fuller a node would be, the higher."""
    result: FloatArray = _fractions(allocatable, used).mean(axis=1) * MAX_NODE_SCORE
    return result


def balanced(allocatable: IntArray, before: IntArray, after: IntArray) -> FloatArray:
    """kube-scheduler's BalancedAllocation as Volcano vendors it (Kubernetes 1.36): how much placing the pod
    improves the node's balance, 50 (worse) to 100 (better), about 75 when it changes little.

    Balance is 100 x (1 - the standard deviation of the used fractions), truncated, over the resources the
    node has (columns where ``allocatable`` is 0 are left out: pass 0 for a resource the pod does not ask
    and that kube-scheduler skips, as nvidia.com/gpu). Scoring the change, not the balance after placing,
    is what lets a node already in use win over an empty one: an empty node's balance is lost by any pod
    whose cpu and memory are out of proportion to the node's."""
    present = allocatable > 0
    alloc = np.where(present, allocatable, 1).astype(np.float64)
    with_pod = _balance(np.minimum(after / alloc, 1.0), present)
    without_pod = _balance(np.minimum(before / alloc, 1.0), present)
    half = MAX_NODE_SCORE / 2
    result: FloatArray = half + np.floor((half + with_pod - without_pod) / 2)
    return result


def _balance(fractions: FloatArray, present: npt.NDArray[np.bool_]) -> FloatArray:
    """100 x (1 - std of the present fractions), truncated; 100 with fewer than two (no spread to measure).
    Two fractions take |a - b| / 2 and more the population formula, each computed as kube-scheduler does,
    so a score on a whole-number boundary truncates the same way."""
    count = present.sum(axis=1)
    std = np.zeros(fractions.shape[0], dtype=np.float64)
    two = count == 2
    if two.any():
        pairs = fractions[two][present[two]].reshape(-1, 2)
        std[two] = np.abs((pairs[:, 0] - pairs[:, 1]) / 2)
    more = count > 2
    if more.any():
        f, p = fractions[more], present[more]
        mean = np.where(p, f, 0.0).sum(axis=1) / count[more]
        std[more] = np.sqrt(np.where(p, (f - mean[:, None]) ** 2, 0.0).sum(axis=1) / count[more])
    result: FloatArray = np.floor((1 - std) * MAX_NODE_SCORE)
    return result


def binpack(allocatable: IntArray, used: IntArray, request: IntArray, weights: FloatArray) -> FloatArray:
    """Volcano's binpack: weighted mean of (used + request) / allocatable over the resources the pod asks
    for among those weighted; a node where any of them would overflow scores 0."""
    asked = (request > 0) & (weights > 0)
    if not asked.any():
        return np.zeros(allocatable.shape[0], dtype=np.float64)
    alloc = allocatable[:, asked].astype(np.float64)
    after = (used[:, asked] + request[asked]).astype(np.float64)
    w = weights[asked]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(alloc > 0, after / np.where(alloc > 0, alloc, 1.0), np.inf)
    overflow = (frac > 1.0).any(axis=1)
    score = (np.where(np.isfinite(frac), frac, 0.0) * w).sum(axis=1) / w.sum() * MAX_NODE_SCORE
    result: FloatArray = np.where(overflow, 0.0, score)
    return result


def normalize(raw: FloatArray, *, reverse: bool = False) -> FloatArray:
    """Scale to 0-100 by the maximum (reverse: fewer is better), as kube-scheduler's default normaliser."""
    top = float(raw.max()) if raw.size else 0.0
    if top <= 0:
        return np.full(raw.shape, MAX_NODE_SCORE if reverse else 0.0)
    scaled: FloatArray = raw * MAX_NODE_SCORE / top
    return MAX_NODE_SCORE - scaled if reverse else scaled
