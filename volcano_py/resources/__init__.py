"""Kubernetes quantities and resource vectors, exact integer arithmetic: the one door the rest reads them by.

Three concerns, one module each: ``quantities`` parses and formats Kubernetes quantities in each resource's
canonical integer unit; ``vector`` is the immutable ``Resource`` and its sums; ``pods`` reads what a pod
asks for and counts against quotas. Importers name ``volcano_py.resources`` only, so the split stays
internal; the names below are the same objects, so the hot paths pay no extra lookup.
"""

from .pods import pod_limits, pod_quota_usage, pod_request
from .quantities import (
    COUNT_PODS,
    CPU,
    EPHEMERAL_STORAGE,
    GPU,
    HUGEPAGES_PREFIX,
    LIMITS_PREFIX,
    MEMORY,
    PODS,
    REQUESTS_PREFIX,
    QuantityError,
    amount_of,
    canonical_exact,
    format_quantity,
    is_extended,
    is_quota_only,
    parse_quantity,
    to_canonical,
    unit_scale,
)
from .vector import EMPTY, Counted, Resource, Tally, count_into, count_out, total, total_counted

__all__ = [
    "COUNT_PODS",
    "CPU",
    "EMPTY",
    "EPHEMERAL_STORAGE",
    "GPU",
    "HUGEPAGES_PREFIX",
    "LIMITS_PREFIX",
    "MEMORY",
    "PODS",
    "REQUESTS_PREFIX",
    "Counted",
    "QuantityError",
    "Resource",
    "Tally",
    "amount_of",
    "canonical_exact",
    "count_into",
    "count_out",
    "format_quantity",
    "is_extended",
    "is_quota_only",
    "parse_quantity",
    "pod_limits",
    "pod_quota_usage",
    "pod_request",
    "to_canonical",
    "total",
    "total_counted",
    "unit_scale",
]
