"""Volcano's revocable-zone and preemptable markings, read as its scheduler reads them (the tdm plugin's
inputs): a node's zone from its label, a pod's or PodGroup's leave to run there from annotations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api import constants

# The one zone value Volcano reads on a pod or PodGroup: any revocable zone, while its window is open.
ANY_ZONE: Final = "*"

_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})


def _go_true(value: object) -> bool:
    # Go's strconv.ParseBool, as Volcano reads these annotations; anything it does not parse is false.
    return str(value) in _TRUE


def node_revocable_zone(labels: Mapping[str, str]) -> str:
    """The revocable zone a node belongs to (label ``volcano.sh/revocable-zone``), or "" for none."""
    return str(labels.get(constants.REVOCABLE_ZONE_KEY) or "")


def revocable_zone(annotations: Mapping[str, Any]) -> str:
    """A pod's (or PodGroup's) leave to use revocable nodes: ``*`` when its annotation
    ``volcano.sh/revocable-zone`` is ``*`` or, without it, ``volcano.sh/preemptable`` is true; else "".
    As in Volcano, another zone value gives no leave (only ``*`` is read) and labels are not read."""
    if constants.REVOCABLE_ZONE_KEY in annotations:
        return ANY_ZONE if annotations[constants.REVOCABLE_ZONE_KEY] == ANY_ZONE else ""
    if constants.PREEMPTABLE_KEY in annotations and _go_true(annotations[constants.PREEMPTABLE_KEY]):
        return ANY_ZONE
    return ""


def podgroup_preemptable(metadata: Mapping[str, Any]) -> bool:
    """A PodGroup's ``volcano.sh/preemptable`` (annotation first, then label); false when unset, as
    Volcano's job default (a pod's own default is true)."""
    for where in ("annotations", "labels"):
        values = metadata.get(where) or {}
        if constants.PREEMPTABLE_KEY in values:
            return _go_true(values[constants.PREEMPTABLE_KEY])
    return False
