"""The generated CRDs on a real kube-apiserver: every example survives ``kubectl apply`` + ``kubectl get``
with no field pruned or rejected, Volcano's short names and columns work, and the schema refuses what the
models refuse."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.api.crd import CRDS, crd_for
from volcano_py.api.validation import validate_object
from volcano_py.devcluster import DevCluster
from volcano_py.devcluster.cluster import KubectlError

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _examples() -> list[Any]:
    params = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                params.append(pytest.param(doc, id=f"{path.stem}/{doc['metadata']['name']}"))
    return params


def _missing(sent: Any, got: Any, path: str = "") -> list[str]:
    """Where ``got`` lacks or changed something ``sent`` had (the server may add, never drop or alter)."""
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return [f"{path}: sent a mapping, got {got!r}"]
        return [
            m for key, value in sent.items() for m in _missing(value, got.get(key, _ABSENT), f"{path}.{key}")
        ]
    if isinstance(sent, list):
        if not isinstance(got, list) or len(got) != len(sent):
            return [f"{path}: sent {sent!r}, got {got!r}"]
        return [
            m for i, (s, g) in enumerate(zip(sent, got, strict=True)) for m in _missing(s, g, f"{path}[{i}]")
        ]
    if got is _ABSENT:
        return [f"{path}: pruned"]
    return [] if sent == got else [f"{path}: sent {sent!r}, got {got!r}"]


_ABSENT = object()


def _scoped(cluster: DevCluster, doc: dict[str, Any], namespace: str) -> tuple[dict[str, Any], list[str]]:
    """The manifest made unique for this test run, and the kubectl flags that address it."""
    doc = copy.deepcopy(doc)
    info = crd_for(doc["apiVersion"], doc["kind"])
    if info is not None and not info.namespaced:
        # Cluster-scoped objects outlive the test namespace; a unique name keeps reruns independent.
        doc["metadata"]["name"] = f"{doc['metadata']['name']}-{uuid.uuid4().hex[:6]}"
        return doc, []
    doc["metadata"]["namespace"] = namespace
    return doc, ["-n", namespace]


def test_every_crd_is_established(cluster: DevCluster) -> None:
    out = cluster.kubectl("get", "crd", "-o", "json").stdout
    established = {
        item["metadata"]["name"]
        for item in json.loads(out)["items"]
        if any(
            c["type"] == "Established" and c["status"] == "True" for c in item["status"].get("conditions", [])
        )
    }
    assert {info.name for info in CRDS} <= established


@pytest.mark.parametrize("doc", _examples())
def test_example_round_trips_through_the_api_server(
    cluster: DevCluster, namespace: str, doc: dict[str, Any]
) -> None:
    manifest, scope = _scoped(cluster, doc, namespace)
    cluster.kubectl("apply", *scope, "-f", "-", input=json.dumps(manifest))
    info = crd_for(doc["apiVersion"], doc["kind"])
    kind = info.name if info is not None else doc["kind"].lower()
    stored = yaml.safe_load(
        cluster.kubectl("get", *scope, kind, manifest["metadata"]["name"], "-o", "yaml").stdout
    )
    try:
        sent = {k: v for k, v in manifest.items() if k != "metadata"}
        assert _missing(sent, stored) == []
        assert validate_object(stored) == []
    finally:
        cluster.kubectl("delete", *scope, kind, manifest["metadata"]["name"], "--wait=false", check=False)


def test_short_names_and_printer_columns(cluster: DevCluster, namespace: str) -> None:
    job = yaml.safe_load((EXAMPLES / "single-task-job.yaml").read_text())
    cluster.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(job))
    header = cluster.kubectl("get", "-n", namespace, "vj").stdout.splitlines()[0].split()
    assert header == ["NAME", "STATUS", "MINAVAILABLE", "RUNNINGS", "AGE"]
    wide = cluster.kubectl("get", "-n", namespace, "vcjob", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-1] == "QUEUE"
    assert wide[1].split()[-1] == "default"
    for short in ("pg", "q", "hn"):
        cluster.kubectl("get", short, *(["-n", namespace] if short == "pg" else []))


def test_server_fills_volcanos_defaults(cluster: DevCluster, namespace: str) -> None:
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "defaults", "namespace": namespace},
        "spec": {
            "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}]
        },
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(job))
    stored = json.loads(cluster.kubectl("get", "-n", namespace, "vcjob", "defaults", "-o", "json").stdout)
    assert stored["spec"]["queue"] == "default"
    assert stored["spec"]["maxRetry"] == 3


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        pytest.param({"maxRetry": -1}, "spec.maxRetry", id="negative-max-retry"),
        pytest.param({"queue": "Not_A_Queue"}, "spec.queue", id="queue-name-pattern"),
        pytest.param(
            {"policies": [{"event": "PodCrashed", "action": "RestartJob"}]},
            "spec.policies[0].event",
            id="unknown-event",
        ),
        pytest.param({"tasks": []}, "spec.tasks", id="no-tasks"),
    ],
)
def test_schema_rejects_what_the_models_reject(
    cluster: DevCluster, namespace: str, spec: dict[str, Any], field: str
) -> None:
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": f"bad-{uuid.uuid4().hex[:6]}", "namespace": namespace},
        "spec": {
            "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}],
            **spec,
        },
    }
    assert validate_object(job) != []
    with pytest.raises(KubectlError) as err:
        cluster.kubectl("create", "-f", "-", input=json.dumps(job))
    assert field in str(err.value)


def test_server_refuses_or_prunes_a_misspelt_field_which_validate_reports(
    cluster: DevCluster, namespace: str
) -> None:
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "typo", "namespace": namespace},
        "spec": {
            "tasks": [
                {
                    "name": "t",
                    "replica": 3,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                }
            ]
        },
    }
    assert [p.path for p in validate_object(job)] == ["spec.tasks[0].replica"]
    # kubectl asks for strict field validation by default, so the server refuses the typo...
    with pytest.raises(KubectlError, match=r'unknown field "spec\.tasks\[0\]\.replica"'):
        cluster.kubectl("create", "-f", "-", input=json.dumps(job))
    # ...but any other client (or --validate=ignore) gets it pruned without a word.
    cluster.kubectl("create", "--validate=ignore", "-f", "-", input=json.dumps(job))
    stored = json.loads(cluster.kubectl("get", "-n", namespace, "vcjob", "typo", "-o", "json").stdout)
    assert "replica" not in stored["spec"]["tasks"][0]
