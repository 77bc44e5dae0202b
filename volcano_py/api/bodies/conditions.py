"""Reads of a condition (``status.conditions[]`` of a PodGroup, Pod, Node, ...): every kind words them the
same way (``type``, ``status`` ``True``/``False``/``Unknown``, ``reason``, ``message``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ConditionFields = tuple[str, str, str, str, str]


def condition_fields(condition: Mapping[str, Any]) -> ConditionFields:
    """(type, status, reason, message, lastTransitionTime), '' for each unset one."""
    get = condition.get
    return (
        str(get("type", "")),
        str(get("status", "")),
        str(get("reason", "")),
        str(get("message", "")),
        str(get("lastTransitionTime", "")),
    )


def condition_is_true(condition: Mapping[str, Any], kind: str) -> bool:
    """Whether ``condition`` is of type ``kind`` and says ``True``."""
    return condition.get("type") == kind and condition.get("status") == "True"


def none_false(conditions: Iterable[Mapping[str, Any]], kind: str) -> bool:
    """Whether every condition of type ``kind`` says ``True`` (so also when there is none)."""
    return all(c.get("status") == "True" for c in conditions if c.get("type") == kind)


def any_true(conditions: Iterable[Mapping[str, Any]], kind: str) -> bool:
    """Whether some condition of type ``kind`` says ``True``."""
    return any(condition_is_true(c, kind) for c in conditions)
