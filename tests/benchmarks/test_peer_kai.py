"""bench_scale's ``kai`` system, its pure parts: each shape's bodies in KAI's own objects, the queues sized
to the cluster, the scheduler's config as KAI's operator writes it, the readiness read from its metrics."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.benchlib import peer_kai as kai
from benchmarks.benchlib.objects import api_pod
from benchmarks.scale.backlog import backlog_bodies

JSON = dict[str, Any]


def pods_of(bodies: list[tuple[str, JSON]]) -> list[JSON]:
    return [body for path, body in bodies if path.endswith("/pods")]


def groups_of(bodies: list[tuple[str, JSON]]) -> list[JSON]:
    return [body for path, body in bodies if path.endswith("/podgroups")]


def test_one_pod_jobs_are_bare_pods_for_the_pod_grouper() -> None:
    bodies = kai.translate(backlog_bodies("ns", 5, 1, False))
    assert groups_of(bodies) == []
    members = pods_of(bodies)
    assert [m["metadata"]["name"] for m in members] == [f"job{j}-0" for j in range(5)]
    for member in members:
        assert member["spec"]["schedulerName"] == "kai-scheduler"
        assert member["metadata"]["labels"] == {"kai.scheduler/queue": kai.QUEUE}
        assert "annotations" not in member["metadata"]  # no pod-group-name: the pod-grouper makes its group


def test_gangs_are_kai_podgroups_created_before_their_pods() -> None:
    bodies = kai.translate(backlog_bodies("ns", 45, 20, False))  # 45 pods: two whole gangs of 20
    paths = [path for path, _ in bodies]
    assert paths[:2] == ["/apis/scheduling.run.ai/v2alpha2/namespaces/ns/podgroups"] * 2
    assert set(paths[2:]) == {"/api/v1/namespaces/ns/pods"}
    assert [g["spec"] for g in groups_of(bodies)] == [
        {"minMember": 20, "queue": kai.QUEUE, "priorityClassName": "train"}
    ] * 2
    members = pods_of(bodies)
    assert len(members) == 40
    assert {m["metadata"]["annotations"]["pod-group-name"] for m in members} == {"job0", "job1"}


def test_gang_singles_get_a_podgroup_of_one() -> None:
    bodies = kai.translate(backlog_bodies("ns", 3, 1, True))
    assert [g["spec"]["minMember"] for g in groups_of(bodies)] == [1, 1, 1]
    assert [m["metadata"]["annotations"] for m in pods_of(bodies)] == [
        {"pod-group-name": f"job{j}"} for j in range(3)
    ]


def test_a_kai_pod_does_the_same_work_as_the_benchmarks_pod() -> None:
    base = api_pod("job0-0").group("job0").obj()
    ours = kai.pod("job0-0", "job0")
    assert ours["spec"]["containers"] == base["spec"]["containers"]
    assert ours["metadata"]["annotations"] == {"pod-group-name": "job0"}  # KAI's annotation, not Volcano's


def test_queues_are_a_parent_and_a_child_guaranteed_the_whole_cluster() -> None:
    node = {"status": {"allocatable": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}}}
    quota = kai.cluster_quota([node, node, {"status": {}}])
    assert quota == {"cpu": 64_000, "memory": 2 * 256 * 1024**3 // 1_000_000, "gpu": 16}
    parent, child = kai.queues(quota)
    assert parent["metadata"]["name"] == kai.PARENT_QUEUE and "parentQueue" not in parent["spec"]
    assert child["spec"]["parentQueue"] == kai.PARENT_QUEUE and child["metadata"]["name"] == kai.QUEUE
    assert child["spec"]["resources"]["cpu"] == {"quota": 64_000, "limit": -1, "overQuotaWeight": 1}
    assert {o["kind"] for o in kai.cluster_objects(quota)} == {"Namespace", "PriorityClass", "Queue"}


def test_scheduler_conf_is_the_operators_default_shard() -> None:
    conf = kai.scheduler_conf()
    assert conf["actions"] == "allocate, consolidation, reclaim, preempt, stalegangeviction"
    plugins = conf["tiers"][0]["plugins"]
    names = [p["name"] for p in plugins]
    assert names[:3] == ["predicates", "proportion", "priority"]
    assert names[-3:] == ["gpupack", "nodeplacement", "gpusharingorder"]
    assert "gpuspread" not in names  # off under binpack
    assert plugins[names.index("nodeplacement")]["arguments"] == {"cpu": "binpack", "gpu": "binpack"}


@pytest.mark.parametrize(
    ("metrics", "ready"),
    [
        pytest.param("kai_e2e_scheduling_latency_milliseconds 0\n", False, id="no-cycle-yet"),
        pytest.param("kai_e2e_scheduling_latency_milliseconds 12.5\n", True, id="a-cycle"),
        pytest.param("", False, id="nothing"),
    ],
)
def test_scheduler_ready_after_its_first_cycle(metrics: str, ready: bool) -> None:
    assert kai.ran_a_cycle(metrics) is ready


def test_binder_ready_once_its_bindrequest_workers_run() -> None:
    workers = 'controller_runtime_active_workers{controller="%s"} 0\n'
    assert kai.binds(workers % "bindrequest")
    assert not kai.binds(workers % "pod")
