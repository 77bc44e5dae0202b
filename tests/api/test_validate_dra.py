"""`volcano-py validate` on DRA manifests: what the scheduler cannot allocate is reported before it is
applied, field named, in the words the scheduler keeps the pods pending with."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.validation import unchecked_reason, validate_object


def _template(request: dict[str, Any], **devices: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t"},
        "spec": {"spec": {"devices": {"requests": [request], **devices}}},
    }


def _exactly(**fields: Any) -> dict[str, Any]:
    return {"name": "gpus", "exactly": {"deviceClassName": "gpu.example.com", **fields}}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(_template(_exactly(count=2)), [], id="plain-count"),
        pytest.param(
            _template(_exactly(selectors=[{"cel": {"expression": 'device.attributes["d"].model =='}}])),
            ["spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "
             '"device.attributes[\\"d\\"].model ==": compilation failed: ERROR: <input>:1:'],
            id="selector-does-not-compile",
        ),
        pytest.param(
            _template({"name": "gpus", "firstAvailable": [{"name": "a", "deviceClassName": "x"}]}),
            ["spec.spec.devices.requests[0].firstAvailable: (prioritized list) is not supported"],
            id="prioritized-list",
        ),
        pytest.param(
            _template(_exactly(count=1), constraints=[{"distinctAttribute": "gpu.example.com/model"}]),
            ["spec.spec.devices.constraints[0].distinctAttribute: is not supported by volcano-py; remove it"],
            id="distinct-attribute",
        ),
        pytest.param(
            _template(_exactly(allocationMode="Some")),
            ["spec.spec.devices.requests[0].exactly.allocationMode"],
            id="unknown-allocation-mode",
        ),
        pytest.param(
            {**_template(_exactly(count=1)), "spec": True},
            ["spec: must be an object (the template: spec.spec), got True"],
            id="template-spec-not-an-object",
        ),
        pytest.param(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": "c"},
                "spec": {"selectors": [{"cel": {"expression": "device.driver = 'x'"}}]},
            },
            ["spec.selectors[0].cel.expression: Invalid value: \"device.driver = 'x'\": compilation failed: "
             "ERROR: <input>:1:15: Syntax error"],
            id="class-selector",
        ),
    ],
)  # fmt: skip
def test_dra_manifests(obj: dict[str, Any], expected: list[str]) -> None:
    assert unchecked_reason(obj) is None
    problems = [str(p) for p in validate_object(obj)]
    assert len(problems) == len(expected), problems
    for got, want in zip(problems, expected, strict=True):
        assert got.startswith(want), got
