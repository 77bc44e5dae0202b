"""Node sharding in a session: hard mode places only on the shard's nodes (and says so when they are full),
soft mode prefers them and falls back outside, none ignores shards; a node another shard still uses is not
ours yet. And the NodeShard status the scheduler writes from the same NodeShards."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod
from tests.scheduler.harness import NOW
from volcano_py.api.shard import ShardingMode
from volcano_py.scheduler.core import ClusterObjects, Sharding, build_snapshot, load_conf, run_session
from volcano_py.scheduler.runtime.shard_status import status_update

Obj = dict[str, Any]
SHARD = "volcano"
IN_SHARD = {"n2", "n3"}
OUTSIDE = {"n0", "n1"}


def nodeshard(name: str, desired: Sequence[str], in_use: Sequence[str] = ()) -> Obj:
    return {
        "apiVersion": "shard.volcano.sh/v1alpha1",
        "kind": "NodeShard",
        "metadata": {"name": name, "resourceVersion": "7"},
        "spec": {"nodesDesired": list(desired)},
        "status": {"nodesInUse": list(in_use)},
    }


def _cluster(cpu: int, shards: Sequence[Obj]) -> ClusterObjects:
    """Four 8-CPU nodes; n2 and n3 (the shard's) are half full, so node order alone prefers n0 and n1."""
    nodes = [make_node(f"n{i}", cpu=8).obj() for i in range(4)]
    busy = [make_pod(f"busy{i}").req(cpu=4).scheduler("other").running(f"n{i}").obj() for i in (2, 3)]
    job = [make_pod("w0").req(cpu=cpu).group("job").obj()]
    return ClusterObjects(
        nodes=nodes, pods=busy + job, podgroups=[make_pg("job", 1).obj()], nodeshards=tuple(shards)
    )


@dataclass(frozen=True)
class Case:
    mode: ShardingMode
    cpu: int = 2
    shards: Sequence[Obj] = (nodeshard(SHARD, ["n2", "n3"]),)
    # Where the pod may land (empty: it stays pending).
    lands_on: set[str] = field(default_factory=set)
    # Substrings of the job's explanation when it stays pending.
    explains: Sequence[str] = ()


CASES = [
    pytest.param(Case(ShardingMode.NONE, lands_on=OUTSIDE), id="none-ignores-the-shard"),
    pytest.param(Case(ShardingMode.SOFT, lands_on=IN_SHARD), id="soft-prefers-the-shard"),
    pytest.param(Case(ShardingMode.HARD, lands_on=IN_SHARD), id="hard-places-in-the-shard"),
    pytest.param(Case(ShardingMode.SOFT, cpu=6, lands_on=OUTSIDE), id="soft-falls-back-outside-when-full"),
    pytest.param(Case(ShardingMode.NONE, cpu=6, lands_on=OUTSIDE), id="none-places-outside-when-full"),
    pytest.param(
        Case(
            ShardingMode.HARD,
            cpu=6,
            explains=("2 nodes outside the scheduler's NodeShard volcano", "2 nodes insufficient cpu"),
        ),
        id="hard-waits-and-says-the-nodes-are-outside-the-shard",
    ),
    pytest.param(
        Case(
            ShardingMode.HARD,
            shards=(nodeshard(SHARD, ["n2", "n3"]), nodeshard("agent", ["n0"], in_use=["n0", "n3"])),
            lands_on={"n2"},
        ),
        id="hard-leaves-a-node-another-shard-still-uses",
    ),
    pytest.param(
        Case(ShardingMode.SOFT, shards=(nodeshard("agent", ["n0"]),), lands_on=OUTSIDE),
        id="soft-without-its-nodeshard-uses-any-node",
    ),
    pytest.param(
        Case(
            ShardingMode.HARD,
            shards=(),
            explains=("4 nodes outside the scheduler's shard (no NodeShard volcano)",),
        ),
        id="hard-without-its-nodeshard-places-nothing",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_sharding_modes(case: Case) -> None:
    snapshot, dropped = build_snapshot(
        _cluster(case.cpu, case.shards), ["volcano"], sharding=Sharding(case.mode, SHARD)
    )
    assert dropped == []
    result = run_session(snapshot, load_conf(None), NOW)
    nodes = {bind.node for bind in result.binds}
    if case.lands_on:
        assert len(result.binds) == 1 and nodes <= case.lands_on, nodes
        return
    assert result.binds == ()
    message = result.explanations["default/job"].message
    for needle in case.explains:
        assert needle in message, message


def test_hard_mode_fills_the_shard_and_leaves_the_rest_waiting() -> None:
    nodes = [make_node(f"n{i}", cpu=4).obj() for i in range(4)]
    pods = [make_pod(f"w{i}").req(cpu=2).group("job").obj() for i in range(8)]
    objects = ClusterObjects(
        nodes=nodes, pods=pods, podgroups=[make_pg("job", 1).obj()], nodeshards=(nodeshard(SHARD, ["n1"]),)
    )
    snapshot, _ = build_snapshot(objects, ["volcano"], sharding=Sharding(ShardingMode.HARD, SHARD))
    result = run_session(snapshot, load_conf(None), NOW)
    assert [bind.node for bind in result.binds] == ["n1", "n1"]
    assert "3 nodes outside the scheduler's NodeShard volcano" in result.explanations["default/job"].message


def test_a_malformed_nodeshard_is_left_out_with_a_warning() -> None:
    bad = {
        "apiVersion": "shard.volcano.sh/v1alpha1",
        "kind": "NodeShard",
        "metadata": {"name": "x"},
        "spec": {},
    }
    _, dropped = build_snapshot(
        _cluster(2, [nodeshard(SHARD, ["n2"]), bad]), ["volcano"], sharding=Sharding(ShardingMode.HARD, SHARD)
    )
    assert [(d.obj["metadata"]["name"], d.reason) for d in dropped] == [("x", "Invalid")]


@pytest.mark.parametrize(
    ("shards", "status"),
    [
        pytest.param(
            [nodeshard(SHARD, ["n2", "n3"])],
            {"nodesInUse": ["n2", "n3"], "nodesToAdd": [], "nodesToRemove": []},
            id="all-desired-in-use",
        ),
        pytest.param(
            [nodeshard(SHARD, ["n2", "n3"], in_use=["n1", "n2"]), nodeshard("agent", ["n1"], in_use=["n3"])],
            {"nodesInUse": ["n2"], "nodesToAdd": ["n3"], "nodesToRemove": []},
            id="a-node-released-and-one-waited-for",
        ),
        pytest.param([nodeshard(SHARD, ["n2"], in_use=["n2"])], None, id="already-said"),
        pytest.param([nodeshard("agent", ["n2"])], None, id="no-shard-of-ours"),
    ],
)
def test_status_written_for_the_nodes_in_use(shards: list[Obj], status: Obj | None) -> None:
    update = status_update(Sharding(ShardingMode.HARD, SHARD), shards)
    if status is None:
        assert update is None
        return
    assert update is not None
    assert update["metadata"] == {"name": SHARD, "resourceVersion": "7"}
    assert {k: v for k, v in update["status"].items() if k != "lastUpdateTime"} == status


def test_no_status_written_without_sharding() -> None:
    assert status_update(Sharding(), [nodeshard(SHARD, ["n2"])]) is None
