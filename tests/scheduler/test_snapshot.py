"""Snapshot inputs from Kubernetes JSON: task status, requests, grouping, node accounting, bad input."""

from __future__ import annotations

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod, make_priority_class
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.node import NodeInfo, QueueInfo
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.framework.status import TaskStatus
from volcano_py.scheduler.framework.task import TaskInfo


@pytest.mark.parametrize(
    ("pod", "status"),
    [
        pytest.param(make_pod("p"), TaskStatus.PENDING, id="pending"),
        pytest.param(make_pod("p").node("n"), TaskStatus.BOUND, id="bound"),
        pytest.param(make_pod("p").running("n"), TaskStatus.RUNNING, id="running"),
        pytest.param(make_pod("p").running("n").terminating(), TaskStatus.RELEASING, id="terminating"),
        pytest.param(make_pod("p").node("n").phase("Succeeded"), TaskStatus.SUCCEEDED, id="succeeded"),
        pytest.param(make_pod("p").node("n").phase("Failed"), TaskStatus.FAILED, id="failed"),
        pytest.param(make_pod("p").phase("Unknown"), TaskStatus.UNKNOWN, id="unknown"),
    ],
)
def test_task_status_follows_volcano(pod: object, status: TaskStatus) -> None:
    assert TaskInfo.from_pod(pod.obj()).status is status  # type: ignore[attr-defined]


def test_request_sums_containers_and_takes_largest_init_container() -> None:
    pod = make_pod("p").req(cpu="500m", memory="1Gi").obj()
    pod["spec"]["containers"].append({"name": "side", "resources": {"requests": {"cpu": "250m"}}})
    pod["spec"]["initContainers"] = [
        {"name": "init", "resources": {"requests": {"cpu": "2", "memory": "100Mi"}}}
    ]
    assert TaskInfo.from_pod(pod).resreq == Resource.of(cpu=2, memory="1Gi")


def test_bad_quantity_names_the_pod_and_field() -> None:
    pod = make_pod("p").req(cpu="lots").obj()
    with pytest.raises(ValueError, match=r"pod default/p: spec.containers\[\].resources: resource 'cpu'"):
        TaskInfo.from_pod(pod)


def test_priority_from_class_when_pod_has_none() -> None:
    pod = make_pod("p").obj()
    pod["spec"]["priorityClassName"] = "high"
    snapshot = Snapshot.build(pods=[pod], priority_classes=[make_priority_class("high", 500)])
    assert next(iter(snapshot.jobs.values())).tasks["uid-default-p"].priority == 500


def test_pods_group_by_annotation_and_other_schedulers_count_on_nodes() -> None:
    snapshot = Snapshot.build(
        nodes=[make_node("n", cpu=8).obj()],
        pods=[
            make_pod("a").req(cpu=1).group("pg").obj(),
            make_pod("b").req(cpu=1).group("pg").running("n").obj(),
            make_pod("x").req(cpu=3).scheduler("default-scheduler").running("n").obj(),
            make_pod("gone").req(cpu=2).scheduler("default-scheduler").running("n").terminating().obj(),
            make_pod("orphan").group("nope").obj(),
        ],
        podgroups=[make_pg("pg", 2).obj()],
    )
    job = snapshot.jobs["default/pg"]
    assert sorted(t.name for t in job.tasks.values()) == ["a", "b"]
    node = snapshot.nodes[0]
    assert node.used == Resource.of(cpu=6, pods=3)
    assert node.releasing == Resource.of(cpu=2, pods=1)
    assert node.future_idle.amount("cpu") == 4000
    assert [o.reason for o in snapshot.orphans] == ["PodGroup default/nope not found"]


def test_node_without_pods_allocatable_gets_kubelet_default() -> None:
    node = make_node("n").obj()
    del node["status"]["allocatable"]["pods"]
    assert NodeInfo.from_node(node).allocatable.amount("pods") == 110


def test_queue_with_bad_weight_is_refused() -> None:
    with pytest.raises(ValueError, match=r"queue q: spec\.weight must be an integer >= 1"):
        QueueInfo.from_queue({"metadata": {"name": "q"}, "spec": {"weight": 0}})


def test_podgroup_with_bad_phase_is_refused() -> None:
    with pytest.raises(ValueError, match=r"PodGroup default/pg: PodGroup status\.phase 'Queued'"):
        Snapshot.build(podgroups=[make_pg("pg", phase="Queued").obj()])


def test_a_snapshot_serves_one_session() -> None:
    from volcano_py.scheduler.core import load_conf, run_session

    snapshot = Snapshot.build(nodes=[make_node("n").obj()])
    run_session(snapshot, load_conf(), "2026-01-01T00:00:00Z")
    with pytest.raises(ValueError, match="build a new one per session"):
        run_session(snapshot, load_conf(), "2026-01-01T00:00:01Z")


@pytest.mark.parametrize(
    "value", ["4", "500m", "1500m", "512Mi", "4Gi", "1Ki", "3Ti", "1.5", "2e3", "100M", "1m", "0", "7k"]
)
@pytest.mark.parametrize("name", ["cpu", "memory", "nvidia.com/gpu", "pods"])
def test_fast_quantity_paths_agree_with_the_exact_parser(name: str, value: str) -> None:
    from volcano_py.resources import canonical_exact, to_canonical

    assert to_canonical(name, value) == canonical_exact(name, value)


def test_a_limit_without_a_request_counts_per_resource() -> None:
    # A GPU given only as a limit is still requested, even when the container requests cpu explicitly.
    pod = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "4", "nvidia.com/gpu": 1}},
                }
            ]
        },
    }
    assert TaskInfo.from_pod(pod).resreq == Resource.of(cpu="2", gpu=1)


@pytest.mark.parametrize(
    ("state", "reported"),
    [("pending", True), ("running", False), ("bound", False), ("Succeeded", False), ("Failed", False)],
)
def test_only_a_pending_pod_of_a_missing_podgroup_is_reported(state: str, reported: bool) -> None:
    # A completed job's PodGroup is deleted with the job while its finished pods stay: those pods must not get
    # a FailedScheduling event each cycle (the events grew with the cluster's history).
    pod = make_pod("p").req(cpu=1).group("gone")
    if state == "running":
        pod = pod.running("n")
    elif state == "bound":
        pod = pod.running("n").phase("Pending")
    elif state != "pending":
        pod = pod.running("n").phase(state)
    snapshot = Snapshot.build(nodes=[make_node("n", cpu=8).obj()], pods=[pod.obj()])
    assert [o.reason for o in snapshot.orphans] == (["PodGroup default/gone not found"] if reported else [])
    assert not snapshot.jobs
