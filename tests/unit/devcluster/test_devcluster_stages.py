"""The kwok --config: kwok's stages verbatim plus ours, with selectors that never overlap."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import yaml

from volcano_py.devcluster import stages

POD_READY = """apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Pending']
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values: ['True']
  next:
    statusTemplate: "phase: Running"
"""
POD_DELETE = """apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    delete: true
"""
POD_COMPLETE = POD_DELETE.replace("name: pod-delete", "name: pod-complete")
NODE_HEARTBEAT = """apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-heartbeat-with-lease
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  delay:
    durationMilliseconds: 600000
    jitterDurationMilliseconds: 610000
  next:
    statusTemplate: |
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ Now | Quote }}
      {{ end }}
"""


def _value(pod: dict[str, Any], key: str) -> Any:
    """The handful of selector keys our stages use; anything else is treated as matching (conservative)."""
    if key == ".metadata.deletionTimestamp":
        return pod.get("deletionTimestamp")
    if key == ".status.phase":
        return pod["phase"]
    prefix = '.metadata.annotations["'
    if key.startswith(prefix):
        return pod["annotations"].get(key[len(prefix) : -2])
    return ...


def _matches(stage: dict[str, Any], pod: dict[str, Any]) -> bool:
    for expression in stage["spec"]["selector"]["matchExpressions"]:
        value = _value(pod, expression["key"])
        if value is ...:
            continue
        operator = expression["operator"]
        if operator == "Exists" and value is None:
            return False
        if operator == "DoesNotExist" and value is not None:
            return False
        if operator == "In" and value not in expression["values"]:
            return False
        if operator == "NotIn" and value in expression["values"]:
            return False
    return True


def _documents() -> list[dict[str, Any]]:
    return list(yaml.safe_load_all(stages.kwok_config([POD_READY, POD_DELETE])))


def test_config_has_kwok_stages_then_ours_and_nothing_else() -> None:
    documents = _documents()
    assert {d["kind"] for d in documents} == {"Stage"}
    names = [d["metadata"]["name"] for d in documents]
    assert names == ["pod-ready", "pod-delete", stages.COMPLETE_STAGE, stages.FAIL_STAGE]


def test_no_two_pod_stages_match_the_same_pod() -> None:
    pod_stages = [d for d in _documents() if d["kind"] == "Stage"]
    phases = ["Pending", "Running", "Succeeded", "Failed"]
    annotation_sets = [
        {},
        {stages.COMPLETE_AFTER: "5s"},
        {stages.FAIL_AFTER: "2s"},
        {stages.FAIL_AFTER: "2s", stages.EXIT_CODE: "3"},
        {stages.COMPLETE_AFTER: "5s", stages.FAIL_AFTER: "2s"},
    ]
    for phase, extra, deleting in itertools.product(phases, annotation_sets, [False, True]):
        pod = {"phase": phase, "annotations": extra, "deletionTimestamp": "now" if deleting else None}
        matching = [s["metadata"]["name"] for s in pod_stages if _matches(s, pod)]
        assert len(matching) <= 1, (pod, matching)


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({}, None),
        ({stages.COMPLETE_AFTER: "5s"}, stages.COMPLETE_STAGE),
        ({stages.FAIL_AFTER: "1s", stages.EXIT_CODE: "7"}, stages.FAIL_STAGE),
        ({stages.COMPLETE_AFTER: "5s", stages.FAIL_AFTER: "1s"}, stages.FAIL_STAGE),
    ],
    ids=["plain-pod-keeps-running", "complete-after", "fail-after", "fail-wins-over-complete"],
)
def test_which_stage_finishes_a_running_pod(annotations: dict[str, str], expected: str | None) -> None:
    pod = {"phase": "Running", "annotations": annotations, "deletionTimestamp": None}
    ours = [stages.complete_stage(), stages.fail_stage()]
    matching = [s["metadata"]["name"] for s in ours if _matches(s, pod)]  # type: ignore[index]
    assert matching == ([expected] if expected else [])


def test_delays_come_from_the_annotations_without_jitter() -> None:
    for stage, key in (
        (stages.complete_stage(), stages.COMPLETE_AFTER),
        (stages.fail_stage(), stages.FAIL_AFTER),
    ):
        delay = stage["spec"]["delay"]  # type: ignore[index]
        assert delay["durationFrom"]["expressionFrom"] == f'.metadata.annotations["{key}"]'
        assert "jitterDurationMilliseconds" not in delay and "jitterDurationFrom" not in delay


def test_terminal_status_templates() -> None:
    succeeded = stages.complete_stage()["spec"]["next"]["statusTemplate"]  # type: ignore[index]
    failed = stages.fail_stage()["spec"]["next"]["statusTemplate"]  # type: ignore[index]
    assert "phase: Succeeded" in succeeded and "{{ $exitCode := 0 }}" in succeeded
    assert "phase: Failed" in failed
    # Read from the pod before `range .spec.containers` rebinds the dot to a container.
    exit_code = f'{{{{ $exitCode := or (index .metadata.annotations "{stages.EXIT_CODE}") "1" }}}}'
    assert failed.index(exit_code) < failed.index("{{ range .spec.containers }}")
    assert "exitCode: {{ $exitCode }}" in failed


def test_node_heartbeats_are_spread_over_the_period_and_otherwise_kept() -> None:
    (heartbeat, ready) = list(yaml.safe_load_all(stages.kwok_config([NODE_HEARTBEAT, POD_READY])))[:2]
    kept = yaml.safe_load(NODE_HEARTBEAT)
    # Each delay drawn from 300-900 s: the same ten minutes on average, but nodes created together drift apart
    # instead of stamping in one burst (kwok's own 600-610 s keeps them in step).
    assert heartbeat["spec"]["delay"] == {
        "durationMilliseconds": 300_000,
        "jitterDurationMilliseconds": 900_000,
    }
    assert {**heartbeat, "spec": {**heartbeat["spec"], "delay": kept["spec"]["delay"]}} == kept
    assert ready == yaml.safe_load(POD_READY)


def test_kwoks_own_pod_complete_is_refused() -> None:
    with pytest.raises(ValueError, match="pod-complete"):
        stages.kwok_config([POD_READY, POD_COMPLETE])


def test_annotation_keys_are_the_published_ones() -> None:
    assert stages.COMPLETE_AFTER == "kwok.volcano-py.io/complete-after"
    assert stages.FAIL_AFTER == "kwok.volcano-py.io/fail-after"
    assert stages.EXIT_CODE == "kwok.volcano-py.io/exit-code"


def test_kwoks_pod_delete_leaves_a_pod_deleted_without_grace_alone_and_is_otherwise_kept() -> None:
    """kwok deletes by name, without the pod's uid. Its own delete first shortens the grace period to 0 (one
    more event of the terminating pod); had pod-delete run on that event too, its second delete could land on
    the successor a Job controller made under the same name, which reads as an eviction of the successor."""
    (ready, delete) = list(yaml.safe_load_all(stages.kwok_config([POD_READY, POD_DELETE])))[:2]
    kept = yaml.safe_load(POD_DELETE)
    # kwok reads a number as a float, which its In/NotIn never match: the test must yield a boolean.
    graceless = {"key": ".metadata.deletionGracePeriodSeconds == 0", "operator": "NotIn", "values": ["true"]}
    expressions = delete["spec"]["selector"]["matchExpressions"]
    assert expressions == [*kept["spec"]["selector"]["matchExpressions"], graceless]
    without = {**delete, "spec": {**delete["spec"], "selector": kept["spec"]["selector"]}}
    assert without == kept
    assert ready == yaml.safe_load(POD_READY)
