"""Job plugins against the real API server: their objects and pods are accepted, run, and go with the Job.

The Job controller's part is played here by the documented calls (``build_plugins``, ``on_job_add``,
``on_pod_create``, ``on_job_delete``), so what is checked is the plugins' output, as the API server and
KWOK see it; pods are placed with ``nodeName`` because no scheduler runs in this test.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from volcano_py.api import constants
from volcano_py.devcluster import DevCluster
from volcano_py.jobplugins import ApplyPolicy, build_plugins
from volcano_py.jobplugins.helpers import owner_reference

pytestmark = pytest.mark.integration

KINDS = {"Service": "service", "ConfigMap": "configmap", "Secret": "secret", "NetworkPolicy": "networkpolicy"}


def _task(name: str, replicas: int) -> dict[str, Any]:
    container = {"name": name, "image": "busybox", "command": ["sleep", "3600"]}
    return {"name": name, "replicas": replicas, "template": {"spec": {"containers": [container]}}}


def _create_job(
    cluster: DevCluster, namespace: str, name: str, tasks: list[dict[str, Any]], plugins: dict[str, list[str]]
) -> dict[str, Any]:
    job = {
        "apiVersion": constants.BATCH_API_VERSION,
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minAvailable": 1, "tasks": tasks, "plugins": plugins},
    }
    created: dict[str, Any] = json.loads(
        cluster.kubectl("create", "-f", "-", "-o", "json", input=json.dumps(job)).stdout
    )
    return created


def _run_plugins(cluster: DevCluster, job: dict[str, Any]) -> list[str]:
    """What the Job controller does: the plugins' objects, then every pod through on_pod_create."""
    plugins = build_plugins(job)
    for obj in plugins.on_job_add(job):
        cluster.kubectl("create", "-f", "-", input=json.dumps(obj.body))
    pods = []
    for task in job["spec"]["tasks"]:
        for index in range(task["replicas"]):
            name = f"{job['metadata']['name']}-{task['name']}-{index}"
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": job["metadata"]["namespace"],
                    "labels": {
                        constants.JOB_NAME_KEY: job["metadata"]["name"],
                        constants.JOB_NAMESPACE_KEY: job["metadata"]["namespace"],
                        constants.TASK_SPEC_KEY: task["name"],
                    },
                    "annotations": {
                        constants.TASK_SPEC_KEY: task["name"],
                        constants.TASK_INDEX_KEY: str(index),
                    },
                    "ownerReferences": [owner_reference(job)],
                },
                "spec": {**json.loads(json.dumps(task["template"]["spec"])), "nodeName": f"node-{index % 8}"},
            }
            plugins.on_pod_create(job, pod, task["name"], index)
            cluster.kubectl("create", "-f", "-", input=json.dumps(pod))
            pods.append(name)
    return pods


def _get(cluster: DevCluster, namespace: str, kind: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        cluster.kubectl("get", kind, name, "-n", namespace, "-o", "json").stdout
    )
    return found


def _env(pod: dict[str, Any]) -> dict[str, Any]:
    container = pod["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def _wait_running(cluster: DevCluster, namespace: str, pods: list[str]) -> None:
    for name in pods:
        cluster.wait_for(
            f"pod {name} Running",
            lambda name=name: (
                _get(cluster, namespace, "pod", name).get("status", {}).get("phase") == "Running"
            ),
            60,
        )


def test_mpi_job_objects_and_pods(cluster: DevCluster, namespace: str) -> None:
    job = _create_job(
        cluster,
        namespace,
        "mpi",
        [_task("master", 1), _task("worker", 2)],
        {"mpi": [], "svc": [], "ssh": [], "env": []},
    )
    pods = _run_plugins(cluster, job)
    _wait_running(cluster, namespace, pods)

    service = _get(cluster, namespace, "service", "mpi")
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == {
        constants.JOB_NAME_KEY: "mpi",
        constants.JOB_NAMESPACE_KEY: namespace,
    }
    hosts = _get(cluster, namespace, "configmap", "mpi-svc")["data"]
    assert hosts["VC_WORKER_HOSTS"] == "mpi-worker-0.mpi,mpi-worker-1.mpi"
    assert hosts["worker.host"] == "mpi-worker-0.mpi\nmpi-worker-1.mpi"
    netpol = _get(cluster, namespace, "networkpolicy", "mpi")
    assert netpol["spec"]["policyTypes"] == ["Ingress"]
    secret = _get(cluster, namespace, "secret", "mpi-ssh")
    keys = {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}
    assert keys["authorized_keys"] == keys["id_rsa.pub"]
    assert keys["id_rsa"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert "Host mpi-worker-1\n  HostName mpi-worker-1.mpi\n  Port 22\n" in keys["config"]

    master = _get(cluster, namespace, "pod", "mpi-master-0")
    assert master["spec"]["hostname"] == "mpi-master-0"
    assert master["spec"]["subdomain"] == "mpi"
    env = _env(master)
    assert env["MPI_HOST"] == "mpi-worker-0.mpi,mpi-worker-1.mpi"
    assert env["VC_TASK_INDEX"] == "0"
    assert env["VC_WORKER_NUM"] == {"configMapKeyRef": {"name": "mpi-svc", "key": "VC_WORKER_NUM"}}
    volumes = {volume["name"]: volume for volume in master["spec"]["volumes"]}
    assert volumes["mpi-ssh"]["secret"]["defaultMode"] == 0o600
    assert volumes["mpi-svc"]["configMap"]["name"] == "mpi-svc"
    mounts = {m["name"]: m for m in master["spec"]["containers"][0]["volumeMounts"]}
    assert mounts["mpi-ssh"]["mountPath"] == "/root/.ssh"
    assert mounts["mpi-svc"]["mountPath"] == "/etc/volcano"
    assert {"name": "mpijob-port", "containerPort": 22, "protocol": "TCP"} in master["spec"]["containers"][0][
        "ports"
    ]


def test_pytorch_and_tensorflow_env_on_real_pods(cluster: DevCluster, namespace: str) -> None:
    pt = _create_job(
        cluster, namespace, "pt", [_task("master", 1), _task("worker", 2)], {"pytorch": [], "svc": []}
    )
    tf = _create_job(
        cluster, namespace, "tf", [_task("ps", 1), _task("worker", 2)], {"tensorflow": [], "svc": []}
    )
    pods = _run_plugins(cluster, pt) + _run_plugins(cluster, tf)
    _wait_running(cluster, namespace, pods)
    worker = _env(_get(cluster, namespace, "pod", "pt-worker-1"))
    assert (worker["MASTER_ADDR"], worker["MASTER_PORT"], worker["WORLD_SIZE"], worker["RANK"]) == (
        "pt-master-0.pt",
        "23456",
        "3",
        "2",
    )
    tf_config = json.loads(_env(_get(cluster, namespace, "pod", "tf-worker-0"))["TF_CONFIG"])
    assert tf_config == {
        "cluster": {"ps": ["tf-ps-0.tf:2222"], "worker": ["tf-worker-0.tf:2222", "tf-worker-1.tf:2222"]},
        "task": {"type": "worker", "index": 0},
    }


def test_ray_head_service_selects_the_running_head(cluster: DevCluster, namespace: str) -> None:
    job = _create_job(
        cluster, namespace, "rc", [_task("head", 1), _task("worker", 1)], {"ray": [], "svc": []}
    )
    pods = _run_plugins(cluster, job)
    _wait_running(cluster, namespace, pods)
    service = _get(cluster, namespace, "service", "rc-head-svc")
    assert [port["port"] for port in service["spec"]["ports"]] == [6379, 8265, 10001]
    head = _get(cluster, namespace, "pod", "rc-head-0")
    assert head["spec"]["containers"][0]["command"][2].startswith("ray start --head --block")
    selected = json.loads(
        cluster.kubectl(
            "get",
            "pods",
            "-n",
            namespace,
            "-o",
            "json",
            "-l",
            ",".join(f"{k}={v}" for k, v in service["spec"]["selector"].items()),
        ).stdout
    )
    assert [pod["metadata"]["name"] for pod in selected["items"]] == ["rc-head-0"]


def test_objects_are_kept_on_restart_and_removed_with_the_job(cluster: DevCluster, namespace: str) -> None:
    job = _create_job(cluster, namespace, "gc", [_task("worker", 1)], {"svc": [], "ssh": []})
    _run_plugins(cluster, job)
    plugins = build_plugins(job)
    secret_before = _get(cluster, namespace, "secret", "gc-ssh")["data"]

    # A restart re-runs on_job_add: create-only objects already exist and must be left as they are.
    for obj in plugins.on_job_add(job):
        if obj.policy is ApplyPolicy.CREATE:
            done = cluster.kubectl("create", "-f", "-", input=json.dumps(obj.body), check=False)
            assert "AlreadyExists" in done.stderr
    assert _get(cluster, namespace, "secret", "gc-ssh")["data"] == secret_before

    refs = plugins.on_job_delete(job)
    assert sorted((ref.kind, ref.name) for ref in refs) == [
        ("ConfigMap", "gc-svc"),
        ("NetworkPolicy", "gc"),
        ("Secret", "gc-ssh"),
        ("Service", "gc"),
    ]
    cluster.kubectl("delete", "vcjob", "gc", "-n", namespace)
    for ref in refs:
        cluster.wait_for(
            f"{ref.kind} {ref.name} garbage-collected with its Job",
            lambda ref=ref: (
                cluster.kubectl("get", KINDS[ref.kind], ref.name, "-n", namespace, check=False).returncode
                != 0
            ),
            60,
        )
