"""Reads of a ``topology.volcano.sh/v1alpha1`` HyperNode body (see ``api/topology``'s models), and the
bodies HyperNode discovery writes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from volcano_py.api import constants
from volcano_py.api.objects import metadata_of, spec_of, status_of
from volcano_py.api.topology import MemberType

Obj = Mapping[str, Any]


def hypernode_spec_problem(hn: Obj) -> str:
    """Why the HyperNode's spec cannot be read at all ('' when it can): the model reports the rest."""
    return "" if isinstance(hn.get("spec"), Mapping) else "spec is missing"


def hypernode_for_model(hn: Obj) -> Obj:
    """``hn`` as the HyperNode model reads it: a tier written as a string of digits (v1alpha1 once typed it
    so) as that integer."""
    spec = spec_of(hn)
    tier = spec.get("tier")
    if isinstance(tier, str) and tier.isdigit():
        return {**hn, "spec": {**spec, "tier": int(tier)}}
    return hn


def hypernode_members(hn: Obj) -> Sequence[Mapping[str, Any]]:
    """``spec.members`` as written (each a ``type`` and a ``selector``)."""
    return spec_of(hn).get("members") or ()


def hypernode_node_count(hn: Obj) -> int | None:
    """``status.nodeCount`` as the controller last wrote it; None before it did."""
    count = status_of(hn).get("nodeCount")
    return None if count is None else int(count)


def exact_members(kind: MemberType, names: Iterable[str]) -> list[dict[str, Any]]:
    """``spec.members`` naming each of ``names`` (of ``kind``) by an exact match."""
    return [{"type": kind.value, "selector": {"exactMatch": {"name": name}}} for name in names]


def hypernode_body(
    name: str, labels: Mapping[str, str], tier: int, tier_name: str, members: list[dict[str, Any]]
) -> dict[str, Any]:
    """A HyperNode to create."""
    return {
        "apiVersion": constants.TOPOLOGY_API_VERSION,
        "kind": constants.HYPERNODE_KIND,
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {"tier": tier, "tierName": tier_name, "members": members},
    }


def same_hypernode_spec(have: Obj, want: Obj) -> bool:
    return have.get("spec") == want.get("spec")


def with_hypernode_spec(have: Obj, labels: Mapping[str, str], want: Obj) -> dict[str, Any]:
    """``have`` with ``want``'s spec and ``labels``, the rest of it (version, other metadata) kept: the
    update that makes it ``want``."""
    return {
        **have,
        "metadata": {**metadata_of(have), "labels": dict(labels)},
        "spec": want["spec"],
    }
