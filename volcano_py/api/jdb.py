"""Volcano's pod rules for its disruption budget annotations (``volcano.sh/jdb-min-available`` and
``volcano.sh/jdb-max-unavailable``), with Volcano's refusal words first."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api import constants
from volcano_py.api.messages import (
    VOLCANO_JDB_BOTH,
    VOLCANO_JDB_NOT_NUMBER,
    VOLCANO_JDB_NOT_POSITIVE,
    VOLCANO_JDB_PERCENTAGE,
    volcano_said,
)
from volcano_py.api.problems import Problem

_GO_INTEGER: Final = re.compile(r"[+-]?[0-9]+")


def _go_atoi(text: str) -> int | None:
    """Go's strconv.Atoi: an optional sign and ASCII digits, within int64; None where it fails."""
    if _GO_INTEGER.fullmatch(text) is None:
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _go_quote(text: str) -> str:
    # Go's %q for the printable text annotations hold: double quotes, with \\ and \" escaped.
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _jdb_value_problem(key: str, text: str, path: str) -> Problem | None:
    """Volcano reads the value as Kubernetes' IntOrString: a whole number must be > 0; anything else is a
    percentage, read as a whole number once every '%' is dropped, that must be within 1-99."""
    here = f"{path}[{key}]"
    fix = "use a count such as '2' or a percentage from '1%' to '99%'"
    if _go_atoi(text) is not None:
        # IntOrString keeps an int32: Go truncates a larger count, so 4294967296 reads as 0.
        count = (int(text) + 2**31) % 2**32 - 2**31
        if count > 0:
            return None
        message = VOLCANO_JDB_NOT_POSITIVE.format(value=_go_quote(text), key=key)
        return Problem(here, volcano_said(message, fix))
    digits = text.replace("%", "")
    percent = _go_atoi(digits)
    if percent is None:
        why = "invalid syntax" if _GO_INTEGER.fullmatch(digits) is None else "value out of range"
        message = VOLCANO_JDB_NOT_NUMBER.format(digits=digits, reason=why, key=key)
        return Problem(here, volcano_said(message, fix))
    if 0 < percent < 100:
        return None
    message = VOLCANO_JDB_PERCENTAGE.format(value=_go_quote(text), key=key)
    return Problem(here, volcano_said(message, fix))


def check_jdb_annotations(
    annotations: Mapping[str, Any], path: str = "metadata.annotations"
) -> list[Problem]:
    """Volcano's pod rules for its disruption budget annotations, in its order: each value in turn (a count
    > 0 or a percentage 1%-99%), then that only one of the two is set."""
    keys = (constants.JDB_MIN_AVAILABLE_KEY, constants.JDB_MAX_UNAVAILABLE_KEY)
    for key in keys:
        if key in annotations and (problem := _jdb_value_problem(key, str(annotations[key]), path)):
            return [problem]
    if all(key in annotations for key in keys):
        return [
            Problem(
                f"{path}[{keys[1]}]",
                volcano_said(
                    VOLCANO_JDB_BOTH.format(keys=" ".join(keys)),
                    f"cannot be set together with {keys[0]} (keep one of the two)",
                ),
            )
        ]
    return []
