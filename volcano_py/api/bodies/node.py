"""Reads of a core/v1 Node body, the fields the scheduler and the controllers read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.bodies.conditions import none_false
from volcano_py.api.objects import EMPTY as _EMPTY

Obj = Mapping[str, Any]


def node_capacity(node: Obj) -> Mapping[str, Any]:
    """``status.capacity`` (a ResourceList): all the node has, what runs outside pods included."""
    return (node.get("status") or _EMPTY).get("capacity") or _EMPTY


def node_allocatable(node: Obj) -> Mapping[str, Any]:
    """``status.allocatable``, else its capacity (a node that reports no allocatable offers it all)."""
    status = node.get("status") or _EMPTY
    return status.get("allocatable") or status.get("capacity") or _EMPTY


def node_conditions(node: Obj) -> Sequence[Mapping[str, Any]]:
    return (node.get("status") or _EMPTY).get("conditions") or ()


def node_ready(node: Obj) -> bool:
    """No ``Ready`` condition says otherwise than True (a node that reports none is taken as ready)."""
    return none_false(node_conditions(node), "Ready")


def node_taints(node: Obj) -> Sequence[Mapping[str, Any]]:
    return (node.get("spec") or _EMPTY).get("taints") or ()


def node_unschedulable(node: Obj) -> bool:
    """``spec.unschedulable``: cordoned."""
    return bool((node.get("spec") or _EMPTY).get("unschedulable"))
