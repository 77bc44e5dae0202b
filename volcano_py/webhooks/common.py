"""What every admission decision shares: the queue snapshot and the denial text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.problems import Problem

# Queue name -> Queue object as the API server returns it; the only cluster state admission reads.
Queues = Mapping[str, Mapping[str, Any]]


def denial(problems: Iterable[Problem]) -> str:
    """One message for the API server to show: every problem, each with its field and its fix."""
    return "; ".join(str(problem) for problem in problems)


def queue_state(queue: Mapping[str, Any]) -> str:
    state: str = (queue.get("status") or {}).get("state") or ""
    return state


def queue_parent(queue: Mapping[str, Any]) -> str:
    """A queue's parent; a queue that names none hangs under ``root`` (root itself has none)."""
    name = queue["metadata"]["name"]
    parent: str = (queue.get("spec") or {}).get("parent") or ""
    if name == constants.ROOT_QUEUE:
        return ""
    return parent or constants.ROOT_QUEUE


def children(queues: Queues, name: str) -> list[str]:
    return sorted(other for other, queue in queues.items() if other != name and queue_parent(queue) == name)
