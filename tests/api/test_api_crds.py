"""The committed CRDs are exactly what the models generate, and the API server will accept them as
structural."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.api.crd import CRDS, build_crd, crd_for, render_crd

ROOT = Path(__file__).resolve().parents[2]
CRD_DIR = ROOT / "crds"
EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("info", CRDS, ids=lambda i: i.kind)
def test_committed_crd_matches_the_models(info: Any) -> None:
    assert (CRD_DIR / info.file_name).read_text() == render_crd(info), (
        "run `volcano-py crds` and commit crds/"
    )


def test_crd_dir_holds_exactly_one_file_per_kind() -> None:
    assert sorted(p.name for p in CRD_DIR.glob("*.yaml")) == sorted(i.file_name for i in CRDS)


def test_rendering_is_deterministic() -> None:
    assert [render_crd(i) for i in CRDS] == [render_crd(i) for i in CRDS]


def _walk(node: dict[str, Any], path: str) -> list[str]:
    """Structural-schema violations under ``node``."""
    bad: list[str] = []
    for key in ("$ref", "$defs", "title", "nullable", "oneOf", "allOf", "not", "const", "uniqueItems"):
        if key in node:
            bad.append(f"{path}: has {key}")
    int_or_string = node.get("x-kubernetes-int-or-string")
    if "anyOf" in node and not int_or_string:
        bad.append(f"{path}: anyOf outside int-or-string")
    if int_or_string and node.get("anyOf") != [{"type": "integer"}, {"type": "string"}]:
        bad.append(f"{path}: int-or-string must be anyOf integer, string")
    if "type" not in node and not int_or_string and not node.get("x-kubernetes-preserve-unknown-fields"):
        bad.append(f"{path}: no type")
    if "properties" in node and "additionalProperties" in node:
        bad.append(f"{path}: both properties and additionalProperties")
    if isinstance(node.get("additionalProperties"), bool):
        bad.append(f"{path}: boolean additionalProperties")
    for name, sub in (node.get("properties") or {}).items():
        bad += _walk(sub, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            bad += _walk(node[key], f"{path}[{key}]")
    return bad


@pytest.mark.parametrize("info", CRDS, ids=lambda i: i.kind)
def test_schema_is_structural(info: Any) -> None:
    schema = build_crd(info)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert _walk(schema, info.kind) == []
    assert schema["properties"]["metadata"] == {"type": "object"}


def _defaults(node: dict[str, Any], path: str) -> dict[str, Any]:
    out = {path: node["default"]} if "default" in node else {}
    for name, sub in (node.get("properties") or {}).items():
        out.update(_defaults(sub, f"{path}.{name}"))
    if isinstance(node.get("items"), dict):
        out.update(_defaults(node["items"], f"{path}[]"))
    return out


def test_only_volcanos_defaults_are_declared() -> None:
    declared: dict[str, Any] = {}
    for info in CRDS:
        schema = build_crd(info)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        declared.update(_defaults(schema, info.kind))
    job_spec = {
        ".queue": "default",
        ".maxRetry": 3,
        ".networkTopology.mode": "hard",
        ".tasks[].partitionPolicy.minPartitions": 0,
        ".tasks[].partitionPolicy.networkTopology.mode": "hard",
    }
    # A flow's patch is partial: only what a user writes inside a block he adds is defaulted there.
    patch = {k: v for k, v in job_spec.items() if k not in (".queue", ".maxRetry")}
    assert declared == {
        **{f"Job.spec{k}": v for k, v in job_spec.items()},
        **{f"JobTemplate.spec{k}": v for k, v in job_spec.items()},
        **{f"CronJob.spec.jobTemplate.spec{k}": v for k, v in job_spec.items()},
        **{f"JobFlow.spec.flows[].patch.jobSpec{k}": v for k, v in patch.items()},
        "CronJob.spec.concurrencyPolicy": "Allow",
        "CronJob.spec.suspend": False,
        "CronJob.spec.successfulJobsHistoryLimit": 3,
        "CronJob.spec.failedJobsHistoryLimit": 1,
        "PodGroup.spec.queue": "default",
        "PodGroup.spec.networkTopology.mode": "hard",
        "PodGroup.spec.subGroupPolicy[].subGroupSize": 1,
        "PodGroup.spec.subGroupPolicy[].minSubGroups": 0,
        "PodGroup.spec.subGroupPolicy[].networkTopology.mode": "hard",
        "Queue.spec.weight": 1,
        "Queue.spec.dequeueStrategy": "traverse",
    }


@pytest.mark.parametrize(
    ("kind", "scope", "short_names", "status"),
    [
        ("Job", "Namespaced", ["vcjob", "vj"], True),
        ("PodGroup", "Namespaced", ["pg", "podgroup-v1beta1"], False),
        ("Queue", "Cluster", ["q", "queue-v1beta1"], True),
        ("Command", "Namespaced", None, False),
        ("HyperNode", "Cluster", ["hn"], True),
        ("CronJob", "Namespaced", ["cronvcjob", "cronvj"], True),
        ("JobFlow", "Namespaced", ["jf"], True),
        ("JobTemplate", "Namespaced", ["jt"], True),
        ("NodeShard", "Cluster", ["nsh"], True),
    ],
)
def test_names_scope_and_subresources_are_volcanos(
    kind: str, scope: str, short_names: list[str] | None, status: bool
) -> None:
    info = next(i for i in CRDS if i.kind == kind)
    spec = build_crd(info)["spec"]
    assert spec["scope"] == scope
    assert spec["names"].get("shortNames") == short_names
    assert ("status" in spec["versions"][0]["subresources"]) is status


def test_job_printer_columns_match_volcanos() -> None:
    columns = build_crd(CRDS[0])["spec"]["versions"][0]["additionalPrinterColumns"]
    assert [(c["name"], c["jsonPath"]) for c in columns] == [
        ("STATUS", ".status.state.phase"),
        ("minAvailable", ".status.minAvailable"),
        ("RUNNINGS", ".status.running"),
        ("AGE", ".metadata.creationTimestamp"),
        ("QUEUE", ".spec.queue"),
    ]


def _pruned(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    """Fields of ``value`` the API server would prune under ``schema`` (its pruning rule, offline)."""
    if schema.get("x-kubernetes-preserve-unknown-fields") or not isinstance(value, dict | list):
        return []
    if isinstance(value, list):
        items = schema.get("items", {})
        return [p for i, v in enumerate(value) for p in _pruned(v, items, f"{path}[{i}]")]
    out: list[str] = []
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key, sub in value.items():
        if not path and key == "metadata":
            continue  # the server validates ObjectMeta itself
        if props is not None and key in props:
            out += _pruned(sub, props[key], f"{path}.{key}")
        elif isinstance(extra, dict):
            out += _pruned(sub, extra, f"{path}.{key}")
        else:
            out.append(f"{path}.{key}")
    return out


def _example_objects() -> list[Any]:
    docs = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and crd_for(doc["apiVersion"], doc["kind"]) is not None:
                docs.append(pytest.param(doc, id=f"{path.stem}/{doc['metadata']['name']}"))
    return docs


@pytest.mark.parametrize("doc", _example_objects())
def test_no_example_field_would_be_pruned(doc: dict[str, Any]) -> None:
    info = crd_for(doc["apiVersion"], doc["kind"])
    assert info is not None
    schema = build_crd(info)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert _pruned(doc, schema, "") == []


def test_pruning_check_catches_a_misspelt_field() -> None:
    schema = build_crd(CRDS[0])["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    doc = {"apiVersion": "x", "kind": "Job", "metadata": {}, "spec": {"tasks": [{"replica": 1}]}}
    assert _pruned(doc, schema, "") == [".spec.tasks[0].replica"]


def test_go_integer_widths_and_task_name_pattern_reach_the_schema() -> None:
    spec = build_crd(CRDS[0])["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    task = spec["properties"]["tasks"]["items"]["properties"]
    assert task["replicas"] == {"format": "int32", "minimum": 0, "type": "integer"}
    assert task["name"] == {"maxLength": 63, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "type": "string"}
    assert spec["properties"]["minAvailable"]["format"] == "int32"
