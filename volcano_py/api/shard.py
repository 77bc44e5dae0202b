"""``shard.volcano.sh/v1alpha1`` NodeShard: the nodes one scheduler may place pods on.

The sharding controller writes ``spec.nodesDesired`` (one NodeShard per configured scheduler, named after it);
the scheduler of that name writes ``status``: the desired nodes it has started using (``nodesInUse``), and the
difference between the two (``nodesToAdd``, ``nodesToRemove``). A node changes hands only once its old owner
has dropped it from its ``nodesInUse``, so two schedulers never place on one node at the same time.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import Field

from volcano_py.api import constants
from volcano_py.api.common import Time, VolcanoModel
from volcano_py.api.kube_names import name_problems
from volcano_py.api.meta import KubeObject
from volcano_py.api.problems import Problem, join_path


class ShardingMode(enum.StrEnum):
    """A scheduler's ``--scheduler-sharding-mode``: what its NodeShard means to it."""

    # Shards are not read: every node is the scheduler's.
    NONE = "none"
    # The shard's nodes are tried first; the others when none of them fits.
    SOFT = "soft"
    # Only the shard's nodes are used.
    HARD = "hard"


# Volcano's ``--scheduler-sharding-name`` default: the NodeShard a scheduler reads is named after it.
DEFAULT_SHARD_NAME: Final = "volcano"


class NodeShardSpec(VolcanoModel):
    # Required, as in Volcano's CRD: an empty list is a shard with no nodes, an absent one a mistake.
    nodes_desired: list[str]


class NodeShardStatus(VolcanoModel):
    """Written by the shard's scheduler, so it may lag behind the spec."""

    last_update_time: Time | None = None
    nodes_in_use: list[str] = Field(default_factory=list)
    nodes_to_add: list[str] = Field(default_factory=list)
    nodes_to_remove: list[str] = Field(default_factory=list)


class NodeShard(KubeObject):
    """A cluster-scoped set of nodes dedicated to the scheduler it is named after."""

    api_version: str = constants.SHARD_API_VERSION
    kind: str = constants.NODESHARD_KIND
    spec: NodeShardSpec = Field(default_factory=lambda: NodeShardSpec(nodes_desired=[]))
    status: NodeShardStatus = Field(default_factory=NodeShardStatus)


def validate_nodeshard(shard: NodeShard) -> list[Problem]:
    """The name, and no node listed twice (a set in Volcano's scheduler: a repeat is a writer's bug)."""
    problems = name_problems(shard.metadata.name, shard.metadata.generate_name)
    lists = {
        ("spec", "nodesDesired"): shard.spec.nodes_desired,
        ("status", "nodesInUse"): shard.status.nodes_in_use,
        ("status", "nodesToAdd"): shard.status.nodes_to_add,
        ("status", "nodesToRemove"): shard.status.nodes_to_remove,
    }
    for (part, field), nodes in lists.items():
        seen: set[str] = set()
        for i, node in enumerate(nodes):
            if node in seen:
                problems.append(
                    Problem(join_path(part, field, i), f"node {node!r} is listed twice (list each node once)")
                )
            seen.add(node)
    return problems


# --- hand-over: one rule for the controller (what to write) and the scheduler (what it may use) -----------


@dataclass(frozen=True, slots=True)
class Handover:
    """Where a shard stands between what is desired of it and what its scheduler uses."""

    # Desired, not yet used by this shard, and used by no other: free to take now.
    nodes_to_add: tuple[str, ...]
    # Used by this shard, no longer desired: to let go.
    nodes_to_remove: tuple[str, ...]
    # Desired, but another shard still uses them: they join ``nodes_to_add`` once it lets them go.
    waiting: tuple[str, ...]


def held_by_others(name: str, shards: Iterable[NodeShard]) -> frozenset[str]:
    """The nodes the other shards' schedulers still use (their ``status.nodesInUse``)."""
    return frozenset(node for shard in shards if shard.name != name for node in shard.status.nodes_in_use)


def usable_nodes(desired: Iterable[str], held_elsewhere: frozenset[str]) -> frozenset[str]:
    """What a scheduler may place on: its desired nodes that no other scheduler still uses. A node moving
    between shards is thus used by its old owner until released, and only then by its new one."""
    return frozenset(desired) - held_elsewhere


def handover(desired: Iterable[str], in_use: Iterable[str], held_elsewhere: frozenset[str]) -> Handover:
    wanted, used = frozenset(desired), frozenset(in_use)
    pending = wanted - used
    return Handover(
        nodes_to_add=tuple(sorted(pending - held_elsewhere)),
        nodes_to_remove=tuple(sorted(used - wanted)),
        waiting=tuple(sorted(pending & held_elsewhere)),
    )


def shard_status(desired: Iterable[str], usable: Iterable[str]) -> NodeShardStatus:
    """The status a scheduler writes on its shard once it places on ``usable`` (as Volcano's does):
    ``nodesInUse`` those, ``nodesToAdd`` the desired ones it waits for, ``nodesToRemove`` those it uses but
    is no longer given (none: it stops using them before saying so). Lists sorted, so equal statuses compare
    equal."""
    wanted, used = frozenset(desired), frozenset(usable)
    return NodeShardStatus(
        nodes_in_use=sorted(used),
        nodes_to_add=sorted(wanted - used),
        nodes_to_remove=sorted(used - wanted),
    )


# --- who owns a node: one reading for every view (``vcctl nodeshard``, the dashboard's GPU grid) ----------


@dataclass(frozen=True, slots=True)
class NodeOwner:
    """A node's place in the NodeShards: the shard whose scheduler places on it now (its ``nodesInUse``),
    and the shard the controller gives it to (its ``nodesDesired``). They differ while a node changes
    hands: the new owner waits until the old one lets go."""

    in_use_by: str | None
    desired_by: str | None

    @property
    def shard(self) -> str:
        """The shard that has the node, or failing that the one about to have it."""
        return self.in_use_by or self.desired_by or ""

    @property
    def text(self) -> str:
        if self.in_use_by is None:
            return f"{self.desired_by} (waiting)"
        if self.desired_by is None:
            return f"{self.in_use_by} (releasing)"
        if self.in_use_by != self.desired_by:
            return f"{self.in_use_by} (handing over to {self.desired_by})"
        return self.in_use_by


def node_owners(shards: Iterable[NodeShard]) -> dict[str, NodeOwner]:
    """Every node some shard desires or uses, with its owner. A node two shards list (a writer's bug the
    hand-over rule prevents) goes to the first by name, so every view shows the same one."""
    in_use: dict[str, str] = {}
    desired: dict[str, str] = {}
    for shard in sorted(shards, key=lambda s: s.name):
        for node in shard.status.nodes_in_use:
            in_use.setdefault(node, shard.name)
        for node in shard.spec.nodes_desired:
            desired.setdefault(node, shard.name)
    return {node: NodeOwner(in_use.get(node), desired.get(node)) for node in sorted(in_use.keys() | desired)}


def read_nodeshards(objs: Iterable[Mapping[str, Any]]) -> tuple[list[NodeShard], list[str]]:
    """The NodeShards among the API's ``objs`` that parse, and one line per one that does not (the CRD's
    schema should prevent it; a view shows the others rather than nothing)."""
    good: list[NodeShard] = []
    bad: list[str] = []
    for obj in objs:
        try:
            good.append(NodeShard.model_validate(obj))
        except ValueError as err:
            name = (obj.get("metadata") or {}).get("name") or "?"
            bad.append(f"NodeShard {name} is malformed and left out: {err}")
    return good, bad
