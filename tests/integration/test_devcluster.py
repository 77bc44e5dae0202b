"""The local control plane does what the rest of the project relies on: Ready GPU nodes, pods that run, finish
and fail on cue, batch Jobs, ReplicationControllers, pods of the default scheduler placed (and Volcano's left
alone), namespace deletion, CRDs, and `dev up` / `dev down` leaving nothing behind."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.devcluster import (
    COMPLETE_AFTER,
    EXIT_CODE,
    FAIL_AFTER,
    GPU_RESOURCE,
    RACK_LABEL,
    SPINE_LABEL,
    DevCluster,
    audit,
)
from volcano_py.devcluster import cluster as cluster_module
from volcano_py.devcluster.cluster import COMPONENTS
from volcano_py.devcluster.ports import free_ports
from volcano_py.devcluster.processes import ClusterState, group_members

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CLI = (sys.executable, "-m", "volcano_py.cli.main")


def _pod(name: str, *, node: str | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        # A scheduler nobody runs: the pod stays Pending until the test binds it.
        "schedulerName": "nobody",
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox", "resources": {"limits": {GPU_RESOURCE: "1"}}}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": spec,
    }


def _create(cluster: DevCluster, namespace: str, manifest: dict[str, Any]) -> None:
    cluster.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(manifest))


def _bind(cluster: DevCluster, namespace: str, pod: str, node: str) -> None:
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod, "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    cluster.post_json(f"/api/v1/namespaces/{namespace}/pods/{pod}/binding", binding)


def _get_pod(cluster: DevCluster, namespace: str, pod: str) -> dict[str, Any]:
    found: dict[str, Any] = cluster.get_json(f"/api/v1/namespaces/{namespace}/pods/{pod}")
    return found


def _wait_phase(
    cluster: DevCluster, namespace: str, pod: str, phase: str, timeout: float = 30
) -> dict[str, Any]:
    cluster.wait_for(
        f"pod {pod} {phase}",
        lambda: _get_pod(cluster, namespace, pod)["status"].get("phase") == phase,
        timeout,
    )
    return _get_pod(cluster, namespace, pod)


def _terminated(pod: dict[str, Any]) -> dict[str, Any]:
    state: dict[str, Any] = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    return state


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def test_session_nodes_are_ready_with_gpus_and_topology(cluster: DevCluster) -> None:
    nodes = json.loads(cluster.kubectl("get", "nodes", "-l", "type=kwok", "-o", "json").stdout)["items"]
    ours = {n["metadata"]["name"]: n for n in nodes if n["metadata"]["name"].startswith("node-")}
    assert {f"node-{i}" for i in range(8)} <= set(ours)
    for node in ours.values():
        assert node["status"]["allocatable"][GPU_RESOURCE] == "8"
        assert node["status"]["allocatable"]["cpu"] == "32"
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready and ready[0]["status"] == "True"
        # KCM's node-lifecycle controller removed the not-ready taint that admission put on at create.
        assert not [t for t in node["spec"].get("taints", []) if t["key"].startswith("node.kubernetes.io/")]
    assert ours["node-0"]["metadata"]["labels"][RACK_LABEL] == "rack-0"
    assert ours["node-4"]["metadata"]["labels"][RACK_LABEL] == "rack-1"
    assert ours["node-4"]["metadata"]["labels"][SPINE_LABEL] == "spine-0"


def test_pod_bound_through_the_binding_subresource_runs(cluster: DevCluster, namespace: str) -> None:
    _create(cluster, namespace, _pod("bound"))
    assert _get_pod(cluster, namespace, "bound")["status"]["phase"] == "Pending"
    _bind(cluster, namespace, "bound", "node-1")
    pod = _wait_phase(cluster, namespace, "bound", "Running")
    assert pod["spec"]["nodeName"] == "node-1"
    assert pod["status"]["containerStatuses"][0]["ready"] is True
    assert pod["status"]["podIP"].startswith("10.244.")
    assert pod["status"]["hostIP"] == "10.192.0.2"  # node-1's own InternalIP


def test_the_audit_log_names_who_deleted_a_pod(cluster: DevCluster, namespace: str) -> None:
    _create(cluster, namespace, _pod("doomed"))
    cluster.kubectl("delete", "pod", "-n", namespace, "doomed", "--wait=false")
    deletions = audit.pod_deletions(audit.read_from(cluster.audit_log, 0), namespace)
    assert len(deletions) == 1
    assert " delete pod doomed by volcano-py-admin (kubectl" in deletions[0]
    assert deletions[0].endswith(": 200")


def test_kwok_removes_a_deleted_running_pod_with_one_delete(cluster: DevCluster, namespace: str) -> None:
    """kwok deletes by name, without a uid: a second delete of its own could land on a successor pod that a
    controller made under the same name (read as an eviction of it)."""
    _create(cluster, namespace, _pod("ended", node="node-2"))
    _wait_phase(cluster, namespace, "ended", "Running")
    cluster.kubectl("delete", "pod", "-n", namespace, "ended", "--wait=true", "--timeout=30s")
    time.sleep(2)  # what a second delete would take to come
    deletions = audit.pod_deletions(audit.read_from(cluster.audit_log, 0), namespace)
    by_kwok = [line for line in deletions if "delete pod ended by" in line and "(kwok" in line]
    assert len(by_kwok) == 1, "\n".join(deletions)


def test_each_component_restarts_in_place_and_the_cluster_keeps_its_state(
    cluster: DevCluster, namespace: str
) -> None:
    cluster.kubectl("create", "configmap", "kept", "-n", namespace, "--from-literal=written=before")
    for component in ("etcd", "kube-apiserver"):
        old = cluster.pid(component)
        cluster.restart(component, hard=True, down_seconds=1)
        assert cluster.pid(component) != old
        assert cluster.running, f"a component stopped while {component} restarted"
        kept = cluster.get_json(f"/api/v1/namespaces/{namespace}/configmaps/kept")
        assert kept["data"] == {"written": "before"}, f"lost after restarting {component}"
    cluster.restart("kube-controller-manager", hard=True)
    cluster.create_namespace()  # waits for KCM to make its default ServiceAccount: KCM works again
    cluster.restart("kube-scheduler", hard=True)
    cluster.restart("kwok")
    _create(cluster, namespace, _pod("after-kwok", node="node-3"))
    assert _wait_phase(cluster, namespace, "after-kwok", "Running")["spec"]["nodeName"] == "node-3"
    assert cluster.running
    state = ClusterState.read(cluster.layout.root)
    assert state is not None
    assert {c.name: c.pid for c in state.children} == {name: cluster.pid(name) for name in COMPONENTS}


def test_restarting_an_unknown_component_names_the_choices(cluster: DevCluster) -> None:
    with pytest.raises(ValueError, match="'kubelet' is not one of etcd, kube-apiserver"):
        cluster.restart("kubelet")


def test_complete_after_succeeds_after_that_long_and_plain_pods_keep_running(
    cluster: DevCluster, namespace: str
) -> None:
    _create(cluster, namespace, _pod("finisher", node="node-2", annotations={COMPLETE_AFTER: "3s"}))
    _create(cluster, namespace, _pod("plain", node="node-2"))
    pod = _wait_phase(cluster, namespace, "finisher", "Succeeded", timeout=30)
    terminated = _terminated(pod)
    assert terminated["exitCode"] == 0
    assert terminated["reason"] == "Completed"
    ran_for = _seconds(terminated["finishedAt"]) - _seconds(pod["status"]["startTime"])
    assert 3 <= ran_for < 15
    assert _get_pod(cluster, namespace, "plain")["status"]["phase"] == "Running"


def test_fail_after_fails_with_the_exit_code_or_1(cluster: DevCluster, namespace: str) -> None:
    _create(cluster, namespace, _pod("crash", node="node-3", annotations={FAIL_AFTER: "2s", EXIT_CODE: "42"}))
    _create(cluster, namespace, _pod("crash-default", node="node-3", annotations={FAIL_AFTER: "1s"}))
    pod = _wait_phase(cluster, namespace, "crash", "Failed")
    assert _terminated(pod)["exitCode"] == 42
    assert _seconds(_terminated(pod)["finishedAt"]) - _seconds(pod["status"]["startTime"]) >= 2
    assert _terminated(_wait_phase(cluster, namespace, "crash-default", "Failed"))["exitCode"] == 1


def test_batch_job_completes(cluster: DevCluster, namespace: str) -> None:
    template = _pod("unused", node="node-4", annotations={COMPLETE_AFTER: "1s"})
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "two"},
        "spec": {
            "completions": 2,
            "parallelism": 2,
            "backoffLimit": 0,
            "template": {
                "metadata": {"annotations": template["metadata"]["annotations"]},
                "spec": template["spec"],
            },
        },
    }
    _create(cluster, namespace, job)
    cluster.kubectl(
        "wait", "-n", namespace, "--for=condition=Complete", "job/two", "--timeout=60s", timeout=90
    )
    status = json.loads(cluster.kubectl("get", "-n", namespace, "job/two", "-o", "json").stdout)["status"]
    assert status["succeeded"] == 2


def test_default_scheduler_places_its_pods_and_leaves_volcano_pods_alone(
    cluster: DevCluster, namespace: str
) -> None:
    volcano = _pod("for-volcano")
    volcano["spec"]["schedulerName"] = "volcano"
    _create(cluster, namespace, volcano)
    plain = _pod("plain")
    del plain["spec"]["schedulerName"]  # defaulted to default-scheduler by the API server
    _create(cluster, namespace, plain)
    placed = _wait_phase(cluster, namespace, "plain", "Running")
    assert placed["spec"]["schedulerName"] == "default-scheduler" and placed["spec"]["nodeName"]
    # kube-scheduler has run its cycles meanwhile; the pod named for another scheduler is still unbound.
    assert not _get_pod(cluster, namespace, "for-volcano")["spec"].get("nodeName")


def test_replication_controller_gets_its_pods(cluster: DevCluster, namespace: str) -> None:
    template = _pod("unused")
    del template["spec"]["schedulerName"]
    template["spec"]["restartPolicy"] = "Always"
    rc = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "rc"},
        "spec": {
            "replicas": 2,
            "selector": {"app": "rc"},
            "template": {"metadata": {"labels": {"app": "rc"}}, "spec": template["spec"]},
        },
    }
    _create(cluster, namespace, rc)
    path = f"/api/v1/namespaces/{namespace}/replicationcontrollers/rc"
    cluster.wait_for(
        "ReplicationController rc with 2 ready replicas",
        lambda: cluster.get_json(path)["status"].get("readyReplicas") == 2,
        timeout=60,
    )


def test_deleting_a_namespace_removes_its_objects(cluster: DevCluster) -> None:
    namespace = cluster.create_namespace()
    _create(cluster, namespace, _pod("doomed", node="node-5"))
    _wait_phase(cluster, namespace, "doomed", "Running")
    cluster.kubectl("create", "configmap", "settings", "-n", namespace, "--from-literal=a=b")
    cluster.kubectl("delete", "namespace", namespace, "--wait=false")
    cluster.wait_for(
        f"namespace {namespace} to be gone",
        lambda: cluster.kubectl("get", "namespace", namespace, check=False).returncode != 0,
        timeout=90,
    )
    leftovers = cluster.kubectl("get", "pods,configmaps", "-n", namespace, "-o", "name").stdout.strip()
    assert leftovers == ""


def test_crds_become_established(cluster: DevCluster, tmp_path: Path) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.volcano-py.io"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }
    (tmp_path / "widget.yaml").write_text(yaml.safe_dump(crd))
    names = cluster.apply_crds(tmp_path)
    assert names == [f"customresourcedefinition.apiextensions.k8s.io/widgets.{group}"]
    assert "widgets" in cluster.kubectl("api-resources", f"--api-group={group}").stdout
    cluster.kubectl("delete", f"crd/widgets.{group}", check=False)


def _repo_crd_names() -> list[str]:
    names = []
    for path in sorted((REPO / "crds").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition":
                names.append(document["metadata"]["name"])
    return names


@pytest.mark.parametrize(
    "crd", _repo_crd_names() or [pytest.param("", marks=pytest.mark.skip("no crds/ yet"))]
)
def test_repo_crds_are_established(cluster: DevCluster, crd: str) -> None:
    found = json.loads(cluster.kubectl("get", "crd", crd, "-o", "json").stdout)
    established = [c for c in found["status"]["conditions"] if c["type"] == "Established"]
    assert established and established[0]["status"] == "True"


def test_a_port_taken_meanwhile_is_retried_on_fresh_ports(
    cluster: DevCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        handed_out: list[list[int]] = []

        def ports_with_a_taken_one(count: int) -> list[int]:
            # First etcd's client port is taken, then the apiserver's: each launch fails at a later stage.
            fresh = free_ports(count)
            ports = {0: [taken, *fresh[1:]], 1: [*fresh[:2], taken]}.get(len(handed_out), fresh)
            handed_out.append(ports)
            return ports

        monkeypatch.setattr(cluster_module, "free_ports", ports_with_a_taken_one)
        with DevCluster() as second:
            assert second.kubectl("get", "--raw", "/readyz").stdout == "ok"
    assert len(handed_out) == 3  # etcd, then the apiserver, could not bind; the third set worked


@dataclass
class DevUp:
    proc: subprocess.Popen[str]
    run_dir: Path
    stdout: list[str]
    stderr: Path


@pytest.fixture
def dev_up(cluster: DevCluster, tmp_path: Path) -> Iterator[DevUp]:
    """`volcano-py dev up --nodes 4 --gpus-per-node 8` in its own run dir, until it prints its export line."""
    run_dir = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "volcano_py.cli.main",
        "dev",
        "up",
        "--nodes",
        "4",
        "--gpus-per-node",
        "8",
    ]
    errors = tmp_path / "dev-up.stderr"
    with errors.open("w") as stderr:
        proc = subprocess.Popen(
            [*command, "--run-dir", str(run_dir)], stdout=subprocess.PIPE, stderr=stderr, text=True
        )
    assert proc.stdout is not None
    lines: list[str] = []
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("export KUBECONFIG="):
            break
    try:
        yield DevUp(proc, run_dir, lines, errors)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=60)


def test_dev_up_gives_ready_gpu_nodes_and_dev_down_leaves_nothing(cluster: DevCluster, dev_up: DevUp) -> None:
    proc, run_dir, lines = dev_up.proc, dev_up.run_dir, dev_up.stdout
    exports = [line for line in lines if line.startswith("export KUBECONFIG=")]
    assert exports, f"dev up printed no export line: {lines}\n{dev_up.stderr.read_text()}"
    kubeconfig = exports[0].removeprefix("export KUBECONFIG=")
    assert f"kubeconfig: {kubeconfig}" in lines
    kubectl = str(cluster.kubectl_binary)
    table = subprocess.run(
        [
            kubectl,
            f"--kubeconfig={kubeconfig}",
            "get",
            "nodes",
            "-o",
            "custom-columns=NAME:.metadata.name,"
            "READY:.status.conditions[?(@.type=='Ready')].status,GPU:.status.allocatable.nvidia\\.com/gpu",
            "--no-headers",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    rows = [row.split() for row in table if row.strip()]
    assert rows == [[f"node-{i}", "True", "8"] for i in range(4)]

    state = ClusterState.read(run_dir)
    assert state is not None and len(state.children) == len(COMPONENTS)
    apiserver = next(c.pid for c in state.children if c.name == "kube-apiserver")
    restarted = subprocess.run(
        [*CLI, "dev", "restart", "kube-apiserver", "--hard", "--run-dir", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert restarted.returncode == 0, restarted.stderr
    assert restarted.stdout.startswith("restarted kube-apiserver: pid "), restarted.stdout
    assert proc.poll() is None, f"dev up exited on a requested restart: {dev_up.stderr.read_text()}"
    state = ClusterState.read(run_dir)
    assert state is not None
    assert next(c.pid for c in state.children if c.name == "kube-apiserver") != apiserver
    after = subprocess.run(
        [kubectl, f"--kubeconfig={kubeconfig}", "get", "nodes", "-o", "name"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert after.stdout.split() == [f"node/node-{i}" for i in range(4)]
    down = subprocess.run(
        [sys.executable, "-m", "volcano_py.cli.main", "dev", "down", "--run-dir", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert down.returncode == 0, down.stderr
    assert "stopped" in down.stdout, down.stdout
    assert proc.wait(timeout=60) == 0, dev_up.stderr.read_text()
    for child in state.children:
        assert group_members(child.pid) == [], f"{child.name} left processes behind"
