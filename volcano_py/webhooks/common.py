"""What every admission decision shares: the queue snapshot and the denial text."""

from __future__ import annotations

from collections.abc import Iterable

from volcano_py.api.problems import Problem
from volcano_py.api.queue_hierarchy import Queues, children, queue_parent

__all__ = ["Queues", "children", "denial", "queue_parent"]


def denial(problems: Iterable[Problem]) -> str:
    """One message for the API server to show: every problem, each with its field and its fix."""
    return "; ".join(str(problem) for problem in problems)
