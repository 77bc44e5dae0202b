"""Static SVG line charts, written directly: no plotting library, no script, nothing fetched at view time.

A chart is a function of its data: axes with round tick values, one polyline per series (step lines for
CDFs and sampled levels), and a legend. Series are thinned to a bounded number of points so a 150-day trace
still makes a page of a few hundred kilobytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

Point = tuple[float, float]
# Colour-blind-safe (Okabe-Ito), in the order series are drawn.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
MAX_POINTS = 800


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round values (1, 2 or 5 times a power of ten apart) covering [low, high]."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0]
    if high <= low:
        high = low + 1.0
    raw = (high - low) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


def _label(value: float) -> str:
    if abs(value) >= 10_000:
        return f"{value / 1000:,.0f}k"
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:.2f}".rstrip("0").rstrip(".")


def thin(points: Sequence[Point], limit: int = MAX_POINTS) -> list[Point]:
    """At most ``limit`` points, keeping the first, the last, and each stride's extreme in y."""
    if len(points) <= limit:
        return list(points)
    stride = math.ceil(len(points) / (limit // 2))
    out: list[Point] = [points[0]]
    for start in range(1, len(points) - 1, stride):
        chunk = points[start : start + stride]
        low = min(chunk, key=lambda p: p[1])
        high = max(chunk, key=lambda p: p[1])
        out.extend(sorted({low, high}))
    out.append(points[-1])
    return out


def steps(points: Sequence[Point]) -> list[Point]:
    """A level held until the next sample: (x0,y0),(x1,y0),(x1,y1),..."""
    out: list[Point] = []
    for i, (x, y) in enumerate(points):
        if i:
            out.append((x, out[-1][1]))
        out.append((x, y))
    return out


def line_chart(
    series: Mapping[str, Sequence[Point]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    plot_id: str,
    step: bool = True,
    y_min: float | None = 0.0,
    y_max: float | None = None,
    width: int = 560,
    height: int = 300,
    markers: bool = False,
    colours: Mapping[str, str] | None = None,
) -> str:
    """One ``<svg>`` with an axis per side, a polyline per series and a legend; ``markers`` also draws a
    dot at each point (a series of few measured points, or of one, which a line alone would not show);
    ``colours`` fixes a series' colour by name (the same system alike in every chart of a page)."""
    left, right, top, bottom = 64, 16, 36, 48
    drawn = {name: thin(steps(pts) if step else list(pts)) for name, pts in series.items()}
    xs = [x for pts in drawn.values() for x, _ in pts]
    ys = [y for pts in drawn.values() for _, y in pts]
    x_lo, x_hi = min(xs, default=0.0), max(xs, default=1.0)
    if x_lo == x_hi > 0:
        x_lo = 0.0  # one x (one measured point): from zero, not a unit-wide range around it
    x_ticks = nice_ticks(x_lo, x_hi)
    y_lo = y_min if y_min is not None else min(ys, default=0.0)
    y_hi = y_max if y_max is not None else max(ys, default=1.0)
    y_ticks = nice_ticks(y_lo, max(y_hi, y_lo + 1e-9))
    x0, x1, y0, y1 = x_ticks[0], x_ticks[-1], y_ticks[0], y_ticks[-1]
    pw, ph = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + (x - x0) / ((x1 - x0) or 1) * pw

    def sy(y: float) -> float:
        return top + ph - (y - y0) / ((y1 - y0) or 1) * ph

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" data-plot="{escape(plot_id)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<text x="{left}" y="20" class="title">{escape(title)}</text>',
    ]
    for t in y_ticks:
        y = sy(t)
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_label(t)}</text>')
    for t in x_ticks:
        x = sx(t)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top + ph}" y2="{top + ph + 4}" class="axis"/>')
        parts.append(f'<text x="{x:.1f}" y="{top + ph + 18}" text-anchor="middle">{_label(t)}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" class="frame"/>')
    parts.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 8}" text-anchor="middle" class="label">'
        f"{escape(x_label)}</text>"
    )
    parts.append(
        f'<text transform="translate(14 {top + ph / 2:.1f}) rotate(-90)" text-anchor="middle" '
        f'class="label">{escape(y_label)}</text>'
    )
    for i, (name, pts) in enumerate(drawn.items()):
        colour = (colours or {}).get(name) or PALETTE[i % len(PALETTE)]
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        parts.append(
            f'<polyline class="series" data-series="{escape(name)}" fill="none" stroke="{colour}" '
            f'stroke-width="1.8" points="{coords}"/>'
        )
        if markers:
            parts.extend(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>' for x, y in pts)
        # Legend in the title row, right-aligned, so it never covers a line.
        lx = width - right - (len(drawn) - i) * 96
        parts.append(f'<rect x="{lx}" y="12" width="12" height="4" fill="{colour}"/>')
        parts.append(f'<text x="{lx + 16}" y="18" class="legend">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
