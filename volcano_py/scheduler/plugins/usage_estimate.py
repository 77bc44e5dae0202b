"""The arithmetic of the ``usage`` plugin, as Volcano's usage estimator defines it.

A node's load as the metrics source reports it lags: a pod placed a moment ago shows in Prometheus only after
a scrape and an average. So the plugin adds a *shadow* estimate for such pods to the reported load:

* a pod with requests: ``(request x request_ratio + (limit - request) x burst_ratio) x risk``, at most its
  limit (its request where it has no limit, or a lower one);
* a pod without requests (BestEffort): the fixed ``be_cpu`` / ``be_mem`` x risk;
* ``risk`` is ``risk_factor`` once the node's weighted composite load reaches ``risk_threshold``, else 1.

A node's composite load per resource is ``(reported % x capacity + shadow) / capacity``, within [0, 1]; its
score is ``((1 - cpu) x cpu.weight + (1 - memory) x memory.weight) / (cpu.weight + memory.weight) x 100 x
usage.weight``. Node quantities are numpy arrays, one entry per node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# kube-scheduler's MaxNodeScore, the scale of every plugin's score.
MAX_NODE_SCORE = 100.0

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Estimator:
    """Volcano's ``estimator`` arguments (its defaults here)."""

    request_ratio: float = 0.7
    burst_ratio: float = 0.0
    risk_threshold: float = 0.6
    risk_factor: float = 1.2
    be_cpu: float = 250.0  # millicores
    be_memory: float = 200.0 * 1024 * 1024  # bytes

    def pod(self, request: float, limit: float, risk: float) -> float:
        """The shadow of a pod asking ``request`` (limit ``limit``, 0: none) of one resource."""
        request = max(request, 0.0)
        ceiling = request if limit <= 0 or limit < request else limit
        estimate = (request * self.request_ratio + (ceiling - request) * self.burst_ratio) * risk
        return min(max(estimate, 0.0), ceiling)

    def best_effort(self, configured: float, risk: float) -> float:
        return max(configured, 0.0) * risk

    def risk(self, load: FloatArray) -> FloatArray:
        """The multiplier of the estimates made on nodes of weighted composite load ``load`` (a factor
        below 1 would make estimates bolder under pressure: it counts as 1)."""
        return np.where(load >= self.risk_threshold, max(self.risk_factor, 1.0), 1.0)


def composite(reported_percent: FloatArray, shadow: FloatArray, capacity: FloatArray) -> FloatArray:
    """The share of ``capacity`` in use: the reported load plus the shadow, within [0, 1] (0 without
    capacity)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        share = (reported_percent / 100.0 * capacity + shadow) / capacity
    result: FloatArray = np.where(capacity > 0, np.clip(share, 0.0, 1.0), 0.0)
    return result


def weighted(cpu: FloatArray, memory: FloatArray, cpu_weight: int, memory_weight: int) -> FloatArray:
    """The composite load of both resources by their weights (0 when both weights are 0)."""
    total = cpu_weight + memory_weight
    if total == 0:
        return np.zeros_like(cpu)
    result: FloatArray = (cpu * cpu_weight + memory * memory_weight) / total
    return result


def node_score(
    cpu: FloatArray, memory: FloatArray, cpu_weight: int, memory_weight: int, usage_weight: int
) -> FloatArray:
    """The score of nodes whose composite loads are ``cpu`` and ``memory``: the idler, the higher."""
    total = cpu_weight + memory_weight
    if total == 0:
        return np.zeros_like(cpu)
    free = ((1.0 - cpu) * cpu_weight + (1.0 - memory) * memory_weight) / total
    result: FloatArray = free * MAX_NODE_SCORE * usage_weight
    return result
