"""Which nodes each scheduler's NodeShard gets, as a user would see them in ``spec.nodesDesired`` and
``status``: bands, exclusivity, stability, node limits, warmup labels and the hand-over of a moving node."""

from __future__ import annotations

import random
from typing import Any

import pytest

from volcano_py.api.shard import NodeShard, usable_nodes
from volcano_py.api.sharding_config import ShardingConfig, parse_sharding_config
from volcano_py.controllers.sharding.plan import ShardingPlan, plan_shards
from volcano_py.controllers.sharding.rules import NodeUsage, node_usage, rounded

# Volcano's default bands: batch work on quiet nodes, agents on busy ones; (0.6, 0.7) belongs to neither.
TWO_BANDS = """
schedulerConfigs:
  - name: volcano
    policies:
      - {name: allocation-rate, arguments: {minCPUUtil: 0.0, maxCPUUtil: 0.6}}
      - {name: node-limit, arguments: {minNodes: 1, maxNodes: 100}}
  - name: agent-scheduler
    policies:
      - {name: allocation-rate, arguments: {minCPUUtil: 0.7, maxCPUUtil: 1.0}}
      - {name: warmup, weight: 5}
      - {name: node-limit, arguments: {minNodes: 1, maxNodes: 100}}
"""


def node(name: str, util: float = 0.0, **labels: str) -> NodeUsage:
    return NodeUsage(
        name=name, cpu_capacity_milli=10_000, cpu_requested_milli=round(util * 10_000), labels=labels
    )


def shard(name: str, desired: list[str], in_use: list[str] | None = None) -> NodeShard:
    return NodeShard.model_validate(
        {
            "metadata": {"name": name},
            "spec": {"nodesDesired": desired},
            "status": {"nodesInUse": in_use or []},
        }
    )


def desired(plan: ShardingPlan) -> dict[str, list[str]]:
    return {p.name: list(p.nodes_desired) for p in plan.shards}


def config(text: str = TWO_BANDS) -> ShardingConfig:
    return parse_sharding_config(text)


@pytest.mark.parametrize(
    ("nodes", "expected", "unassigned"),
    [
        pytest.param(
            [node("n1", 0.1), node("n2", 0.65), node("n3", 0.8), node("n4", 0.0)],
            {"volcano": ["n1", "n4"], "agent-scheduler": ["n3"]},
            ["n2"],
            id="by-band-gap-node-in-no-shard",
        ),
        pytest.param(
            [node("n1", 0.6049), node("n2", 0.695)],
            {"volcano": ["n1"], "agent-scheduler": ["n2"]},
            [],
            id="bounds-compared-at-two-decimals-halves-up",
        ),
    ],
)
def test_each_node_lands_in_the_shard_of_its_band(
    nodes: list[NodeUsage], expected: dict[str, list[str]], unassigned: list[str]
) -> None:
    plan = plan_shards(config(), nodes, [])
    assert desired(plan) == expected
    assert list(plan.unassigned) == unassigned


def test_no_node_is_in_two_shards_even_when_bands_overlap() -> None:
    overlapping = """
schedulerConfigs:
  - {name: first, policies: [{name: allocation-rate, arguments: {minCPUUtil: 0.0, maxCPUUtil: 1.0}},
                             {name: node-limit, arguments: {maxNodes: 2}}]}
  - {name: second, policies: [{name: allocation-rate, arguments: {minCPUUtil: 0.0, maxCPUUtil: 1.0}}]}
"""
    nodes = [node(f"n{i}", i / 10) for i in range(5)]
    plan = plan_shards(config(overlapping), nodes, [])
    # The first scheduler packs: its two busiest nodes; the second gets the rest.
    assert desired(plan) == {"first": ["n3", "n4"], "second": ["n0", "n1", "n2"]}


def test_the_same_cluster_gives_the_same_shards_whatever_the_order() -> None:
    nodes = [
        node(f"n{i:02}", (i % 10) / 10, **({"node.volcano.sh/warmup": "true"} if i % 3 else {}))
        for i in range(30)
    ]
    first = plan_shards(config(), nodes, [])
    stored = [shard(p.name, list(p.nodes_desired), list(p.nodes_desired)) for p in first.shards]
    for seed in range(5):
        shuffled = random.Random(seed).sample(nodes, len(nodes))
        again = plan_shards(config(), shuffled, stored)
        assert desired(again) == desired(first)
        assert not any(p.spec_changed for p in again.shards)  # nothing to write


def test_a_node_moves_only_when_its_utilisation_crosses_a_band() -> None:
    stored = [shard("volcano", ["a", "b"], ["a", "b"]), shard("agent-scheduler", ["c"], ["c"])]
    # Within the band: a busier, b idle; nothing moves.
    plan = plan_shards(config(), [node("a", 0.55), node("b", 0.0), node("c", 0.9)], stored)
    assert desired(plan) == {"volcano": ["a", "b"], "agent-scheduler": ["c"]}
    assert not any(p.spec_changed for p in plan.shards)
    # a crosses 0.7: it leaves volcano and is desired by the agent scheduler.
    plan = plan_shards(config(), [node("a", 0.75), node("b", 0.0), node("c", 0.9)], stored)
    assert desired(plan) == {"volcano": ["b"], "agent-scheduler": ["a", "c"]}
    assert [p.name for p in plan.shards if p.spec_changed] == ["volcano", "agent-scheduler"]


def test_a_node_is_handed_over_only_once_its_old_owner_lets_it_go() -> None:
    nodes = [node("a", 0.75), node("b", 0.0), node("c", 0.9)]
    # volcano's scheduler still uses a.
    stored = [shard("volcano", ["a", "b"], ["a", "b"]), shard("agent-scheduler", ["c"], ["c"])]
    plan = plan_shards(config(), nodes, stored)
    agent, volcano = plan.shard("agent-scheduler"), plan.shard("volcano")
    assert (volcano.handover.nodes_to_remove, volcano.handover.nodes_to_add) == (("a",), ())
    assert (agent.handover.nodes_to_add, agent.handover.waiting) == ((), ("a",))
    assert usable_nodes(agent.nodes_desired, frozenset(["a", "b"])) == {"c"}
    # volcano's scheduler has let a go: now it is the agent scheduler's to take.
    released = [shard("volcano", ["b"], ["b"]), shard("agent-scheduler", ["a", "c"], ["c"])]
    agent = plan_shards(config(), nodes, released).shard("agent-scheduler")
    assert (agent.handover.nodes_to_add, agent.handover.waiting) == (("a",), ())


def test_a_removed_scheduler_keeps_its_nodes_until_its_shard_is_gone() -> None:
    only_volcano = "schedulerConfigs: [{name: volcano, policies: [{name: node-limit}]}]"
    stored = [shard("old", ["x"], ["x"])]
    plan = plan_shards(config(only_volcano), [node("x"), node("y")], stored)
    assert plan.stale == ("old",)
    assert plan.shard("volcano").nodes_desired == ("x", "y")
    assert plan.shard("volcano").handover.waiting == ("x",)
    assert plan.shard("volcano").exists is False


@pytest.mark.parametrize(
    ("limit", "incumbents", "expected", "short"),
    [
        pytest.param("{maxNodes: 2}", [], ["n3", "n4"], None, id="keeps-the-busiest"),
        pytest.param("{maxNodes: 0}", [], ["n0", "n1", "n2", "n3", "n4"], None, id="zero-is-no-bound"),
        pytest.param(
            "{minNodes: 9, maxNodes: 10}", [], ["n0", "n1", "n2", "n3", "n4"], 9, id="min-not-padded"
        ),
    ],
)
def test_node_limit(limit: str, incumbents: list[str], expected: list[str], short: int | None) -> None:
    text = f"""
schedulerConfigs:
  - name: s
    policies:
      - {{name: allocation-rate, arguments: {{minCPUUtil: 0, maxCPUUtil: 1}}}}
      - {{name: node-limit, arguments: {limit}}}
"""
    plan = plan_shards(config(text), [node(f"n{i}", i / 10) for i in range(5)], [])
    assert list(plan.shard("s").nodes_desired) == expected
    assert plan.shard("s").choice.short_of_min_nodes == short


def test_a_full_node_limit_breaks_ties_in_favour_of_the_nodes_it_holds() -> None:
    text = "schedulerConfigs: [{name: s, policies: [{name: node-limit, arguments: {maxNodes: 1}}]}]"
    nodes = [node("a"), node("b")]
    assert plan_shards(config(text), nodes, []).shard("s").nodes_desired == ("a",)
    assert plan_shards(config(text), nodes, [shard("s", ["b"])]).shard("s").nodes_desired == ("b",)


def test_warmup_nodes_come_first_and_a_relabelled_node_takes_the_seat() -> None:
    text = """
schedulerConfigs:
  - name: volcano
    policies:
      - {name: warmup, weight: 100, arguments: {warmupLabel: pool, warmupLabelValue: warm}}
      - {name: node-limit, arguments: {minNodes: 1, maxNodes: 1}}
  - {name: agent-scheduler, policies: [{name: node-limit, arguments: {maxNodes: 100}}]}
"""
    plan = plan_shards(config(text), [node("a", pool="warm"), node("b")], [])
    assert desired(plan) == {"volcano": ["a"], "agent-scheduler": ["b"]}
    stored = [shard("volcano", ["a"], ["a"]), shard("agent-scheduler", ["b"], ["b"])]
    plan = plan_shards(config(text), [node("a"), node("b", pool="warm")], stored)
    assert desired(plan) == {"volcano": ["b"], "agent-scheduler": ["a"]}
    assert plan.shard("volcano").handover.waiting == ("b",)


def test_the_default_warmup_label_outranks_a_busier_node() -> None:
    nodes = [node("busy", 0.95), node("warm", 0.7, **{"node.volcano.sh/warmup": "true"})]
    assert plan_shards(config(), nodes, []).shard("agent-scheduler").choice.ranked == ("warm", "busy")


def _pod(cpu: str, phase: str = "Running", **annotations: str) -> dict[str, Any]:
    return {
        "metadata": {"annotations": annotations},
        "spec": {"containers": [{"resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": phase},
    }


def test_utilisation_is_requests_of_live_pods_over_capacity() -> None:
    node_obj = {
        "metadata": {"name": "n", "labels": {"zone": "a"}},
        "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"}},
    }
    pods = [
        _pod("1"),
        _pod("500m"),
        _pod("2", phase="Succeeded"),
        _pod("1", **{"kubernetes.io/config.mirror": "x"}),
    ]
    usage = node_usage(node_obj, pods)
    assert (usage.name, usage.labels, usage.cpu_requested_milli) == ("n", {"zone": "a"}, 1500)
    assert usage.cpu_utilisation == 0.375
    assert node_usage(node_obj, [_pod("9")]).cpu_utilisation == 1.0
    assert NodeUsage("z", cpu_capacity_milli=0, cpu_requested_milli=5).cpu_utilisation == 0.0


@pytest.mark.parametrize(("value", "expected"), [(0.125, 0.13), (0.6049, 0.6), (0.285, 0.28), (0.695, 0.7)])
def test_rounding_is_gos(value: float, expected: float) -> None:
    assert rounded(value) == expected
