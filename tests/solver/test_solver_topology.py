"""The HyperNode tree as a cluster admin writes it: members by name, pattern or label, tiers, errors."""

from __future__ import annotations

import pytest
from solver_builders import hypernode, member, requirement

from volcano_py.api.meta import NetworkTopologyMode
from volcano_py.api.topology import HyperNode, MemberSpec, MemberType
from volcano_py.scheduler.solver.hypernode_tree import (
    ROOT,
    NetworkTopology,
    TopologyError,
    build_tree,
    resolve_highest_tier,
)

NODES = {
    "gpu-a0": {"rack": "a"},
    "gpu-a1": {"rack": "a"},
    "gpu-b0": {"rack": "b", "zone": "z1"},
    "gpu-b1": {"rack": "b"},
    "cpu-0": {},
}


def node(**selector: object) -> MemberSpec:
    return member(MemberType.NODE, **selector)


def child(name: str) -> MemberSpec:
    return member(MemberType.HYPERNODE, exact_name=name)


def sample() -> list[HyperNode]:
    return [
        hypernode("rack-a", 1, (node(pattern=r"^gpu-a\d$"),), tier_name="rack"),
        hypernode("rack-b", 1, (node(match_labels={"rack": "b"}),), tier_name="rack"),
        hypernode("spine", 2, (child("rack-a"), child("rack-b")), tier_name="spine"),
        hypernode("edge", 1, (node(exact_name="cpu-0"), node(exact_name="not-a-node"))),
    ]


def test_members_by_regex_label_and_exact_name() -> None:
    tree = build_tree(sample(), NODES)
    assert tree.nodes("rack-a") == {"gpu-a0", "gpu-a1"}
    assert tree.nodes("rack-b") == {"gpu-b0", "gpu-b1"}
    assert tree.nodes("spine") == {"gpu-a0", "gpu-a1", "gpu-b0", "gpu-b1"}
    assert tree.nodes("edge") == {"cpu-0"}
    assert tree.nodes(ROOT) == set(NODES)


def test_tiers_ancestors_and_enclosing_domain() -> None:
    tree = build_tree(sample(), NODES)
    assert tree.root_tier == 3
    assert tree.at_tier(1) == ["edge", "rack-a", "rack-b"]
    assert tree.ancestors("gpu-b0") == ["rack-b", "spine", ROOT]
    assert tree.enclosing(["gpu-a0", "gpu-a1"]) == "rack-a"
    assert tree.enclosing(["gpu-a0", "gpu-b1"]) == "spine"
    assert tree.enclosing(["gpu-a0", "cpu-0"]) == ROOT
    assert tree.tier(ROOT) == 3


def test_label_expressions() -> None:
    spec = hypernode(
        "z1", 1, (node(match_expressions=(requirement("zone", "In", ("z1",)),)),), tier_name="rack"
    )
    assert build_tree([spec], NODES).nodes("z1") == {"gpu-b0"}
    spec = hypernode("nz", 1, (node(match_expressions=(requirement("zone", "DoesNotExist"),)),))
    assert build_tree([spec], NODES).nodes("nz") == {"gpu-a0", "gpu-a1", "gpu-b1", "cpu-0"}


def test_highest_tier_name_resolves_through_tier_names() -> None:
    tree = build_tree(sample(), NODES)
    assert resolve_highest_tier(NetworkTopology(highest_tier_name="spine"), tree) == 2
    assert resolve_highest_tier(NetworkTopology(highest_tier_allowed=1), tree) == 1
    assert resolve_highest_tier(NetworkTopology(highest_tier_name="zone"), tree) is None


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        pytest.param(
            [hypernode("r", 1, (node(exact_name="gpu-a0", pattern="gpu"),))],
            r"spec.members\[0\].selector must set exactly one of exactMatch, regexMatch or labelMatch",
            id="two-selectors",
        ),
        pytest.param(
            [hypernode("r", 1, (member(MemberType.HYPERNODE, pattern="r.*"),))],
            "a HyperNode member is named with exactMatch",
            id="hypernode-by-regex",
        ),
        pytest.param(
            [hypernode("r", 1, (node(pattern="gpu-("),))],
            "is not a valid regular expression",
            id="bad-regex",
        ),
        pytest.param(
            [
                hypernode("r1", 1, (node(exact_name="gpu-a0"),)),
                hypernode("r2", 1, (node(pattern="gpu-a"),)),
            ],
            "node gpu-a0 is a member of both HyperNode r1 and r2",
            id="node-in-two-racks",
        ),
        pytest.param(
            [hypernode("r1", 2, (node(exact_name="gpu-a0"),)), hypernode("s", 2, (child("r1"),))],
            "a member HyperNode must have a lower tier",
            id="tier-not-below-parent",
        ),
        pytest.param(
            [
                hypernode("r1", 1, (node(exact_name="gpu-a0"),)),
                hypernode("s1", 2, (child("r1"),)),
                hypernode("s2", 2, (child("r1"),)),
            ],
            "HyperNode r1 is a member of both s1 and s2",
            id="two-parents",
        ),
    ],
)
def test_invalid_hypernodes_are_rejected_with_the_field(specs: list[HyperNode], message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        build_tree(specs, NODES)


def test_a_node_listed_again_by_an_ancestor_is_not_a_conflict() -> None:
    specs = [
        hypernode("r", 1, (node(exact_name="gpu-a0"),)),
        hypernode("s", 2, (child("r"), node(exact_name="gpu-a0"))),
    ]
    assert build_tree(specs, NODES).ancestors("gpu-a0") == ["r", "s", ROOT]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param({"mode": "strict"}, "networkTopology.mode is 'strict'; use 'hard' or 'soft'", id="mode"),
        pytest.param({"mode": "hard"}, "mode 'hard' needs a tier boundary", id="hard-unbounded"),
        pytest.param({"highestTierAllowed": 1, "highestTierName": "rack"}, "not both", id="both-bounds"),
        pytest.param({"highestTierAllowed": "1"}, "must be an integer", id="tier-type"),
    ],
)
def test_network_topology_spec_errors(spec: dict[str, object], message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        NetworkTopology.parse(spec)


def test_network_topology_parse_defaults_to_hard() -> None:
    parsed = NetworkTopology.parse({"highestTierAllowed": 2})
    assert parsed == NetworkTopology(NetworkTopologyMode.HARD, highest_tier_allowed=2)
    assert NetworkTopology.parse({"mode": "soft"}).mode is NetworkTopologyMode.SOFT


def test_hypernode_objects_from_the_api_parse_into_a_tree() -> None:
    from volcano_py.scheduler.solver.hypernode_tree import hypernodes_from_objects

    objects = [
        {
            "metadata": {"name": "rack-b"},
            "spec": {
                "tier": 1,
                "tierName": "rack",
                "members": [
                    {
                        "type": "Node",
                        "selector": {
                            "labelMatch": {
                                "matchExpressions": [{"key": "rack", "operator": "In", "values": ["b"]}]
                            }
                        },
                    }
                ],
            },
        },
        {
            "metadata": {"name": "spine"},
            "spec": {
                "tier": "2",
                "members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": "rack-b"}}}],
            },
        },
    ]
    tree = build_tree(hypernodes_from_objects(objects), NODES)
    assert tree.ancestors("gpu-b1") == ["rack-b", "spine", ROOT]
    assert tree.tier_of_name("rack") == 1


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            {"metadata": {"name": "x"}, "spec": {"tier": "one"}}, "HyperNode x: spec.tier is 'one'", id="tier"
        ),
        pytest.param(
            {"metadata": {"name": "x"}, "spec": {"tier": 1, "members": [{"type": "Rack"}]}},
            r"HyperNode x: spec.members\[0\].type is 'Rack'; use Node or HyperNode",
            id="member-type",
        ),
        pytest.param({"metadata": {"name": "x"}}, "HyperNode x: spec is missing", id="no-spec"),
    ],
)
def test_hypernode_object_errors_name_the_field(obj: dict[str, object], message: str) -> None:
    from volcano_py.scheduler.solver.hypernode_tree import hypernodes_from_objects

    with pytest.raises(TopologyError, match=message):
        hypernodes_from_objects([obj])
