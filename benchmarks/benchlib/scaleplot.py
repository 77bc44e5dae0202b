"""bench_scale's figure: how each cost grows with the cluster, every system on the same axes. Pure: the
run's JSON in, one standalone SVG out (``volcano_py.sim.svg`` draws each panel).

One panel per measure that the run has: per backlog job size the scheduler's CPU per pod, its peak RSS and
the seconds from its start to the last bind; the scheduler's restart to first bind and its RSS; the
controller's restart to the new Job's first pod; churn's cycle time p99 and bind latency p99 over the run;
and, per point, churn's cycle time p99 in each window against the pods in the cluster then (finished pods
stay, so the cluster grows during the run). The x axis is the pods of the point (the nodes of each
point are in the caption). A system's points are joined in order of pods, in the same colour in every
panel; a system that did not measure a point has no point there.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any

from volcano_py.sim.svg import PALETTE, Point, line_chart

PANEL_WIDTH, PANEL_HEIGHT, COLUMNS = 560, 300, 2
STYLE = (
    "svg text{font:11px system-ui,sans-serif;fill:#333} .title{font-size:13px;font-weight:600} "
    ".grid{stroke:#eee} .axis{stroke:#999} .frame{fill:none;stroke:#bbb} .label{font-size:12px}"
)
Row = dict[str, Any]
Panel = tuple[str, str, dict[str, list[Point]]]
WITHIN_CHURN = "churn at"  # the panels drawn against the pods in the cluster in each window


def _series(rows: Iterable[tuple[int, Row]], key: str) -> dict[str, list[Point]]:
    """Per system, (pods, row[key]) of each row that has a value there, in order of pods."""
    out: dict[str, list[Point]] = {}
    for pods, row in rows:
        measured = row.get(key)
        if measured is not None:
            out.setdefault(str(row["system"]), []).append((float(pods), float(measured)))
    return {name: sorted(points) for name, points in out.items()}


def _rows(result: Row, mode: str, **match: Any) -> list[tuple[int, Row]]:
    return [
        (int(point["pods"]), row)
        for point in result.get("points", [])
        for row in point.get(mode) or []
        if all(row.get(key) == want for key, want in match.items())
    ]


def panels(result: Row) -> list[Panel]:
    """(title, y label, series) of each panel the result has data for. Titles stay short: the legend
    shares their row."""
    out: list[Panel] = []
    for size in sorted({int(row["size"]) for _, row in _rows(result, "backlog")}):
        rows = _rows(result, "backlog", size=size)
        jobs = "1-pod" if size == 1 else f"gang {size}"
        out += [
            (f"backlog {jobs}: CPU", "scheduler CPU ms per pod", _series(rows, "cpu_ms_per_pod")),
            (f"backlog {jobs}: RSS", "scheduler peak RSS MiB", _series(rows, "scheduler_peak_rss_mib")),
            (f"backlog {jobs}: time", "s from start to last bind", _series(rows, "last_bind_s")),
        ]
    scheduler = _rows(result, "restart", component="scheduler")
    controller = _rows(result, "restart", component="controller")
    out += [
        ("scheduler restart", "s from start to first bind", _series(scheduler, "first_bind_s")),
        ("scheduler restart: RSS", "RSS MiB once bound", _series(scheduler, "rss_mib")),
        ("controller restart", "s from start to the Job's pod", _series(controller, "first_pod_s")),
    ]
    churn = _rows(result, "churn")
    out += [
        ("churn: cycle time", "cycle p99 ms over the run", _series(churn, "cycle_ms_p99")),
        ("churn: bind latency", "created to bound p99 ms", _series(churn, "bind_ms_p99")),
    ]
    # Within each point's churn, against the pods in the cluster as finished pods pile up.
    for point in result.get("points", []):
        minutes = [
            (int(window["pods_in_cluster"]), {"system": row["system"], **window})
            for row in point.get("churn") or []
            for window in row.get("windows", [])
        ]
        out.append(
            (
                f"{WITHIN_CHURN} {point['nodes']:,} nodes",
                "cycle p99 ms per window",
                _series(minutes, "cycle_ms_p99"),
            )
        )
    return [panel for panel in out if panel[2]]


def render(result: Row) -> str:
    """The whole figure: a caption naming the points, then the panels two to a row."""
    drawn = panels(result)
    named = [*result.get("systems", []), *sorted({name for _, _, series in drawn for name in series})]
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(dict.fromkeys(named))}
    points = ", ".join(f"{p['nodes']:,} nodes / {p['pods']:,} pods" for p in result.get("points", []))
    stopped = result.get("stopped")
    caption = f"bench_scale: {points or 'no point'}" + (f" (stopped: {stopped})" if stopped else "")
    rows = max(1, (len(drawn) + COLUMNS - 1) // COLUMNS)
    width, height = PANEL_WIDTH * COLUMNS, 28 + rows * PANEL_HEIGHT
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}">',
        f"<style>{STYLE}</style>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="8" y="18" class="title">{escape(caption)}</text>',
    ]
    if not drawn:
        parts.append('<text x="8" y="48">no measurement in this result</text>')
    for index, (title, y_label, series) in enumerate(drawn):
        x_label = "pods in the cluster at the window's end" if title.startswith(WITHIN_CHURN) else "pods"
        x, y = (index % COLUMNS) * PANEL_WIDTH, 28 + (index // COLUMNS) * PANEL_HEIGHT
        chart = line_chart(
            series, title=title, x_label=x_label, y_label=y_label, plot_id=title, step=False,
            width=PANEL_WIDTH, height=PANEL_HEIGHT, markers=True, colours=colours,
        )  # fmt: skip
        parts.append(f'<g transform="translate({x} {y})">{chart}</g>')
    parts.append("</svg>")
    return "\n".join(parts)
