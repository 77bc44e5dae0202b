"""Pod mutation for ``SchedulingGatesQueueAdmission``: the queue-allocation gate added at CREATE to pods that
opt in, appended to their own gates, once; and the mutatepod webhook configured only with the gate on."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api import constants as k
from volcano_py.api.features import DEFAULT_FEATURE_GATES, parse_feature_gates
from volcano_py.webhooks.configurations import webhook_configurations
from volcano_py.webhooks.patch import PatchOp, apply_patch
from volcano_py.webhooks.pod_gates import queue_allocation_gate

ON = parse_feature_gates("SchedulingGatesQueueAdmission=true")
GATE = {"name": k.QUEUE_ALLOCATION_GATE_KEY}
OTHER = {"name": "example.com/other-gate"}


def pod(annotation: str | None = "true", gates: list[dict[str, str]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox"}]},
    }
    if annotation is not None:
        body["metadata"]["annotations"] = {k.QUEUE_ALLOCATION_GATE_KEY: annotation}
    if gates is not None:
        body["spec"]["schedulingGates"] = gates
    return body


@pytest.mark.parametrize(
    ("body", "features", "ops", "gates_after"),
    [
        pytest.param(pod(), ON, [PatchOp("add", "/spec/schedulingGates", [GATE])], [GATE], id="no-gates-yet"),
        pytest.param(
            pod(gates=[OTHER]),
            ON,
            [PatchOp("add", "/spec/schedulingGates/-", GATE)],
            [OTHER, GATE],
            id="appended-after-the-pods-own",
        ),
        pytest.param(
            pod(gates=[]), ON, [PatchOp("add", "/spec/schedulingGates/-", GATE)], [GATE], id="empty-list"
        ),
        pytest.param(pod(gates=[OTHER, GATE]), ON, [], [OTHER, GATE], id="already-held-added-once"),
        pytest.param(pod(), DEFAULT_FEATURE_GATES, [], None, id="feature-off"),
        pytest.param(pod(annotation=None), ON, [], None, id="no-annotation"),
        pytest.param(pod(annotation="false"), ON, [], None, id="annotation-not-true"),
        pytest.param(pod(annotation="True"), ON, [], None, id="only-the-exact-string-true-opts-in"),
    ],
)
def test_queue_allocation_gate(
    body: dict[str, Any], features: Any, ops: list[PatchOp], gates_after: list[dict[str, str]] | None
) -> None:
    got = queue_allocation_gate(body, features)
    assert got == ops
    assert apply_patch(body, got)["spec"].get("schedulingGates") == gates_after


def _mutating_names(features: Any) -> list[str]:
    mutating, _ = webhook_configurations(
        name="t", ca_bundle=b"ca", url="https://127.0.0.1:9443", feature_gates=features
    )
    return [hook["name"] for hook in mutating["webhooks"]]


def test_mutatepod_is_configured_only_with_the_feature_on() -> None:
    assert "mutatepod.volcano.sh" not in _mutating_names(DEFAULT_FEATURE_GATES)
    assert "mutatepod.volcano.sh" in _mutating_names(ON)
    mutating, _ = webhook_configurations(name="t", ca_bundle=b"ca", url="https://h:1", feature_gates=ON)
    [hook] = [h for h in mutating["webhooks"] if h["name"] == "mutatepod.volcano.sh"]
    assert hook["clientConfig"]["url"] == "https://h:1/mutate-pod"
    assert hook["rules"][0]["resources"] == ["pods"] and hook["rules"][0]["operations"] == ["CREATE"]
    # Only pods that opt in reach it: an admission outage never blocks any other pod.
    [condition] = hook["matchConditions"]
    assert k.QUEUE_ALLOCATION_GATE_KEY in condition["expression"] and "'true'" in condition["expression"]
