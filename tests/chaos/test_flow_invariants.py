"""A chain JobFlow across a controller restart: every step ran once, none before its dependency finished."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.chaoslib import flows

T0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
NS = "w"


def stamp(seconds: float) -> str:
    return datetime.fromtimestamp(T0 + seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def step_job(step: str, created: float, finished: float | None) -> dict[str, Any]:
    state = {"phase": "Completed", "lastTransitionTime": stamp(finished)} if finished is not None else {
        "phase": "Running"}  # fmt: skip
    return {
        "metadata": {"name": flows.job_name("f", step), "creationTimestamp": stamp(created)},
        "status": {"state": state},
    }


def created(*steps: str) -> list[dict[str, Any]]:
    return [{"event": "job created", "job": f"{NS}/{flows.job_name('f', s)}"} for s in steps]


CHAIN = [step_job("a", 0, 3), step_job("b", 4, 7), step_job("c", 8, 11)]


@pytest.mark.parametrize(
    ("phase", "jobs", "lines", "found"),
    [
        pytest.param("Succeed", CHAIN, created("a", "b", "c"), [], id="ran-in-order-once"),
        pytest.param(
            "Succeed", CHAIN, created("a", "b", "b", "c"), ["flow step created twice"], id="step-b-made-again"
        ),
        pytest.param(
            "Running",
            CHAIN[:2],
            created("a", "b"),
            ["flow not finished", "flow step skipped"],
            id="c-never-ran",
        ),
        pytest.param(
            "Succeed",
            [CHAIN[0], step_job("b", 2, 7), CHAIN[2]],
            created("a", "b", "c"),
            ["flow step before its dependency"],
            id="b-before-a-finished",
        ),
    ],
)
def test_a_chain_jobflows_steps(
    phase: str, jobs: list[dict[str, Any]], lines: list[dict[str, Any]], found: list[str]
) -> None:
    assert [v.invariant for v in flows.flow_steps("f", phase, jobs, lines, NS)] == found


def test_the_flow_and_its_templates_chain_the_steps() -> None:
    *templates, flow = flows.manifests("f", NS)
    assert [t["metadata"]["name"] for t in templates] == ["ft-a", "ft-b", "ft-c"]
    assert flow["spec"]["flows"] == [
        {"name": "ft-a"},
        {"name": "ft-b", "dependsOn": {"targets": ["ft-a"]}},
        {"name": "ft-c", "dependsOn": {"targets": ["ft-b"]}},
    ]
    assert flows.job_name("f", "b") == "f-ft-b"
