"""Percentiles of samples and of Prometheus histograms, and samples cut into time windows. Pure."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from prometheus_client.parser import text_string_to_metric_families


def percentile(values: Sequence[float], q: float) -> float:
    """The value at rank ``q`` (0..1) of ``values``, nearest rank below; 0 for no values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def histogram_buckets(metrics: str, name: str) -> dict[float, float]:
    """The cumulative bucket counts (``le`` -> count) of histogram ``name`` in a /metrics text, summed over
    its other labels; empty when the histogram is absent."""
    buckets: dict[float, float] = {}
    for family in text_string_to_metric_families(metrics):
        for sample in family.samples:
            if sample.name == f"{name}_bucket":
                le = float(sample.labels["le"])
                buckets[le] = buckets.get(le, 0.0) + sample.value
    return buckets


def bucket_delta(before: Mapping[float, float], after: Mapping[float, float]) -> dict[float, float]:
    """What was observed between two scrapes of the same histogram (a restarted process counts from 0)."""
    return {le: max(0.0, count - before.get(le, 0.0)) for le, count in after.items()}


def histogram_quantile(q: float, buckets: Mapping[float, float]) -> float | None:
    """``q`` (0..1) of the observations in cumulative ``buckets``, interpolated linearly inside the bucket
    it falls in, as Prometheus's ``histogram_quantile`` does; the highest finite bound when it falls in the
    ``+Inf`` bucket; None with no observations."""
    bounds = sorted(buckets)
    if not bounds or buckets[bounds[-1]] <= 0:
        return None
    total = buckets[bounds[-1]]
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for bound in bounds:
        count = buckets[bound]
        if count >= rank:
            if math.isinf(bound):
                return lower_bound
            if count == lower_count:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (count - lower_count)
        lower_bound, lower_count = bound, count
    return lower_bound


def windows(samples: Iterable[tuple[float, float]], start: float, width: float) -> list[list[float]]:
    """The values of ``(time, value)`` samples grouped into consecutive windows of ``width`` seconds from
    ``start``, the last window the last one with a sample; samples before ``start`` are left out."""
    grouped: list[list[float]] = []
    for at, value in samples:
        if at < start:
            continue
        index = int((at - start) // width)
        while len(grouped) <= index:
            grouped.append([])
        grouped[index].append(value)
    return grouped
