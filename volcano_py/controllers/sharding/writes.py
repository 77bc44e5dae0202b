"""The API writes that bring the NodeShards to a plan (``plan.plan_shards``): create, spec patch, status
patch, delete.

What the controller writes, as Volcano's does: one NodeShard per configured scheduler, named after it, with
``spec.nodesDesired``; in ``status`` the hand-over (``nodesToAdd``, ``nodesToRemove``) and ``lastUpdateTime``.
``status.nodesInUse`` belongs to the shard's scheduler and is never written here. The status is a
subresource, so a new shard's status goes out as a second write after its create. A write is made only
when what it carries changed: every write comes back as a watch event, and an unconditional
``lastUpdateTime`` would make each sync trigger the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.api.shard import NodeShard
from volcano_py.controllers.sharding.plan import ShardingPlan, ShardPlan

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ShardWrite:
    name: str
    create: JSON | None = None  # the new NodeShard's body
    spec_patch: JSON | None = None  # a merge patch of the object
    status_patch: JSON | None = None  # a merge patch of the status subresource

    @property
    def empty(self) -> bool:
        return self.create is None and self.spec_patch is None and self.status_patch is None


@dataclass(frozen=True, slots=True)
class ShardWrites:
    writes: tuple[ShardWrite, ...]  # the non-empty ones, in the config's order
    delete: tuple[str, ...]


def _status_patch(plan: ShardPlan, stored: NodeShard | None, now: str) -> JSON | None:
    to_add, to_remove = list(plan.handover.nodes_to_add), list(plan.handover.nodes_to_remove)
    if (
        stored is not None
        and sorted(stored.status.nodes_to_add) == to_add
        and sorted(stored.status.nodes_to_remove) == to_remove
    ):
        return None
    return {"status": {"nodesToAdd": to_add, "nodesToRemove": to_remove, "lastUpdateTime": now}}


def shard_writes(plan: ShardingPlan, stored: Mapping[str, NodeShard], now: str) -> ShardWrites:
    """The writes that make ``stored`` (NodeShards by name) say what ``plan`` says; ``now``: a metav1.Time."""
    writes: list[ShardWrite] = []
    for shard in plan.shards:
        current = stored.get(shard.name)
        desired = list(shard.nodes_desired)
        write = ShardWrite(
            name=shard.name,
            create=(
                NodeShard.model_validate(
                    {"metadata": {"name": shard.name}, "spec": {"nodesDesired": desired}}
                ).to_dict()
                if current is None
                else None
            ),
            spec_patch=(
                {"spec": {"nodesDesired": desired}} if current is not None and shard.spec_changed else None
            ),
            status_patch=_status_patch(shard, current, now),
        )
        if not write.empty:
            writes.append(write)
    return ShardWrites(writes=tuple(writes), delete=plan.stale)
