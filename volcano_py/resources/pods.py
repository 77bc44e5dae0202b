"""A pod's resources read from its spec as Kubernetes counts them: what it asks of a node, as kube-scheduler
sums containers, init containers and overhead, and what it counts against ResourceQuotas, as the quota
controller does. Kept apart from the vector arithmetic: this is the one place that knows a pod's layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .quantities import (
    COUNT_PODS,
    CPU,
    EPHEMERAL_STORAGE,
    HUGEPAGES_PREFIX,
    LIMITS_PREFIX,
    MEMORY,
    PODS,
    REQUESTS_PREFIX,
    QuantityError,
    amount_of,
    is_extended,
    to_canonical,
)
from .vector import Resource


def pod_request(spec: Mapping[str, Any]) -> Resource:
    """What a pod asks of a node: its containers summed, at least its largest init container, + overhead.

    The one reading of a pod's request, used by the scheduler's snapshot (for every pod, every cycle), the
    controllers' PodGroup ``minResources`` and admission.
    """
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        for name, value in _request_amounts(container.get("resources")).items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers") or ():
        for name, value in _request_amounts(container.get("resources")).items():
            total[name] = max(total.get(name, 0), value)
    for name, value in (spec.get("overhead") or {}).items():
        if value is not None:
            total[name] = total.get(name, 0) + amount_of(name, value)
    return Resource(total)


def pod_limits(spec: Mapping[str, Any]) -> Resource:
    """A pod's limits as the quota controller sums them: containers summed, at least its largest init
    container, and the overhead added only where a limit is set."""
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        for name, value in _limit_amounts(container.get("resources")).items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers") or ():
        for name, value in _limit_amounts(container.get("resources")).items():
            total[name] = max(total.get(name, 0), value)
    for name, value in (spec.get("overhead") or {}).items():
        if value is not None and name in total:
            total[name] += amount_of(name, value)
    return Resource(total)


def pod_quota_usage(spec: Mapping[str, Any]) -> Resource:
    """What one pod of ``spec`` counts against ResourceQuotas, under the quota controller's names.

    ``pods`` and ``count/pods``; ``cpu``, ``memory`` and ``ephemeral-storage`` both bare and as
    ``requests.*``, with ``limits.*`` where limits are set; hugepages bare and as ``requests.*``; extended
    resources as ``requests.*`` and, as Volcano adds for the scheduler, bare. This is what Volcano writes as
    a PodGroup's ``minResources`` (per pod), so quota-minded tools read the same keys from ours.
    """
    requests, limits = pod_request(spec), pod_limits(spec)
    usage: dict[str, int] = {PODS: 1, COUNT_PODS: 1}
    for name in (CPU, MEMORY, EPHEMERAL_STORAGE):
        if name in requests:
            usage[name] = usage[REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            usage[LIMITS_PREFIX + name] = limits[name]
    for name, amount in requests.items():
        if name.startswith(HUGEPAGES_PREFIX) or is_extended(name):
            usage[name] = usage[REQUESTS_PREFIX + name] = amount
    return Resource(usage)


def _limit_amounts(resources: Mapping[str, Any] | None) -> dict[str, int]:
    limits = (resources or {}).get("limits") or {}
    return {name: amount_of(name, value) for name, value in limits.items() if value is not None}


def _request_amounts(resources: Mapping[str, Any] | None) -> dict[str, int]:
    # Per resource, as the API server defaults it: a limit with no request counts as the request. Read for
    # every pod of every cycle, so the common case (cached quantity strings) takes no detour.
    if not resources:
        return {}
    limits = resources.get("limits")
    requests = resources.get("requests")
    merged = dict(limits) if limits else {}
    if requests:
        merged.update(requests)
    out: dict[str, int] = {}
    for name, value in merged.items():
        if value is None:
            continue  # ``cpu:`` with no value: the API server drops the null, so do we
        try:
            out[name] = to_canonical(name, value)
        except (QuantityError, TypeError):  # TypeError: a list or mapping where a quantity belongs
            out[name] = amount_of(name, value)  # raises, naming the resource
    return out
