"""bench_scale's figure of one cluster size: every system side by side, a bar each, per measure. Pure: the
runs' JSON in, one standalone SVG out.

One panel per measure the results hold at their (first) point: per backlog job size the pods bound a second
(the null binder's runs drawn as one bar, their mean, and each other system's ratio to it written beside its
bar), churn's create-to-bind median, and for the trace the GPUs stranded at the end, the gangs placed whole
and the gang wait's median. A latency panel has a logarithmic axis: the systems differ by three orders of
magnitude there. A system keeps its colour in every panel (``volcano_py.sim.svg.PALETTE``), the null binder
is grey.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from volcano_py.sim.svg import PALETTE

Row = dict[str, Any]
Bar = tuple[str, float, str]  # system, value, the text written beside the bar
Panel = tuple[str, bool, list[Bar]]  # title, logarithmic axis, bars
NULL = "null"
GREY = "#9e9e9e"
WIDTH, BAR, GAP, LABEL = 560, 16, 6, 170


def _mean_null(rows: Sequence[Row], key: str) -> float | None:
    values = [float(row[key]) for row in rows if row.get("system") == NULL and row.get(key) is not None]
    return sum(values) / len(values) if values else None


def _bars(rows: Sequence[Row], key: str, *, digits: int = 0, ratio: bool = False) -> list[Bar]:
    """One bar per system (the null binder's runs as their mean), in the order the rows were measured."""
    null = _mean_null(rows, key)
    bars: list[Bar] = []
    if null is not None:
        runs = sum(1 for row in rows if row.get("system") == NULL)
        bars.append((f"null binder ({runs} runs)", null, f"{null:,.{digits}f}"))
    for row in rows:
        value = row.get(key)
        if row.get("system") == NULL or value is None:
            continue
        text = f"{float(value):,.{digits}f}"
        # The run's own ratio where it has one: over the null runs on either side of it (``--bracket-null``).
        of_null = row.get("of_null")
        if ratio and (of_null is not None or null):
            text += f" ({of_null if of_null is not None else float(value) / (null or 1.0):.2f} of null)"
        bars.append((str(row["system"]), float(value), text))
    return bars


def _merged(rows: list[Row], result: Row, more: Iterable[Row]) -> list[Row]:
    """``rows`` with a later result's: a system measured again (at the same job size) replaces its earlier
    row, unless it ran with another conf file than that row (then both stay, the later one named after its
    conf); the null binder's runs all stay (their mean is the bar)."""
    confs = result.get("confs") or {}
    out = list(rows)
    for row in more:
        name = str(row["system"])
        conf = confs.get(name)
        conf = conf.get("file") if isinstance(conf, dict) else conf  # the first runs wrote the path alone
        if name != NULL:
            earlier = [r for r in out if r["system"] == name and r.get("size") == row.get("size")]
            if conf and earlier and all(r.get("conf") != conf for r in earlier):
                name = f"{name} ({str(conf).rsplit('/', 1)[-1]})"
            at = [i for i, r in enumerate(out) if r["system"] == name and r.get("size") == row.get("size")]
            if at:  # in its place
                out[at[0]] = {**row, "system": name, "conf": conf}
                out = [r for i, r in enumerate(out) if i not in at[1:]]
                continue
        out.append({**row, "system": name, "conf": conf})
    return out


def panels(results: Iterable[Row]) -> list[Panel]:
    """The panels of the results' first points, each measure's rows gathered over every result (later ones
    first, as ``_merged`` says)."""
    backlog: list[Row] = []
    churn: list[Row] = []
    trace: list[Row] = []
    for result in results:
        point = (result.get("points") or [{}])[0]
        backlog = _merged(backlog, result, point.get("backlog") or [])
        churn = _merged(churn, result, point.get("churn") or [])
        trace = _merged(trace, result, (point.get("trace") or {}).get("runs") or [])
    out: list[Panel] = []
    for size in sorted({int(row["size"]) for row in backlog}):
        rows = [row for row in backlog if int(row["size"]) == size]
        jobs = "one-pod jobs" if size == 1 else f"gangs of {size}"
        bars = _bars(rows, "pods_per_second", ratio=True)
        out.append((f"backlog, {jobs}: pods bound a second", False, bars))
    if churn:
        out.append(("churn: create to bind, median ms", True, _bars(churn, "bind_ms_p50", digits=1)))
    if trace:
        stranded = [{"system": r["system"], "value": r["end"]["stranded_gpus"]} for r in trace]
        out += [
            ("openb trace: GPUs stranded at the end", False, _bars(stranded, "value")),
            ("openb trace: gangs placed whole", False, _bars(trace, "gangs_whole")),
            ("openb trace: gang wait, median ms", True, _bars(trace, "gang_wait_ms_p50")),
        ]
    return [panel for panel in out if panel[2]]


def _panel(title: str, log: bool, bars: list[Bar], colours: dict[str, str]) -> tuple[str, int]:
    """One panel's SVG and its height."""
    height = 26 + len(bars) * (BAR + GAP) + 8
    span = WIDTH - LABEL - 150
    values = [value for _, value, _ in bars]
    top = max(values) or 1.0
    low = min((v for v in values if v > 0), default=1.0)

    def length(value: float) -> float:
        if value <= 0:
            return 0.0
        if not log:
            return span * value / top
        floor = math.floor(math.log10(low))
        return span * max(0.02, (math.log10(value) - floor) / (math.log10(top) - floor or 1.0))

    parts = [f'<text x="8" y="16" class="label">{escape(title)}{" (log scale)" if log else ""}</text>']
    for i, (name, value, text) in enumerate(bars):
        y = 26 + i * (BAR + GAP)
        colour = colours.get(name, GREY)
        parts += [
            f'<text x="{LABEL - 6}" y="{y + BAR - 4}" text-anchor="end">{escape(name)}</text>',
            f'<rect x="{LABEL}" y="{y}" width="{length(value):.1f}" height="{BAR}" fill="{colour}"/>',
            f'<text x="{LABEL + length(value) + 4:.1f}" y="{y + BAR - 4}">{escape(text)}</text>',
        ]
    return "".join(parts), height


def render(results: Sequence[Row], caption: str) -> str:
    """The figure: ``caption``, then the panels, two to a row."""
    drawn = panels(results)
    names = [name for _, _, bars in drawn for name, _, _ in bars if not name.startswith("null binder")]
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(dict.fromkeys(names))}
    rendered = [_panel(title, log, bars, colours) for title, log, bars in drawn]
    rows = [rendered[i : i + 2] for i in range(0, len(rendered), 2)]
    heights = [max(h for _, h in row) for row in rows]
    width, height = 2 * WIDTH, 28 + sum(heights)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}">',
        "<style>svg text{font:11px system-ui,sans-serif;fill:#333} .title{font-size:13px;font-weight:600} "
        ".label{font-size:12px;font-weight:600}</style>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="8" y="18" class="title">{escape(caption)}</text>',
    ]
    if not drawn:
        parts.append('<text x="8" y="48">no measurement in these results</text>')
    y = 28
    for row, row_height in zip(rows, heights, strict=True):
        for column, (svg, _) in enumerate(row):
            parts.append(f'<g transform="translate({column * WIDTH} {y})">{svg}</g>')
        y += row_height
    parts.append("</svg>")
    return "\n".join(parts)
