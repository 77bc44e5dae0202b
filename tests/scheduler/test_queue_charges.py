"""Both schedulers keep a Queue's capability: what the other scheduler's pods hold in a queue counts in its
allocation, under capacity (the agent scheduler's default) and proportion (the batch scheduler's)."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.queue_charge import holds_room, queue_of_pod
from volcano_py.kube.kinds import PODS
from volcano_py.kube.store import Delta, EventType
from volcano_py.resources import Resource
from volcano_py.scheduler.agent.conf import load_agent_conf
from volcano_py.scheduler.core import ClusterObjects, build_snapshot, load_conf, run_session
from volcano_py.scheduler.runtime.queue_charges import QueueCharges


def _node(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": name, "resourceVersion": "1"},
        "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
    }


def _pod(name: str, scheduler: str, cpu: str, node: str = "", queue: str = "q") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": name,
            "resourceVersion": "1",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "annotations": {"scheduling.volcano.sh/queue-name": queue},
        },
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def _queue(name: str, capability: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": 1, "parent": "root"}
    if capability:
        spec["capability"] = capability
    return {"metadata": {"name": name, "resourceVersion": "1"}, "spec": spec, "status": {"state": "Open"}}


QUEUES = [_queue("root"), _queue("default"), _queue("q", {"cpu": "4", "memory": "16Gi"})]


@pytest.mark.parametrize("held_elsewhere", [Resource(), Resource.parse({"cpu": "3", "memory": "3Gi"})])
def test_the_agent_scheduler_counts_the_batch_schedulers_pods_in_the_queue(held_elsewhere: Resource) -> None:
    objects = ClusterObjects(
        nodes=[_node("n1")],
        pods=[_pod("a1", "agent-scheduler", "1", node="n1"), _pod("a2", "agent-scheduler", "1")],
        queues=QUEUES,
        queue_charges={"q": held_elsewhere} if held_elsewhere else {},
    )
    snapshot, _ = build_snapshot(objects, ["agent-scheduler"])
    result = run_session(snapshot, load_agent_conf(None), "2026-01-01T00:00:00Z")
    bound = [b.name for b in result.binds]
    # 1 CPU of the agent's own + 1 asked: fits 4 alone, not beside the batch scheduler's 3.
    assert bound == ([] if held_elsewhere else ["a2"])


def test_the_batch_scheduler_counts_the_agent_schedulers_pods_in_the_queue() -> None:
    conf = load_conf('actions: "allocate"\ntiers:\n- plugins:\n  - name: predicates\n  - name: proportion\n')
    pods = [_pod("b1", "volcano", "2")]

    def bound(charges: dict[str, Resource]) -> list[str]:
        objects = ClusterObjects(nodes=[_node("n1")], pods=pods, queues=QUEUES, queue_charges=charges)
        snapshot, _ = build_snapshot(objects, ["volcano"])
        return [b.name for b in run_session(snapshot, conf, "2026-01-01T00:00:00Z").binds]

    assert bound({}) == ["b1"]
    assert bound({"q": Resource.parse({"cpu": "3"})}) == []


def test_charges_follow_each_pod_of_the_partner_scheduler() -> None:
    charges = QueueCharges(["agent-scheduler"], lambda _group: None)
    pending = _pod("a1", "agent-scheduler", "1")
    running = _pod("a1", "agent-scheduler", "1", node="n1")
    mine = _pod("b1", "volcano", "2", node="n1")
    charges.observe(PODS, Delta(EventType.ADDED, "ns/a1", None, pending))
    charges.observe(PODS, Delta(EventType.ADDED, "ns/b1", None, mine))
    assert charges.sums() == {}
    charges.observe(PODS, Delta(EventType.MODIFIED, "ns/a1", pending, running))
    assert charges.sums() == {"q": Resource.parse({"cpu": "1", "memory": "1Gi"})}
    done = {**running, "status": {"phase": "Succeeded"}}
    charges.observe(PODS, Delta(EventType.MODIFIED, "ns/a1", running, done))
    assert charges.sums() == {}
    charges.observe(PODS, Delta(EventType.MODIFIED, "ns/a1", done, running))
    charges.observe(PODS, Delta(EventType.DELETED, "ns/a1", running, running))
    assert charges.sums() == {}


def test_a_pods_queue_is_its_podgroups_then_its_annotation_then_default() -> None:
    pod = _pod("p", "volcano", "1", node="n1")
    assert queue_of_pod(pod, lambda _g: None) == "q"
    grouped = {**pod, "metadata": {**pod["metadata"], "annotations": {"scheduling.k8s.io/group-name": "g"}}}
    assert queue_of_pod(grouped, {"ns/g": "gq"}.get) == "gq"
    assert queue_of_pod(grouped, lambda _g: None) == "default"
    assert holds_room(pod) and not holds_room(_pod("p", "volcano", "1"))
