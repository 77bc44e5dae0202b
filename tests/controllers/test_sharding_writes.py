"""What the sharding worker writes for a plan: what changed only, the status apart, stale shards gone."""

from __future__ import annotations

from volcano_py.api.shard import NodeShard
from volcano_py.api.sharding_config import parse_sharding_config
from volcano_py.controllers.sharding.plan import plan_shards
from volcano_py.controllers.sharding.rules import NodeUsage
from volcano_py.controllers.sharding.writes import shard_writes

NOW = "2026-01-01T00:00:00Z"
CONFIG = parse_sharding_config(
    """
schedulerConfigs:
- name: a
  type: volcano
  policies: [{name: node-limit, arguments: {maxNodes: 2}}]
- name: b
  type: volcano
  policies: [{name: node-limit, arguments: {maxNodes: 2}}]
"""
)
NODES = [NodeUsage(name=f"n{i}", cpu_capacity_milli=1000) for i in range(4)]


def shard(
    name: str, desired: list[str], *, in_use: tuple[str, ...] = (), to_add: tuple[str, ...] = ()
) -> NodeShard:
    return NodeShard.model_validate(
        {
            "metadata": {"name": name},
            "spec": {"nodesDesired": desired},
            "status": {"nodesInUse": list(in_use), "nodesToAdd": list(to_add)},
        }
    )


def test_new_shards_are_created_with_their_hand_over() -> None:
    todo = shard_writes(plan_shards(CONFIG, NODES, []), {}, NOW)
    assert [w.name for w in todo.writes] == ["a", "b"]
    first = todo.writes[0]
    assert first.create == {
        "apiVersion": "shard.volcano.sh/v1alpha1",
        "kind": "NodeShard",
        "metadata": {"name": "a"},
        "spec": {"nodesDesired": ["n0", "n1"]},
    }
    assert first.spec_patch is None
    assert first.status_patch == {
        "status": {"nodesToAdd": ["n0", "n1"], "nodesToRemove": [], "lastUpdateTime": NOW}
    }
    assert todo.delete == ()


def test_shards_as_planned_need_no_write() -> None:
    stored = {
        "a": shard("a", ["n0", "n1"], to_add=("n0", "n1")),
        "b": shard("b", ["n2", "n3"], to_add=("n2", "n3")),
    }
    todo = shard_writes(plan_shards(CONFIG, NODES, list(stored.values())), stored, NOW)
    assert todo.writes == () and todo.delete == ()


def test_a_moved_node_patches_spec_and_status_and_a_stale_shard_is_deleted() -> None:
    stored = {
        "a": shard("a", ["n0", "n1", "n2"], in_use=("n0", "n1", "n2")),
        "b": shard("b", ["n3"], in_use=("n3",)),
        "gone": shard("gone", []),
    }
    todo = shard_writes(plan_shards(CONFIG, NODES, list(stored.values())), stored, NOW)
    by_name = {w.name: w for w in todo.writes}
    assert by_name["a"].spec_patch == {"spec": {"nodesDesired": ["n0", "n1"]}}
    assert by_name["a"].status_patch == {
        "status": {"nodesToAdd": [], "nodesToRemove": ["n2"], "lastUpdateTime": NOW}
    }
    # b waits for n2 until a lets it go: not yet to add.
    assert by_name["b"].spec_patch == {"spec": {"nodesDesired": ["n2", "n3"]}}
    assert by_name["b"].status_patch is None
    assert todo.delete == ("gone",)
