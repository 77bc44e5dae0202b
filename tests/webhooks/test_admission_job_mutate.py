"""Job mutation: Volcano's defaults, applied as JSON Patch on create."""

from __future__ import annotations

import copy

from admission_builders import job, task

from volcano_py.webhooks.job import mutate_job
from volcano_py.webhooks.patch import PatchOp, apply_patch


def _mutated(body: dict) -> dict:
    return apply_patch(copy.deepcopy(body), mutate_job(body))


def test_bare_job_gets_queue_scheduler_retries_task_names_and_min_available() -> None:
    body = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "bare", "namespace": "ns"},
        "spec": {"tasks": [task(None, 2), task(None, 3)]},
    }
    spec = _mutated(body)["spec"]
    assert spec["queue"] == "default"
    assert spec["schedulerName"] == "volcano"
    assert spec["maxRetry"] == 3
    assert [t["name"] for t in spec["tasks"]] == ["default0", "default1"]
    assert [t["minAvailable"] for t in spec["tasks"]] == [2, 3]
    assert [t["maxRetry"] for t in spec["tasks"]] == [3, 3]
    assert spec["minAvailable"] == 5


def test_set_fields_are_kept() -> None:
    body = job(
        queue="research",
        schedulerName="other",
        maxRetry=7,
        minAvailable=1,
        tasks=[task("w", 4, minAvailable=2, maxRetry=1)],
    )
    assert mutate_job(body) == []


def test_job_min_available_sums_task_min_available() -> None:
    body = job(tasks=[task("ps", 1), task("worker", 4, minAvailable=2)])
    del body["spec"]["minAvailable"]
    assert _mutated(body)["spec"]["minAvailable"] == 3


def test_partitioned_task_needs_its_minimum_partitions() -> None:
    body = job(
        tasks=[task("w", 8, partitionPolicy={"totalPartitions": 4, "partitionSize": 2, "minPartitions": 3})]
    )
    del body["spec"]["minAvailable"]
    spec = _mutated(body)["spec"]
    assert spec["tasks"][0]["minAvailable"] == 6
    assert spec["minAvailable"] == 6


def test_host_network_task_resolves_cluster_dns() -> None:
    body = job(tasks=[task("w", 1, minAvailable=1, maxRetry=3)])
    body["spec"]["tasks"][0]["template"]["spec"]["hostNetwork"] = True
    assert mutate_job(body) == [
        PatchOp(
            "replace",
            "/spec/tasks",
            [
                {
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "containers": body["spec"]["tasks"][0]["template"]["spec"]["containers"],
                            "hostNetwork": True,
                            "dnsPolicy": "ClusterFirstWithHostNet",
                        }
                    },
                    "name": "w",
                    "minAvailable": 1,
                    "maxRetry": 3,
                }
            ],
        )
    ]


def test_frameworks_get_svc_and_mpi_gets_ssh() -> None:
    body = job(
        tasks=[task("master", 1, minAvailable=1, maxRetry=3), task("worker", 2, minAvailable=2, maxRetry=3)]
    )
    body["spec"]["plugins"] = {"mpi": ["--port=2222"]}
    assert mutate_job(body) == [
        PatchOp("replace", "/spec/plugins", {"mpi": ["--port=2222"], "svc": [], "ssh": []})
    ]
    body["spec"]["plugins"] = {"pytorch": [], "svc": ["--disable-network-policy"]}
    assert mutate_job(body) == []


def test_patch_ops_serialise_as_rfc6902() -> None:
    body = job(tasks=[task("w", 2, minAvailable=2, maxRetry=3)])
    del body["spec"]["queue"]
    assert [op.to_dict() for op in mutate_job(body)] == [
        {"op": "add", "path": "/spec/queue", "value": "default"}
    ]


def test_malformed_fields_are_left_for_validation_to_name() -> None:
    body = job(tasks=[task("w", "two"), "not-a-task"])  # type: ignore[list-item]
    del body["spec"]["minAvailable"]
    ops = mutate_job(body)
    assert [op.path for op in ops] == ["/spec/tasks"]
    assert ops[0].value[0] == {**task("w", "two"), "maxRetry": 3}  # type: ignore[arg-type]
    assert ops[0].value[1] == "not-a-task"
