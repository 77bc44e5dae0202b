"""Volcano's ``--controllers`` gates: its enable rule, its default (sharding off), and the entries refused."""

from __future__ import annotations

import re

import pytest

from volcano_py.api.controller_gates import (
    DEFAULT_CONTROLLERS,
    HYPERNODE_CONTROLLER,
    JOB_CONTROLLER,
    SHARDING_CONTROLLER,
    ControllerGatesError,
    parse_controller_gates,
)


@pytest.mark.parametrize(
    ("text", "sharding", "hypernode"),
    [
        pytest.param(DEFAULT_CONTROLLERS, False, True, id="volcano-default"),
        pytest.param("*", True, True, id="all"),
        pytest.param("*,-hyperNode-controller", True, False, id="hypernode-off"),
        pytest.param("+sharding-controller,*", True, True, id="plus-name"),
        pytest.param("*,-sharding-controller,-hyperNode-controller", False, False, id="both-off"),
    ],
)
def test_what_runs(text: str, sharding: bool, hypernode: bool) -> None:
    gates = parse_controller_gates(text)
    assert gates.enabled(SHARDING_CONTROLLER) is sharding
    assert gates.enabled(HYPERNODE_CONTROLLER) is hypernode
    assert gates.enabled(JOB_CONTROLLER)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("*,-shard-controller", "unknown controller 'shard-controller'", id="typo"),
        pytest.param(
            "*,-sharding-controller,+sharding-controller",
            "cannot have both '-' and '+' prefixes",
            id="both-signs",
        ),
        pytest.param("*,-job-controller", "this leaves job-controller off", id="core-off"),
        pytest.param("+sharding-controller", "start from *", id="no-star"),
    ],
)
def test_refused_naming_the_entry(text: str, message: str) -> None:
    with pytest.raises(ControllerGatesError, match=re.escape(message)) as info:
        parse_controller_gates(text)
    assert all(problem.path == "--controllers" for problem in info.value.problems)
