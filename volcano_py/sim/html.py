"""``volcano-py sim --report report.html``: one self-contained page comparing the simulated policies.

Four plots (queue-wait CDF, GPU allocation over time, stranded GPUs over time, and pending jobs over time),
each with every policy drawn on the same axes so greedy and cpsat are read side by side, then the headline
table. Everything is inline SVG and CSS: the file opens offline and prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from .engine import SimResult
from .report import summary
from .svg import Point, line_chart

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px} .grid-2{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:16px}
svg.plot{background:#fff;border:1px solid #ddd} svg text{font:11px system-ui,sans-serif;fill:#333}
svg .title{font-size:13px;font-weight:600} svg .grid{stroke:#eee} svg .axis{stroke:#999}
svg .frame{fill:none;stroke:#bbb} svg .label{font-size:12px}
table{border-collapse:collapse;margin-top:16px} td,th{border:1px solid #ddd;padding:4px 10px;text-align:right}
th:first-child,td:first-child{text-align:left}
"""

_ROWS = (
    ("GPU allocation (mean)", "gpu_allocation_mean"),
    ("stranded GPUs (mean)", "stranded_gpus_mean"),
    ("queueing delay p50 (s)", "queueing_delay_p50"),
    ("queueing delay p99 (s)", "queueing_delay_p99"),
    ("completion time p50 (s)", "completion_time_p50"),
    ("jobs completed", "jobs_completed"),
    ("jobs unfinished", "jobs_unfinished"),
    ("gangs placed", "gangs_placed"),
    ("gangs in one tier-1 HyperNode", "gangs_in_one_tier1_hypernode"),
    ("evictions", "evictions"),
    ("sessions", "sessions"),
)


def wait_cdf(result: SimResult) -> list[Point]:
    """(seconds waited, share of started jobs that waited at most that long)."""
    delays = sorted(result.queueing_delay)
    n = len(delays)
    return [(0.0, 0.0), *((d, (i + 1) / n) for i, d in enumerate(delays))] if n else []


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    return escape(str(value))


def render(results: Mapping[str, SimResult], *, title: str) -> str:
    """The page; ``results`` maps a policy name (greedy, cpsat, ...) to its run."""
    share = {
        name: [(s.at, s.allocated_gpus / (run.total_gpus or 1)) for s in run.samples]
        for name, run in results.items()
    }
    plots = [
        line_chart(
            {name: wait_cdf(r) for name, r in results.items()},
            title="Queue wait (CDF)", x_label="seconds from arrival to start", y_label="share of jobs",
            plot_id="wait-cdf", y_max=1.0,
        ),
        line_chart(
            share,
            title="GPU allocation over time", x_label="simulated seconds", y_label="share of GPUs allocated",
            plot_id="gpu-allocation", y_max=1.0,
        ),
        line_chart(
            {name: [(s.at, s.stranded_gpus / 1000) for s in r.samples] for name, r in results.items()},
            title="Stranded GPUs over time", x_label="simulated seconds", y_label="GPUs",
            plot_id="stranded-gpus",
        ),
        line_chart(
            {name: [(s.at, float(s.pending_jobs)) for s in r.samples] for name, r in results.items()},
            title="Jobs waiting over time", x_label="simulated seconds", y_label="jobs",
            plot_id="pending-jobs",
        ),
    ]  # fmt: skip
    reports = {name: summary(r) for name, r in results.items()}
    head = "".join(f"<th>{escape(name)}</th>" for name in reports)
    rows = "".join(
        f"<tr><td>{escape(label)}</td>"
        + "".join(f"<td>{_cell(rep.get(key))}</td>" for rep in reports.values())
        + "</tr>"
        for label, key in _ROWS
    )
    first = next(iter(results.values()), None)
    subtitle = (
        f"{escape(first.workload)}: {first.total_gpus / 1000:,.0f} GPUs; "
        f"policies {', '.join(map(escape, results))}"
        if first
        else "no runs"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1><p>{subtitle}</p>"
        f'<div class="grid-2">{"".join(plots)}</div>'
        f'<table id="summary"><thead><tr><th>metric</th>{head}</tr></thead><tbody>{rows}</tbody></table>'
        "</body></html>\n"
    )
