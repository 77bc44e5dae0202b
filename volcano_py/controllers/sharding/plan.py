"""What the sharding controller should make of the NodeShards this round: each shard's desired nodes, where
each stands in the hand-over, which shards to delete, and which nodes no shard takes.

The worker writes a shard's ``spec.nodesDesired`` only when it changed (as a set). Volcano also skips a write
when fewer than a tenth of the nodes are new; that can leave a node desired by two shards until the next
change, so here every change is written, and stability comes from the assignment (``assign``) instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volcano_py.api.shard import Handover, NodeShard, handover, held_by_others
from volcano_py.api.sharding_config import ShardingConfig
from volcano_py.controllers.sharding.assign import ShardChoice, assign
from volcano_py.controllers.sharding.rules import NodeUsage


@dataclass(frozen=True, slots=True)
class ShardPlan:
    name: str
    nodes_desired: tuple[str, ...]
    handover: Handover
    exists: bool  # False: the NodeShard is to be created
    spec_changed: bool  # ``spec.nodesDesired`` is to be written (always so for a new shard)
    choice: ShardChoice


@dataclass(frozen=True, slots=True)
class ShardingPlan:
    shards: tuple[ShardPlan, ...]
    # NodeShards of schedulers no longer configured: deleted, as Volcano deletes them. Until they are, the
    # nodes their scheduler still uses are not handed to anyone else.
    stale: tuple[str, ...]
    unassigned: tuple[str, ...]  # nodes no shard takes (e.g. utilisation in the gap between two bands)

    def shard(self, name: str) -> ShardPlan:
        return next(plan for plan in self.shards if plan.name == name)


def plan_shards(
    config: ShardingConfig, nodes: Sequence[NodeUsage], shards: Sequence[NodeShard]
) -> ShardingPlan:
    existing = {shard.name: shard for shard in shards}
    current = {name: shard.spec.nodes_desired for name, shard in existing.items()}
    plans: list[ShardPlan] = []
    for choice in assign(config, nodes, current):
        stored = existing.get(choice.scheduler)
        in_use = stored.status.nodes_in_use if stored is not None else []
        plans.append(
            ShardPlan(
                name=choice.scheduler,
                nodes_desired=choice.nodes,
                handover=handover(choice.nodes, in_use, held_by_others(choice.scheduler, shards)),
                exists=stored is not None,
                spec_changed=stored is None or set(stored.spec.nodes_desired) != set(choice.nodes),
                choice=choice,
            )
        )
    configured = {scheduler.name for scheduler in config.schedulers}
    assigned = {node for plan in plans for node in plan.nodes_desired}
    return ShardingPlan(
        shards=tuple(plans),
        stale=tuple(sorted(name for name in existing if name not in configured)),
        unassigned=tuple(sorted({node.name for node in nodes} - assigned)),
    )
