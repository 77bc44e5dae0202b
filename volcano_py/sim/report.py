"""Simulation metrics: time-weighted GPU allocation and stranding, delay and completion percentiles."""

from __future__ import annotations

import itertools
import math
from typing import Any

from .engine import SimResult


def percentile(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) by nearest rank, or None when there are no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def _time_weighted(result: SimResult, attr: str) -> float:
    samples = result.samples
    if len(samples) < 2:
        return float(getattr(samples[0], attr)) if samples else 0.0
    area = sum(getattr(a, attr) * (b.at - a.at) for a, b in itertools.pairwise(samples))
    span = samples[-1].at - samples[0].at
    return area / span if span > 0 else float(getattr(samples[-1], attr))


def summary(result: SimResult, *, timeline_points: int = 50) -> dict[str, Any]:
    """The JSON report; GPU figures are in whole GPUs."""
    total = result.total_gpus or 1
    step = max(1, len(result.samples) // timeline_points)
    return {
        "workload": result.workload,
        "total_gpus": result.total_gpus / 1000,
        "sessions": result.sessions,
        "simulated_seconds": result.end_time,
        "wall_seconds": round(result.session_seconds, 3),
        "jobs_completed": len(result.completion_time),
        "jobs_unfinished": result.unfinished_jobs,
        "gpu_allocation_mean": round(_time_weighted(result, "allocated_gpus") / total, 4),
        "gpu_allocation_peak": round(max((s.allocated_gpus for s in result.samples), default=0) / total, 4),
        "stranded_gpus_mean": round(_time_weighted(result, "stranded_gpus") / 1000, 2),
        "stranded_gpus_peak": max((s.stranded_gpus for s in result.samples), default=0) / 1000,
        "partial_gpus_free_mean": round(_time_weighted(result, "partial_free_gpus") / 1000, 2),
        "queueing_delay_p50": percentile(result.queueing_delay, 50),
        "queueing_delay_p99": percentile(result.queueing_delay, 99),
        "completion_time_p50": percentile(result.completion_time, 50),
        "completion_time_p99": percentile(result.completion_time, 99),
        "gang_wait_mean": mean(result.gang_delay),
        "gang_wait_p95": percentile(result.gang_delay, 95),
        "gangs_placed": result.gangs_placed,
        "gangs_in_one_tier1_hypernode": result.gangs_in_one_rack if result.has_racks else None,
        "evictions": result.evictions,
        "evicted_gpu_minutes": round(result.evicted_gpu_seconds / 60, 1),
        "moved_pods_rebound": len(result.moved_wait),
        "moved_wait_p95": percentile(result.moved_wait, 95),
        "gpu_allocation_timeline": [
            [s.at, round(s.allocated_gpus / total, 4)] for s in result.samples[::step]
        ],
    }


def table(reports: dict[str, dict[str, Any]]) -> str:
    """One column per run (e.g. greedy, cpsat), one row per headline metric."""
    rows = [
        ("GPU allocation (mean)", "gpu_allocation_mean"),
        ("stranded GPUs (mean)", "stranded_gpus_mean"),
        ("free on partly used GPUs (mean)", "partial_gpus_free_mean"),
        ("queueing delay p50 s", "queueing_delay_p50"),
        ("queueing delay p99 s", "queueing_delay_p99"),
        ("completion time p50 s", "completion_time_p50"),
        ("completion time p99 s", "completion_time_p99"),
        ("gang wait mean s", "gang_wait_mean"),
        ("gang wait p95 s", "gang_wait_p95"),
        ("gangs placed", "gangs_placed"),
        ("gangs in one tier-1 HyperNode", "gangs_in_one_tier1_hypernode"),
        ("evictions", "evictions"),
        ("evicted GPU-minutes", "evicted_gpu_minutes"),
        ("jobs unfinished", "jobs_unfinished"),
        ("sessions", "sessions"),
        ("wall seconds", "wall_seconds"),
    ]
    names = list(reports)
    width = max(len(label) for label, _ in rows) + 2

    def cell(value: object) -> str:
        return "-" if value is None else f"{value:,.2f}" if isinstance(value, float) else f"{value}"

    texts = {key: [cell(reports[name].get(key)) for name in names] for _, key in rows}
    col = max(12, *(len(n) + 2 for n in names), *(len(t) + 2 for ts in texts.values() for t in ts))
    lines = ["".ljust(width) + "".join(n.rjust(col) for n in names)]
    for label, key in rows:
        lines.append(label.ljust(width) + "".join(t.rjust(col) for t in texts[key]))
    return "\n".join(lines) + "\n"
