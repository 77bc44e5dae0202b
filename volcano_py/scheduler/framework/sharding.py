"""Node sharding: which nodes a session may place on (hard mode) or tries first (soft mode).

A scheduler run with ``--scheduler-sharding-mode soft|hard`` reads the NodeShard named by its
``--scheduler-sharding-name``. Its nodes are the shard's desired nodes that no other shard's scheduler still
uses (``api.shard.usable_nodes``): a node moving between shards is the old owner's until that one lets it go.
``shard_scope`` turns the NodeShards into a ``ShardScope`` the snapshot carries; the session turns that into
a mask over its node table (hard: a predicate every placement honours, its failures named in explanations)
and a score lift (soft: any shard node that fits outscores every node outside it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from volcano_py.api.shard import DEFAULT_SHARD_NAME, NodeShard, ShardingMode, held_by_others, usable_nodes

from .nodetable import BoolArray, FloatArray

Obj = Mapping[str, Any]

# Added to the score of every shard node in soft mode: more than any conf's node-order plugins sum to, so the
# best node is outside the shard only when no shard node fits (Volcano tries the shard's nodes first).
SOFT_SHARD_LIFT: Final = 1e9


@dataclass(frozen=True, slots=True)
class Sharding:
    """A scheduler's sharding flags (``--scheduler-sharding-mode``, ``--scheduler-sharding-name``)."""

    mode: ShardingMode = ShardingMode.NONE
    name: str = DEFAULT_SHARD_NAME

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("--scheduler-sharding-name must name a NodeShard, e.g. 'volcano'")


NO_SHARDING: Final = Sharding()


@dataclass(frozen=True, slots=True)
class ShardScope:
    """The nodes of this scheduler's shard for one session, and what the session does with them."""

    mode: ShardingMode
    name: str
    # Desired by the shard and used by no other shard's scheduler.
    nodes: frozenset[str]
    # Desired by the shard (a superset of ``nodes``): the status the scheduler writes compares the two.
    desired: frozenset[str] = frozenset()
    # Whether the NodeShard exists (without it the shard has no nodes).
    found: bool = True

    @property
    def reason(self) -> str:
        """What a node outside the shard fails with (hard mode), after a count of nodes."""
        if not self.found:
            return f"outside the scheduler's shard (no NodeShard {self.name})"
        return f"outside the scheduler's NodeShard {self.name}"

    def mask(self, node_names: Sequence[str]) -> BoolArray:
        """Per node of ``node_names``, whether it is in the shard."""
        nodes = self.nodes
        return np.fromiter((name in nodes for name in node_names), dtype=np.bool_, count=len(node_names))

    def lift(self, node_names: Sequence[str]) -> FloatArray:
        """Per node of ``node_names``, what soft mode adds to its score."""
        return self.mask(node_names).astype(np.float64) * SOFT_SHARD_LIFT


def shard_scope(sharding: Sharding, nodeshards: Iterable[Obj]) -> ShardScope | None:
    """The scope a session honours (None: sharding is off). Malformed NodeShards raise ``ValueError``."""
    if sharding.mode is ShardingMode.NONE:
        return None
    shards = [NodeShard.model_validate(obj) for obj in nodeshards]
    own = next((shard for shard in shards if shard.name == sharding.name), None)
    if own is None:
        return ShardScope(sharding.mode, sharding.name, frozenset(), found=False)
    desired = frozenset(own.spec.nodes_desired)
    nodes = usable_nodes(desired, held_by_others(sharding.name, shards))
    return ShardScope(sharding.mode, sharding.name, nodes, desired)
