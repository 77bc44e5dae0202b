"""DRA CEL selectors refused offline exactly where the API server refuses them (Kubernetes v1.34), in its
words and then ours: the table is tests/api/dra_selector_table.py, which
tests/integration/test_dra_selector_apiserver.py also sends to a real kube-apiserver."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.dra_selector_table import CASES, Case
from volcano_py.api.dra_cel_check import MAX_COST, check_selector, selector_cost
from volcano_py.api.validation import validate_object


def _device_class(expression: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def _claim_template(expression: str) -> dict[str, Any]:
    request = {"name": "gpus", "exactly": {"deviceClassName": "gpu.example.com",
                                           "selectors": [{"cel": {"expression": expression}}]}}  # fmt: skip
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t"},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_verdict_and_words(case: Case) -> None:
    verdict = check_selector(case.expression)
    if case.refusal is None:
        assert verdict is None
        return
    assert verdict is not None
    text = verdict.api_text(case.expression)
    if case.same_words:
        assert text == case.refusal
    else:
        assert text.startswith(case.refusal)


@pytest.mark.parametrize(
    ("expression", "fix"),
    [
        pytest.param("device.driver", "make it a condition that is true or false", id="not-bool"),
        pytest.param('device.capacity["d"].memory > 1', "compare them with compareTo", id="type-error"),
        pytest.param('device.driver == "' + "a" * 10240 + '"', "shorten it to 10240 bytes", id="too-long"),
        pytest.param('device.capacity["x"].memory != quantity("1")', "over 1000000", id="too-costly"),
    ],
)
def test_validate_names_the_field_then_the_fix(expression: str, fix: str) -> None:
    [problem] = validate_object(_device_class(expression))
    text = str(problem)
    assert text.startswith("spec.selectors[0].cel.expression: ")
    assert text.index(str(check_selector(expression).api_text(expression))) < text.index(fix)  # type: ignore[union-attr]


def test_claim_template_selector_is_reported_at_its_field() -> None:
    [problem] = validate_object(_claim_template("foo == 1"))
    assert str(problem).startswith(
        'spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "foo == 1": '
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')"
    )


def test_valid_selectors_pass_validate() -> None:
    assert validate_object(_device_class('device.attributes["gpu.example.com"].model == "a100"')) == []


@pytest.mark.parametrize(
    ("expression", "cost"),
    [
        # A string comparison costs a tenth of the shorter string's bound (a driver name: 63) plus its reads.
        pytest.param('device.driver == "gpu.example.com"', 4, id="string-equality"),
        # Reading the range (2) and the result (1), then for each of 32 domains: the loop condition (2), the
        # && (1), reading d (1) and the prefix test (1).
        pytest.param(
            'device.attributes.all(d, d.startsWith("gpu"))', 2 + 1 + 32 * (2 + 1 + 1 + 1), id="loop"
        ),
    ],
)
def test_cost_estimate(expression: str, cost: int) -> None:
    assert selector_cost(expression) == cost
    assert cost < MAX_COST
