"""``--feature-gates`` as Kubernetes writes it: known gates switch, others are refused naming the flag."""

from __future__ import annotations

import pytest

from volcano_py.api.features import (
    DEFAULT_FEATURE_GATES,
    SCHEDULING_GATES_QUEUE_ADMISSION,
    FeatureGateError,
    FeatureGates,
    parse_feature_gates,
)

GATE = SCHEDULING_GATES_QUEUE_ADMISSION


@pytest.mark.parametrize(
    ("text", "on"),
    [
        pytest.param(None, False, id="none-is-the-default"),
        pytest.param("", False, id="empty-is-the-default"),
        pytest.param(f"{GATE}=true", True, id="true"),
        pytest.param(f"{GATE}=True", True, id="go-bool-spelling"),
        pytest.param(f"{GATE}=1", True, id="one"),
        pytest.param(f"{GATE}=false", False, id="false"),
        pytest.param(f" {GATE} = true , ", True, id="spaces-and-a-trailing-comma"),
        pytest.param(f"{GATE}=true,{GATE}=false", False, id="the-last-one-wins"),
    ],
)
def test_parse(text: str | None, on: bool) -> None:
    gates = parse_feature_gates(text)
    assert gates.queue_admission_gates is on
    assert gates.enabled == ({GATE} if on else set())


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        pytest.param(
            "WorkLoadSupport=true", ["--feature-gates", "unknown feature gate 'WorkLoadSupport'", GATE]
        ),
        pytest.param(f"{GATE}=yes", ["--feature-gates", "must be true or false", "'yes'"]),
        pytest.param(GATE, ["--feature-gates", "Name=true or Name=false"]),
        pytest.param("=true", ["--feature-gates", "Name=true or Name=false"]),
    ],
)
def test_refused(text: str, needles: list[str]) -> None:
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates(text)
    for needle in needles:
        assert needle in str(err.value)


def test_default_is_all_off() -> None:
    assert FeatureGates() == DEFAULT_FEATURE_GATES
    assert not DEFAULT_FEATURE_GATES.queue_admission_gates
