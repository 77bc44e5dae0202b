"""Plain-text tables and durations, laid out as Volcano's vcctl prints them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns, each as wide as its widest cell plus three spaces (kubectl-like)."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) + 3 for i in range(len(headers))]
    lines = [
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(lines) + "\n"


def human_duration(seconds: float) -> str:
    """``95s``, ``4m10s``, ``3h``, ``2d5h`` — the kubectl AGE format."""
    if seconds < -1:
        return "<invalid>"
    secs = max(0, int(seconds))
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        rest = secs % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y{days % 365}d" if days < 365 * 8 else f"{days // 365}y"


def age(timestamp: str | None, now: datetime) -> str:
    """The age of an RFC 3339 timestamp as the API writes it, or ``<unknown>``."""
    if not timestamp:
        return "<unknown>"
    created = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return human_duration((now - created).total_seconds())
