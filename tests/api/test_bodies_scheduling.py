"""The typed reads of PodGroup, Queue, HyperNode, NodeShard, Numatopology, Pod and Node bodies: Volcano's
defaults for what is unset, a named field for what is malformed."""

from __future__ import annotations

import pytest

from volcano_py.api.bodies import hypernode as hn
from volcano_py.api.bodies import node, nodeshard, numatopology, pod, podgroup, queue
from volcano_py.api.bodies.conditions import condition_fields, condition_is_true, none_false
from volcano_py.api.nodeinfo import PolicyName
from volcano_py.api.scheduling import DequeueStrategy
from volcano_py.api.shard import NodeShardStatus
from volcano_py.api.topology import MemberType


def test_podgroup_defaults_for_an_empty_body() -> None:
    pg: dict[str, object] = {"metadata": {"name": "pg"}}
    assert podgroup.podgroup_queue(pg) == "default"
    assert podgroup.podgroup_min_member(pg) == 0
    assert podgroup.podgroup_min_task_member(pg) == {}
    assert podgroup.podgroup_min_resources(pg) is None
    assert podgroup.podgroup_phase(pg) == ""
    assert podgroup.podgroup_shown_phase(pg) == "Pending"
    assert podgroup.podgroup_shown_phase(None) == "Pending"
    assert podgroup.podgroup_said(pg) == ("Pending", 0, 0, 0)
    assert podgroup.podgroup_conditions(pg) == ()
    assert podgroup.podgroup_written_status(pg) is None


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        pytest.param({"minMember": -1}, "spec.minMember", id="negative"),
        pytest.param({"minMember": "3"}, "spec.minMember", id="string"),
        pytest.param({"minTaskMember": {"w": 1.5}}, "spec.minTaskMember['w']", id="task"),
    ],
)
def test_podgroup_counts_that_are_not_counts_name_the_field(spec: dict[str, object], field: str) -> None:
    pg = {"spec": spec}
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        podgroup.podgroup_min_member(pg)
        podgroup.podgroup_min_task_member(pg)


def test_podgroup_status_reads() -> None:
    pg = {
        "spec": {"queue": "q", "minMember": 2, "priorityClassName": "high"},
        "status": {"phase": "Running", "running": 2, "failed": 1, "conditions": [{"type": "Scheduled"}]},
    }
    assert podgroup.podgroup_queue(pg) == "q"
    assert podgroup.podgroup_priority_class(pg) == "high"
    assert podgroup.podgroup_said(pg) == ("Running", 2, 0, 1)
    assert podgroup.podgroup_shown_phase(pg) == "Running"
    assert podgroup.with_podgroup_status(pg, {"phase": "Inqueue"})["status"] == {"phase": "Inqueue"}


def test_conditions() -> None:
    cond = {"type": "Ready", "status": "True", "reason": "R"}
    assert condition_fields(cond) == ("Ready", "True", "R", "", "")
    assert condition_is_true(cond, "Ready") and not condition_is_true(cond, "Scheduled")
    assert none_false([], "Ready") and not none_false([{"type": "Ready", "status": "False"}], "Ready")


def test_queue_reads_and_defaults() -> None:
    q = {
        "metadata": {"name": "q"},
        "spec": {"weight": 3, "reclaimable": False, "guarantee": {"resource": {"cpu": "1"}}},
    }
    assert queue.queue_weight(q) == 3
    assert not queue.queue_reclaimable(q)
    assert queue.queue_guarantee(q) == {"cpu": "1"}
    assert queue.queue_capability(q) is None
    assert queue.queue_dequeue_strategy(q) is DequeueStrategy.TRAVERSE
    assert queue.queue_state(q) == "Open"
    assert queue.queue_parent(q) == "root"
    assert queue.queue_status_says(
        {"status": {"state": "Open", "running": 1}}, {"state": "Open", "running": 1}
    )
    assert not queue.queue_status_says(q, {"state": "Open"})
    with pytest.raises(ValueError, match=r"spec\.weight"):
        queue.queue_weight({"spec": {"weight": 0}})
    with pytest.raises(ValueError, match=r"spec\.dequeueStrategy"):
        queue.queue_dequeue_strategy({"spec": {"dequeueStrategy": "lifo"}})


def test_hypernode_bodies() -> None:
    body = hn.hypernode_body("h", {"a": "b"}, 1, "rack", hn.exact_members(MemberType.NODE, ["n1", "n2"]))
    assert [m["selector"]["exactMatch"]["name"] for m in hn.hypernode_members(body)] == ["n1", "n2"]
    assert hn.hypernode_node_count(body) is None
    assert hn.hypernode_for_model({"spec": {"tier": "2"}})["spec"]["tier"] == 2
    assert hn.hypernode_spec_problem({}) == "spec is missing"
    have = {"metadata": {"name": "h", "resourceVersion": "7"}, "spec": {"tier": 2}}
    updated = hn.with_hypernode_spec(have, {"x": "y"}, body)
    assert updated["metadata"] == {"name": "h", "resourceVersion": "7", "labels": {"x": "y"}}
    assert hn.same_hypernode_spec(updated, body)


def test_nodeshard_reads_and_status() -> None:
    shard = {"spec": {"nodesDesired": ["a"]}, "status": {"nodesInUse": ["b"]}}
    assert nodeshard.nodeshard_nodes_in_use(shard) == ["b"]
    assert nodeshard.nodeshard_nodes_to_add(shard) == ()
    written = nodeshard.with_nodeshard_status(shard, NodeShardStatus(nodes_in_use=["a"]), "t")
    assert nodeshard.nodeshard_nodes_in_use(written) == ["a"] and written["status"]["lastUpdateTime"] == "t"


def test_numatopology_reads() -> None:
    topo = {"spec": {"numares": {"cpu": {"allocatable": "0-3"}}, "policies": {"CPUManagerPolicy": "static"}}}
    assert numatopology.numatopology_allocatable(topo, "cpu") == "0-3"
    assert numatopology.numatopology_allocatable(topo, "memory") is None
    assert numatopology.numatopology_policy(topo, PolicyName.CPU_MANAGER) == "static"
    assert numatopology.numatopology_policy(topo, PolicyName.TOPOLOGY_MANAGER) == ""
    assert numatopology.numatopology_cpu_detail(topo) == {}


def test_pod_and_node_reads() -> None:
    p = {
        "spec": {"nodeName": "n", "schedulingGates": [{"name": "g"}]},
        "status": {"conditions": [{"type": "PodScheduled", "status": "True"}], "phase": "Running"},
    }
    assert pod.pod_node_name(p) == "n"
    assert condition_is_true(pod.pod_conditions(p)[0], "PodScheduled")
    assert pod.pod_phase(p) is pod.PodPhase.RUNNING
    assert pod.pod_node_name(pod.with_node_name({}, "m")) == "m"
    assert pod.pod_scheduler_name({}) == ""
    n = {"status": {"capacity": {"cpu": "4"}}, "spec": {"unschedulable": True}}
    assert node.node_allocatable(n) == {"cpu": "4"} and node.node_ready(n) and node.node_unschedulable(n)
