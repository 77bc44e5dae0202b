"""Pod mutation by resource group against the real API server: what ``kubectl get pod`` shows after create.

Our webhook server runs in-process with a volcano-admission.conf (as ``--admission-conf``); its
configurations carry an objectSelector on a per-run label, so only this module's pods go through them.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from admission_harness import AdmissionServer, serving_admission

from volcano_py.devcluster import DevCluster

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:6]
LABEL = {"volcano-py.test/resource-groups": RUN}
NAMESPACE = f"rg-mng-{RUN}"
MNG_TOLERATION = {"key": "mng-taint", "operator": "Exists", "effect": "NoSchedule"}


def conf(gpu_nodetype: str) -> str:
    return f"""\
resourceGroups:
- resourceGroup: management
  object:
    key: namespace
    value: [{NAMESPACE}]
  schedulerName: default-scheduler
  tolerations: [{json.dumps(MNG_TOLERATION)}]
  labels:
    volcano.sh/nodetype: management
- resourceGroup: cpu
  object:
    key: annotation
    value: ["example.com/pool: cpu"]
  schedulerName: volcano
  labels:
    volcano.sh/nodetype: cpu
- resourceGroup: gpu
  schedulerName: volcano
  labels:
    volcano.sh/nodetype: {gpu_nodetype}
"""


@pytest.fixture(scope="module")
def conf_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("admission-conf") / "volcano-admission.conf"
    path.write_text(conf("gpu"))
    return path


@pytest.fixture(scope="module")
def admission(
    cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory, conf_file: Path
) -> Iterator[AdmissionServer]:
    cluster.kubectl("create", "namespace", NAMESPACE)
    try:
        certs = tmp_path_factory.mktemp("webhook-certs")
        with serving_admission(cluster, certs, LABEL, admission_conf=conf_file) as server:
            yield server
    finally:
        cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false", check=False)
        cluster.kubectl("delete", "pods", "-n", "default", "-l", f"volcano-py.test/resource-groups={RUN}",
                        "--wait=false", check=False)  # fmt: skip


def _create_pod(
    cluster: DevCluster, name: str, namespace: str = "default", annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    """Create a labelled pod and return it as the API server keeps it (``kubectl get pod -o json``)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": LABEL, "annotations": annotations or {}},
        "spec": {
            "containers": [{"name": "c", "image": "busybox"}],
            "tolerations": [{"key": "own", "operator": "Exists"}],
        },
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(pod))
    got: dict[str, Any] = json.loads(
        cluster.kubectl("get", "pod", name, "-n", namespace, "-o", "json").stdout
    )
    return got


def _tolerations(pod: dict[str, Any]) -> list[dict[str, Any]]:
    # The API server's DefaultTolerationSeconds adds the not-ready/unreachable ones; keep what we wrote.
    return [t for t in pod["spec"].get("tolerations", []) if not t["key"].startswith("node.kubernetes.io/")]


def test_a_pod_in_a_groups_namespace_gets_its_nodes_tolerations_and_scheduler(
    cluster: DevCluster, admission: AdmissionServer
) -> None:
    pod = _create_pod(cluster, "mng", namespace=NAMESPACE)
    assert pod["spec"]["nodeSelector"] == {"volcano.sh/nodetype": "management"}
    assert _tolerations(pod) == [{"key": "own", "operator": "Exists"}, MNG_TOLERATION]
    assert pod["spec"]["schedulerName"] == "default-scheduler"


@pytest.mark.parametrize(
    ("annotations", "nodetype"),
    [
        pytest.param(
            {"volcano.sh/resource-group": "gpu"}, "gpu", id="named-by-the-resource-group-annotation"
        ),
        pytest.param({"example.com/pool": "cpu"}, "cpu", id="an-annotation-the-group-lists"),
    ],
)
def test_an_annotated_pod_gets_its_groups_nodes_and_scheduler(
    cluster: DevCluster, admission: AdmissionServer, annotations: dict[str, str], nodetype: str
) -> None:
    pod = _create_pod(cluster, f"annotated-{nodetype}-{RUN}", annotations=annotations)
    assert pod["spec"]["nodeSelector"] == {"volcano.sh/nodetype": nodetype}
    assert pod["spec"]["schedulerName"] == "volcano"
    assert _tolerations(pod) == [{"key": "own", "operator": "Exists"}]


def test_a_pod_no_group_takes_is_unchanged(cluster: DevCluster, admission: AdmissionServer) -> None:
    pod = _create_pod(cluster, f"plain-{RUN}", annotations={"volcano.sh/resource-group": "tpu"})
    assert "nodeSelector" not in pod["spec"]
    assert "affinity" not in pod["spec"]
    assert pod["spec"]["schedulerName"] == "default-scheduler"
    assert _tolerations(pod) == [{"key": "own", "operator": "Exists"}]


def test_an_edited_conf_reaches_the_next_pod(
    cluster: DevCluster, admission: AdmissionServer, conf_file: Path
) -> None:
    conf_file.write_text(conf("gpu-h100"))
    time.sleep(1.1)  # the file is looked at again at most once a second
    pod = _create_pod(cluster, f"after-edit-{RUN}", annotations={"volcano.sh/resource-group": "gpu"})
    assert pod["spec"]["nodeSelector"] == {"volcano.sh/nodetype": "gpu-h100"}
