"""Plain-text tables and durations, laid out as Volcano's vcctl prints them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from volcano_py.api.common import human_duration

__all__ = ["age", "human_duration", "table"]


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns, each as wide as its widest cell plus three spaces (kubectl-like)."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) + 3 for i in range(len(headers))]
    lines = [
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(lines) + "\n"


def age(timestamp: str | None, now: datetime) -> str:
    """The age of an RFC 3339 timestamp as the API writes it, or ``<unknown>``."""
    if not timestamp:
        return "<unknown>"
    created = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return human_duration((now - created).total_seconds())
