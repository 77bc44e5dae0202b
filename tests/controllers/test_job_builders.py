"""Pods and PodGroups built for a Job: names, Volcano's labels and annotations, minResources."""

from __future__ import annotations

from typing import Any

import pytest
from ctl_builders import JobBuilder

from volcano_py.api import constants as c
from volcano_py.api.job_view import ResolvedJob, resolve_job
from volcano_py.controllers.job.podbuilder import build_pod, build_pvc
from volcano_py.controllers.job.podgroup import build_podgroup, min_resources, spec_patch
from volcano_py.resources import Resource, pod_request


def test_pod_carries_volcanos_labels_and_annotations() -> None:
    spec = resolve_job(JobBuilder("tf", "ml", "u-1").task("ps", 1).task("worker", 4).set(queue="q1").obj())
    pod = build_pod(spec, spec.tasks[1], 2, version=3, retry_count=1)
    meta = pod["metadata"]
    assert meta["name"] == "tf-worker-2" and meta["namespace"] == "ml"
    assert meta["annotations"] == {
        c.TASK_INDEX_KEY: "2",
        c.TASK_SPEC_KEY: "worker",
        c.KUBE_GROUP_NAME_KEY: "tf-u-1",
        c.JOB_NAME_KEY: "tf",
        c.QUEUE_NAME_KEY: "q1",
        c.JOB_VERSION_KEY: "3",
        c.POD_TEMPLATE_KEY: "tf-worker",
        c.JOB_RETRY_COUNT_KEY: "1",
    }
    assert meta["labels"] == {
        c.TASK_INDEX_KEY: "2",
        c.JOB_NAME_KEY: "tf",
        c.TASK_SPEC_KEY: "worker",
        c.JOB_NAMESPACE_KEY: "ml",
        c.QUEUE_NAME_KEY: "q1",
    }
    assert meta["ownerReferences"][0]["uid"] == "u-1" and meta["ownerReferences"][0]["controller"] is True
    assert pod["spec"]["schedulerName"] == "volcano"


def test_scheduler_and_priority_class_default_from_the_job_but_template_wins() -> None:
    spec = resolve_job(
        JobBuilder()
        .task("a", 1)
        .task("b", 1, priority_class="low")
        .set(schedulerName="other", priorityClassName="high")
        .obj()
    )
    assert build_pod(spec, spec.tasks[0], 0, version=0, retry_count=0)["spec"]["priorityClassName"] == "high"
    b = build_pod(spec, spec.tasks[1], 0, version=0, retry_count=0)["spec"]
    assert (b["priorityClassName"], b["schedulerName"]) == ("low", "other")


def test_job_volumes_become_pvc_mounts() -> None:
    body = (
        JobBuilder()
        .task("w", 1)
        .set(
            volumes=[
                {"mountPath": "/data", "volumeClaimName": "shared"},
                {"mountPath": "/scratch", "volumeClaim": {"accessModes": ["ReadWriteOnce"]}},
            ]
        )
        .obj()
    )
    spec = resolve_job(body)
    pod = build_pod(spec, spec.tasks[0], 0, version=0, retry_count=0)
    claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["spec"]["volumes"]]
    assert claims == ["shared", "job-pvc-uid-1234-1"]
    assert [m["mountPath"] for m in pod["spec"]["containers"][0]["volumeMounts"]] == ["/data", "/scratch"]
    pvc = build_pvc(spec, spec.volumes[1].claim_name, spec.volumes[1].claim_spec or {})
    assert pvc["metadata"]["ownerReferences"][0]["kind"] == "Job"


def test_pod_requests_count_init_containers_and_overhead() -> None:
    pod_spec = {
        "containers": [
            {"resources": {"requests": {"cpu": "1"}}},
            {"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
        ],
        "initContainers": [{"resources": {"requests": {"cpu": "4"}}}],
        "overhead": {"memory": "100Mi"},
    }
    assert pod_request(pod_spec) == Resource.of(cpu="4", memory="1124Mi")


def _quota_usage(*, pods: int, cpu: str, memory: str, gpu: str) -> dict[str, str]:
    """Volcano's minResources keys for pods that request cpu, memory and GPUs (no limits)."""
    counts = {"pods": str(pods), "count/pods": str(pods)}
    return {
        **counts,
        "cpu": cpu,
        "requests.cpu": cpu,
        "memory": memory,
        "requests.memory": memory,
        "nvidia.com/gpu": gpu,
        "requests.nvidia.com/gpu": gpu,
    }


def test_min_resources_carry_volcanos_quota_keys() -> None:
    # Volcano's jobp e2e "Generate PodGroup and valid minResource when creating job": two tasks of one pod
    # each, requests = limits = 1 cpu, 1000Mi, 1 GPU.
    both = {"cpu": "1000m", "memory": "1000Mi", "nvidia.com/gpu": "1"}
    template = {"containers": [{"name": "m", "image": "i", "resources": {"requests": both, "limits": both}}]}
    body = JobBuilder().obj()
    body["spec"]["tasks"] = [
        {"name": name, "replicas": 1, "minAvailable": 1, "template": {"spec": template}}
        for name in ("task-1", "task-2")
    ]
    got = build_podgroup(resolve_job(body), {})["spec"]["minResources"]
    assert got == {
        "count/pods": "2",
        "pods": "2",
        "cpu": "2",
        "requests.cpu": "2",
        "limits.cpu": "2",
        "memory": "2000Mi",
        "requests.memory": "2000Mi",
        "limits.memory": "2000Mi",
        "nvidia.com/gpu": "2",
        "requests.nvidia.com/gpu": "2",
    }


def test_min_resources_take_the_first_min_available_pods_by_priority() -> None:
    spec = resolve_job(
        JobBuilder()
        .task("low", 4, cpu="1", priority_class="low")
        .task("high", 2, cpu="8", priority_class="high")
        .set(minAvailable=3)
        .obj()
    )
    got = min_resources(spec, {"high": 1000, "low": 10})
    assert got.without_quota_only() == Resource.of(cpu="17", memory="3Gi")  # 2 high pods + 1 low pod
    assert (got["pods"], got["count/pods"]) == (3, 3)


def test_min_resources_fill_task_minimums_first() -> None:
    spec = resolve_job(
        JobBuilder().task("ps", 2, min_available=1, cpu="2").task("w", 4, min_available=2, cpu="1").obj()
    )
    assert spec.min_available == 3
    assert min_resources(spec, {}).without_quota_only() == Resource.of(cpu="4", memory="3Gi")


def test_podgroup_follows_the_job_and_patches_on_scale() -> None:
    spec = resolve_job(
        JobBuilder("j", "ns", "u")
        .task("w", 2, gpu=1)
        .set(queue="q", priorityClassName="p", networkTopology={"mode": "hard", "highestTierAllowed": 2})
        .obj()
    )
    pg = build_podgroup(spec, {})
    assert pg["metadata"]["name"] == "j-u" and pg["metadata"]["ownerReferences"][0]["name"] == "j"
    assert pg["spec"] == {
        "minMember": 2,
        "minTaskMember": {"w": 2},
        "queue": "q",
        "minResources": _quota_usage(pods=2, cpu="2", memory="2Gi", gpu="2"),
        "priorityClassName": "p",
        "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
    }
    assert spec_patch(pg, spec, {}) is None
    bigger = resolve_job(
        JobBuilder("j", "ns", "u").task("w", 4, gpu=1).set(queue="q", priorityClassName="p").obj()
    )
    patch = spec_patch(pg, bigger, {})
    assert patch == {
        "spec": {
            "minMember": 4,
            "minTaskMember": {"w": 4},
            "minResources": _quota_usage(pods=4, cpu="4", memory="4Gi", gpu="4"),
        }
    }


def _partitioned(replicas: int, size: int, minimum: int, **task: Any) -> ResolvedJob:
    body = JobBuilder("j", "ns", "u").task("w", replicas).obj()
    policy: dict[str, Any] = {
        "totalPartitions": replicas // size,
        "partitionSize": size,
        "minPartitions": minimum,
    }
    body["spec"]["tasks"][0].update(partitionPolicy=policy, **task)
    return resolve_job(body)


@pytest.mark.parametrize(
    ("spec", "min_task_member"),
    [
        pytest.param(_partitioned(6, 2, 2), 4, id="whole-partitions-when-minAvailable-is-unset"),
        pytest.param(_partitioned(6, 2, 0), 6, id="no-minimum-partitions-means-every-replica"),
    ],
)
def test_a_partitioned_task_needs_its_minimum_partitions(spec: ResolvedJob, min_task_member: int) -> None:
    assert build_podgroup(spec, {})["spec"]["minTaskMember"] == {"w": min_task_member}


def test_partitioned_pods_carry_their_partition_id() -> None:
    spec = _partitioned(6, 2, 1)
    ids = [
        build_pod(spec, spec.tasks[0], i, version=0, retry_count=0)["metadata"]["labels"] for i in range(6)
    ]
    assert [labels[c.TASK_PARTITION_ID_KEY] for labels in ids] == ["0", "0", "1", "1", "2", "2"]
    plain = resolve_job(JobBuilder().task("w", 2).obj())
    assert (
        c.TASK_PARTITION_ID_KEY
        not in build_pod(plain, plain.tasks[0], 1, version=0, retry_count=0)["metadata"]["labels"]
    )


def test_partition_policy_becomes_the_podgroups_sub_group_policy_and_follows_edits() -> None:
    body = JobBuilder("j", "ns", "u").task("ps", 1).task("w", 4).obj()
    topology = {"mode": "hard", "highestTierAllowed": 1}
    body["spec"]["tasks"][1]["partitionPolicy"] = {
        "totalPartitions": 2,
        "partitionSize": 2,
        "minPartitions": 1,
        "networkTopology": topology,
    }
    pg = build_podgroup(resolve_job(body), {})
    assert pg["spec"]["subGroupPolicy"] == [
        {
            "name": "w",
            "subGroupSize": 2,
            "minSubGroups": 1,
            "labelSelector": {"matchLabels": {c.TASK_SPEC_KEY: "w"}},
            "matchLabelKeys": [c.TASK_PARTITION_ID_KEY],
            "networkTopology": topology,
        }
    ]
    assert spec_patch(pg, resolve_job(body), {}) is None
    body["spec"]["tasks"][1]["partitionPolicy"]["minPartitions"] = 2
    patch = spec_patch(pg, resolve_job(body), {})
    assert patch is not None and patch["spec"]["subGroupPolicy"][0]["minSubGroups"] == 2
    del body["spec"]["tasks"][1]["partitionPolicy"]
    patch = spec_patch(pg, resolve_job(body), {})
    assert patch is not None and patch["spec"]["subGroupPolicy"] is None
    assert "subGroupPolicy" not in build_podgroup(resolve_job(body), {})["spec"]
