"""Percentiles of samples and of Prometheus histograms, and samples cut into time windows. Pure."""

from __future__ import annotations

import math
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Any

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


def cycle_quantiles(before: Mapping[float, float], after: Mapping[float, float]) -> dict[str, float | None]:
    """Cycle time p50/p99 (ms) from a cycle histogram's growth between two scrapes (None without a cycle)."""
    delta = bucket_delta(before, after)
    out: dict[str, float | None] = {}
    for q, key in ((0.50, "cycle_ms_p50"), (0.99, "cycle_ms_p99")):
        value = histogram_quantile(q, delta)
        out[key] = round(value, 1) if value is not None else None
    return out


def churn_windows(
    created: Mapping[str, float],
    bound: Mapping[str, float],
    cycles: Sequence[Mapping[float, float]],
    loads: Sequence[float],
    start: float,
    width: float,
    count: int,
    filled: int,
) -> list[dict[str, Any]]:
    """One line per window of arrivals (the first ``count``): the pods in the cluster at its end (``filled``
    plus those created so far), pods created in it, their bind latency (created -> bound, ms), how many
    of them were never bound, cycle time from ``cycles[i] -> cycles[i + 1]`` (a scrape at each window's
    start and end) and the load average ``loads[i]``."""
    waited = ((at, (bound[name] - at) * 1000) for name, at in created.items() if name in bound)
    latencies = windows(waited, start, width)
    arrivals = windows(((at, 1.0) for at in created.values()), start, width)
    out = []
    in_cluster = filled
    for index in range(min(count, len(arrivals))):
        waits = latencies[index] if index < len(latencies) else []
        in_cluster += len(arrivals[index])
        line: dict[str, Any] = {
            "window": index,
            "pods_in_cluster": in_cluster,
            "created": len(arrivals[index]),
            "bind_ms_p50": round(percentile(waits, 0.50), 1) if waits else None,
            "bind_ms_p99": round(percentile(waits, 0.99), 1) if waits else None,
            "unbound": len(arrivals[index]) - len(waits),
        }
        if index + 1 < len(cycles):
            line.update(cycle_quantiles(cycles[index], cycles[index + 1]))
        if index < len(loads):
            line["load_average"] = loads[index]
        out.append(line)
    return out


def gang_ready_latencies(
    created: Mapping[str, float], bound: Mapping[str, float], gang_of: Mapping[str, str]
) -> list[float]:
    """Per bound pod, milliseconds from its gang's last pod created to it bound: the part of a gang's wait a
    scheduler controls (no gang can be placed before its last pod exists)."""
    complete: dict[str, float] = {}
    for name, at in created.items():
        gang = gang_of[name]
        complete[gang] = max(complete.get(gang, at), at)
    return [(bound[name] - complete[gang_of[name]]) * 1000 for name in created if name in bound]


def bracketed(systems: Sequence[str], baseline: str = "null") -> list[str]:
    """The order a backlog runs ``systems`` in: the baseline before and after each other system, so each is
    compared with the baseline's runs on either side of it. KWOK updates all its nodes in rounds a minute or
    more apart, and whether a window of a minute or two holds one moves the baseline's rate by half."""
    others = [system for system in systems if system != baseline]
    if baseline not in systems or not others:
        return list(systems)
    order = [baseline]
    for system in others:
        order += [system, baseline]
    return order


def of_baseline(lines: Sequence[dict[str, Any]], baseline: str = "null") -> None:
    """Give each non-baseline line of one shape, in the order run, ``of_null``: its pods/s over the mean of
    the baseline runs just before and just after it (``null_pods_per_second``, both values)."""
    for index, line in enumerate(lines):
        if line["system"] == baseline or "pods_per_second" not in line:
            continue  # the baseline itself, or a system not measured (``not_measured`` says why)
        before = next((lines[i] for i in range(index - 1, -1, -1) if lines[i]["system"] == baseline), None)
        after = next((lines[i] for i in range(index + 1, len(lines)) if lines[i]["system"] == baseline), None)
        rates = [float(near["pods_per_second"]) for near in (before, after) if near is not None]
        if not rates:
            continue
        line["null_pods_per_second"] = rates
        line["of_null"] = round(float(line["pods_per_second"]) / (sum(rates) / len(rates)), 3)


def busy_cores(samples: Sequence[tuple[float, float]], window: float) -> float | None:
    """The cores a group of processes used over the last ``window`` seconds of ``samples`` (time, their CPU
    seconds so far); None until the samples span the window."""
    if not samples:
        return None
    end_at, end_cpu = samples[-1]
    start = next(((at, cpu) for at, cpu in reversed(samples) if end_at - at >= window), None)
    if start is None:
        return None
    return (end_cpu - start[1]) / (end_at - start[0])


def partial_gangs(members: Iterable[str], bound: Container[str]) -> int:
    """Gangs with some but not all of their pods bound, a pod ``<gang>-<i>`` being of gang ``<gang>``: a
    gang scheduler's must be 0 once its binds are done."""
    tallies: dict[str, list[int]] = {}
    for name in members:
        tally = tallies.setdefault(name.rsplit("-", 1)[0], [0, 0])
        tally[0] += 1
        tally[1] += name in bound
    return sum(1 for total, done in tallies.values() if 0 < done < total)
