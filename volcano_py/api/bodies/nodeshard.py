"""Reads of a ``shard.volcano.sh/v1alpha1`` NodeShard body (see ``api/shard``'s models), and the status
body its scheduler writes back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.objects import status_of
from volcano_py.api.shard import NodeShardStatus

Obj = Mapping[str, Any]


def nodeshard_nodes_in_use(shard: Obj) -> Sequence[str]:
    """``status.nodesInUse``: the nodes the shard's scheduler places on now."""
    return status_of(shard).get("nodesInUse") or ()


def nodeshard_nodes_to_add(shard: Obj) -> Sequence[str]:
    return status_of(shard).get("nodesToAdd") or ()


def nodeshard_nodes_to_remove(shard: Obj) -> Sequence[str]:
    return status_of(shard).get("nodesToRemove") or ()


def nodeshard_assignment(shard: Obj) -> tuple[Any, Any]:
    """(``spec``, ``status.nodesInUse``) as written: what the sharding controller syncs on when it changes."""
    return shard.get("spec"), status_of(shard).get("nodesInUse")


def with_nodeshard_status(shard: Obj, status: NodeShardStatus, written_at: str) -> dict[str, Any]:
    """``shard`` with ``status``'s node lists (and ``written_at``) in its status, the rest of it kept."""
    return {
        **shard,
        "status": {
            **status_of(shard),
            "nodesInUse": status.nodes_in_use,
            "nodesToAdd": status.nodes_to_add,
            "nodesToRemove": status.nodes_to_remove,
            "lastUpdateTime": written_at,
        },
    }
