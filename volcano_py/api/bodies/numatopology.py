"""Reads of a ``nodeinfo.volcano.sh/v1alpha1`` Numatopology body (see ``api/nodeinfo``'s models)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.nodeinfo import PolicyName
from volcano_py.api.objects import EMPTY as _EMPTY
from volcano_py.api.objects import spec_of

Obj = Mapping[str, Any]


def numatopology_cpu_detail(topology: Obj) -> Mapping[str, Any]:
    """``spec.cpuDetail``: CPU id (a string) -> its place (``numa``, ``socket``, ``core``)."""
    return spec_of(topology).get("cpuDetail") or _EMPTY


def numatopology_allocatable(topology: Obj, resource: str) -> str | None:
    """``spec.numares[resource].allocatable`` (a cpuset-style list for cpu); None when unset."""
    value = ((spec_of(topology).get("numares") or _EMPTY).get(resource) or _EMPTY).get("allocatable")
    return None if value is None else str(value)


def numatopology_policy(topology: Obj, policy: PolicyName) -> str:
    """The kubelet's ``policy`` (CPU or topology manager) the node reports; '' when unset."""
    return str((spec_of(topology).get("policies") or _EMPTY).get(policy.value, ""))
