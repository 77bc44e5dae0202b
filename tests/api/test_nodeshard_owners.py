"""``node_owners``: which scheduler owns which node, as ``vcctl nodeshard get`` and the dashboard show it."""

from __future__ import annotations

import pytest

from tests.scheduler.builders import make_nodeshard
from volcano_py.api.shard import NodeOwner, node_owners, read_nodeshards


@pytest.mark.parametrize(
    ("owner", "shard", "text"),
    [
        pytest.param(NodeOwner("a", "a"), "a", "a", id="settled"),
        pytest.param(NodeOwner(None, "b"), "b", "b (waiting)", id="desired-not-yet-used"),
        pytest.param(NodeOwner("a", None), "a", "a (releasing)", id="used-no-longer-desired"),
        pytest.param(NodeOwner("a", "b"), "a", "a (handing over to b)", id="changing-hands"),
    ],
)
def test_owner_is_the_shard_using_the_node_else_the_one_about_to(
    owner: NodeOwner, shard: str, text: str
) -> None:
    assert (owner.shard, owner.text) == (shard, text)


def test_node_owners_reads_use_before_desire_across_shards() -> None:
    shards, problems = read_nodeshards(
        [
            make_nodeshard("volcano", ["n1", "n2", "n3"], in_use=["n1", "n2"]),
            # n3 moves from agent to volcano: agent still uses it, so volcano waits for it.
            make_nodeshard("agent", ["n4"], in_use=["n3", "n4"]),
            make_nodeshard("batch", ["n5"]),
        ]
    )
    assert problems == []
    assert node_owners(shards) == {
        "n1": NodeOwner("volcano", "volcano"),
        "n2": NodeOwner("volcano", "volcano"),
        "n3": NodeOwner("agent", "volcano"),
        "n4": NodeOwner("agent", "agent"),
        "n5": NodeOwner(None, "batch"),
    }


def test_a_malformed_nodeshard_is_left_out_and_named() -> None:
    bad = make_nodeshard("broken", ["n1"])
    bad["spec"]["nodesDesired"] = "n1"  # a string, not a list
    shards, problems = read_nodeshards([bad, make_nodeshard("ok", ["n2"])])
    assert [s.name for s in shards] == ["ok"]
    assert len(problems) == 1 and problems[0].startswith("NodeShard broken is malformed and left out: ")
