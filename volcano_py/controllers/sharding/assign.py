"""Which nodes each scheduler's shard should hold: Volcano's pipeline, scheduler by scheduler.

For each scheduler, in the order of the config: the nodes no earlier scheduler took; those every filtering
policy passes; ranked by the weighted sum of the scoring policies, best first; cut by each selecting policy in
turn. What it keeps, no later scheduler sees, so no node is in two shards.

Volcano ranks with a stable sort over its informer's order, which is arbitrary; here equal scores are broken
by incumbency (a node already in this shard's ``nodesDesired`` first), then by name. So the same cluster gives
the same shards on every run, and a node leaves a shard only when its score does change: its utilisation
crosses the band's edge, a label or the config changes, or a node limit is full and a better node arrives.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from volcano_py.api.sharding_config import SchedulerShardConfig, ShardingConfig
from volcano_py.controllers.sharding.rules import NodeUsage, below_minimum, passes, select, weighted_score


@dataclass(frozen=True, slots=True)
class ShardChoice:
    scheduler: str
    nodes: tuple[str, ...]  # by name: the order written to ``spec.nodesDesired``
    ranked: tuple[str, ...]  # best first, as chosen (why a node made the cut)
    short_of_min_nodes: int | None = None  # the ``minNodes`` it falls short of; never padded, as in Volcano


def choose(
    scheduler: SchedulerShardConfig, candidates: Sequence[NodeUsage], incumbents: Collection[str]
) -> ShardChoice:
    """One scheduler's shard out of ``candidates`` (the nodes still free)."""
    policies = scheduler.policies
    kept = [node for node in candidates if all(passes(p.arguments, node) for p in policies)]
    keyed = sorted(
        ((-weighted_score(policies, node), node.name not in incumbents, node.name), node) for node in kept
    )
    ranked: Sequence[NodeUsage] = [node for _, node in keyed]
    for policy in policies:
        ranked = select(policy.arguments, ranked)
        if not ranked:
            break  # Volcano stops the chain on an empty selection
    names = tuple(node.name for node in ranked)
    return ShardChoice(
        scheduler=scheduler.name,
        nodes=tuple(sorted(names)),
        ranked=names,
        short_of_min_nodes=below_minimum(policies, len(names)),
    )


def assign(
    config: ShardingConfig, nodes: Sequence[NodeUsage], current: Mapping[str, Collection[str]]
) -> tuple[ShardChoice, ...]:
    """Every scheduler's shard. ``current``: each shard's present ``spec.nodesDesired``, by scheduler name."""
    by_name = {node.name: node for node in nodes}
    free = [by_name[name] for name in sorted(by_name)]
    choices: list[ShardChoice] = []
    for scheduler in config.schedulers:
        choice = choose(scheduler, free, frozenset(current.get(scheduler.name, ())))
        taken = frozenset(choice.nodes)
        free = [node for node in free if node.name not in taken]
        choices.append(choice)
    return tuple(choices)
