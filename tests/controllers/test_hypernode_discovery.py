"""HyperNode discovery from node labels: the config Volcano users write, the tree it gives, the writes."""

from __future__ import annotations

import asyncio
from typing import Any

from volcano_py.api import constants as c
from volcano_py.controllers.hypernode.discovery import (
    discover,
    hypernode_name,
    member_count,
    parse_config,
    reconcile,
)
from volcano_py.controllers.hypernode.worker import DEBOUNCE_SECONDS, TopologyDiscovery
from volcano_py.controllers.runtime.context import ControllerContext, ControllerOptions
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.kube import kinds
from volcano_py.kube.store import Delta, EventType

CONF = """
networkTopologyDiscovery:
  - source: ufm
    enabled: false
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        fabric:
          - nodeLabel: example.com/spine
          - nodeLabel: example.com/rack
          - nodeLabel: kubernetes.io/hostname
"""


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {f"example.com/{k}": v for k, v in labels.items()}}}


NODES = [
    node("n0", rack="r0", spine="s0"),
    node("n1", rack="r0", spine="s0"),
    node("n2", rack="r1", spine="s0"),
    node("n3", rack="r2"),  # no spine label: only its rack HyperNode
    node("n4"),  # no topology labels at all
]


def tree(objects: list[dict[str, Any]]) -> dict[tuple[int, str], list[str]]:
    by_name = {o["metadata"]["name"]: o for o in objects}

    def label(name: str) -> str:
        if name not in by_name:
            return name
        labels = by_name[name]["metadata"]["labels"]
        return next(v for k, v in labels.items() if k != c.NETWORK_TOPOLOGY_SOURCE_KEY)

    return {
        (o["spec"]["tier"], label(o["metadata"]["name"])): [
            label(m["selector"]["exactMatch"]["name"]) for m in o["spec"]["members"]
        ]
        for o in objects
    }


def test_labels_become_a_tree_of_hypernodes() -> None:
    config = parse_config(CONF)
    assert config.problems == [] and config.label is not None
    found = discover(NODES, config.label)
    assert tree(found) == {
        (1, "r0"): ["n0", "n1"],
        (1, "r1"): ["n2"],
        (1, "r2"): ["n3"],
        (2, "s0"): ["r0", "r1"],
    }
    rack = next(o for o in found if o["metadata"]["labels"].get("example.com/rack") == "r0")
    assert rack["metadata"]["labels"][c.NETWORK_TOPOLOGY_SOURCE_KEY] == "label"
    assert rack["spec"]["tierName"] == "example.com/rack"
    assert rack["spec"]["members"][0] == {"type": "Node", "selector": {"exactMatch": {"name": "n0"}}}
    assert rack["metadata"]["name"] == hypernode_name("fabric", 1, "example.com/rack", "r0")
    assert rack["metadata"]["name"].startswith("hypernode-fabric-tier1-")


def test_a_label_change_moves_the_node_and_reconcile_writes_only_the_difference() -> None:
    config = parse_config(CONF).label
    assert config is not None
    before = discover(NODES, config)
    moved = [node("n1", rack="r1", spine="s0") if n["metadata"]["name"] == "n1" else n for n in NODES]
    after = discover(moved, config, existing=before)
    assert tree(after)[(1, "r0")] == ["n0"] and tree(after)[(1, "r1")] == ["n1", "n2"]
    manual = {"metadata": {"name": "by-hand", "labels": {}}, "spec": {"tier": 1, "members": []}}
    plan = reconcile(after, [*before, manual])
    assert plan.create == [] and plan.delete == []
    assert sorted(tree(plan.update)) == [(1, "r0"), (1, "r1")]
    gone = reconcile(discover(NODES[:2], config, existing=before), [*before, manual])
    assert len(gone.delete) == 2 and "by-hand" not in gone.delete  # r1 and r2 emptied; the manual one stays


def test_volcanos_random_names_are_adopted() -> None:
    config = parse_config(CONF).label
    assert config is not None
    labels = {c.NETWORK_TOPOLOGY_SOURCE_KEY: "label", "example.com/rack": "r0"}
    volcano_made = {"metadata": {"name": "hypernode-fabric-tier1-x7k2q", "labels": labels}, "spec": {}}
    names = [o["metadata"]["name"] for o in discover(NODES, config, existing=[volcano_made])]
    assert "hypernode-fabric-tier1-x7k2q" in names


def test_unsupported_sources_and_bad_types_are_named() -> None:
    config = parse_config(
        "networkTopologyDiscovery:\n"
        "  - {source: ufm, enabled: true}\n"
        "  - source: label\n    enabled: true\n    config:\n      networkTopologyTypes:\n"
        "        a-name-longer-than-twenty: [{nodeLabel: x}, {nodeLabel: kubernetes.io/hostname}]\n"
        "        dup: [{nodeLabel: x}, {nodeLabel: x}]\n"
        "        flat: [{nodeLabel: kubernetes.io/hostname}]\n"
    )
    assert config.label is not None and dict(config.label.types) == {}
    assert [p.split(":")[0] for p in config.problems] == [
        "networkTopologyDiscovery[0].source 'ufm' is not supported by volcano-py (only 'label' discovers "
        "HyperNodes here; disable it or describe the topology with node labels)",
        "networkTopologyDiscovery[1].config.networkTopologyTypes.a-name-longer-than-twenty",
        "networkTopologyDiscovery[1].config.networkTopologyTypes.dup",
        "networkTopologyDiscovery[1].config.networkTopologyTypes.flat",
    ]


def test_node_count_counts_direct_members_as_volcano_does() -> None:
    nodes = {"gpu-0": {"rack": "a"}, "gpu-1": {"rack": "a"}, "cpu-0": {"rack": "b"}}
    by_label = {
        "spec": {"members": [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "a"}}}}]}
    }
    regex = {"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-"}}}
    exact = {"type": "Node", "selector": {"exactMatch": {"name": "gpu-0"}}}
    by_regex = {"spec": {"members": [regex, exact]}}
    expr = {"matchExpressions": [{"key": "rack", "operator": "NotIn", "values": ["a"]}]}
    by_expr = {"spec": {"members": [{"type": "Node", "selector": {"labelMatch": expr}}]}}
    tree = {
        "spec": {"members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": n}}} for n in "xy"]}
    }
    assert [member_count(h, nodes) for h in (by_label, by_regex, by_expr, tree)] == [2, 2, 1, 2]


def _node(name: str, labels: dict[str, str], version: str) -> dict[str, Any]:
    """A node as its metadata-only watch shows it."""
    return {
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": {"name": name, "labels": labels, "resourceVersion": version},
    }


async def test_node_labels_come_from_a_metadata_only_informer_and_only_a_label_change_queues_a_run() -> None:
    ctx = ControllerContext(
        options=ControllerOptions(),
        client=None,  # type: ignore[arg-type]
        recorder=None,  # type: ignore[arg-type]
        metrics=ControllerMetrics(),
    )
    topology = TopologyDiscovery(ctx)
    assert (topology.nodes.kind, topology.nodes.list_metadata_only, topology.nodes.watch_metadata_only) == (
        kinds.NODES,
        True,
        True,
    )
    rack = {"rack": "r1"}
    topology.node_changed(Delta(EventType.ADDED, "n1", None, _node("n1", rack, "1")))
    await asyncio.sleep(DEBOUNCE_SECONDS + 0.1)
    assert topology.queue.depth() == 2  # a discovery run and a recount
    await _drain(topology)
    # A heartbeat: a new version, the same labels.
    topology.node_changed(Delta(EventType.MODIFIED, "n1", None, _node("n1", rack, "2")))
    await asyncio.sleep(DEBOUNCE_SECONDS + 0.1)
    assert topology.queue.depth() == 0
    topology.node_changed(Delta(EventType.MODIFIED, "n1", None, _node("n1", {"rack": "r2"}, "3")))
    await asyncio.sleep(DEBOUNCE_SECONDS + 0.1)
    assert topology.queue.depth() == 2 and topology._labels == {"n1": {"rack": "r2"}}
    await _drain(topology)
    topology.node_changed(Delta(EventType.DELETED, "n1", None, _node("n1", {"rack": "r2"}, "4")))
    assert topology._labels == {}


async def _drain(topology: TopologyDiscovery) -> None:
    while topology.queue.depth():
        key, _ = await topology.queue._take()
        topology.queue._done(key)
