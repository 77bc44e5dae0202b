"""The order in which a what-if offers jobs to end for a pending one, per domain: pure arithmetic over who
holds what where, checked here without a session."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from volcano_py.resources import Resource
from volcano_py.whatif.victims import Domain, by_node, pick_victims

GPU = "nvidia.com/gpu"


def _node(idle_gpus: int) -> Any:
    return SimpleNamespace(idle=Resource({GPU: idle_gpus}))


def _view(jobs: dict[str, tuple[int, str]]) -> Any:
    return SimpleNamespace(jobs={uid: SimpleNamespace(priority=p, queue=q) for uid, (p, q) in jobs.items()})


HOLDINGS = {
    "small": {"n1": Resource({GPU: 1})},
    "mid": {"n1": Resource({GPU: 2}), "n2": Resource({GPU: 1})},
    "big": {"n2": Resource({GPU: 4})},
    "cpu-only": {"n1": Resource({"cpu": 4000})},
    "important": {"n1": Resource({GPU: 8})},
    "other-queue": {"n2": Resource({GPU: 3})},
}
JOBS = {
    "small": (0, "q"),
    "mid": (0, "q"),
    "big": (0, "q"),
    "cpu-only": (0, "q"),
    "important": (9, "q"),
    "other-queue": (0, "r"),
}


@pytest.mark.parametrize(
    ("domain", "idle", "need", "expected"),
    [
        # 3 short on the cluster: mid (3) is the smallest cover; then the rest, smallest first.
        ({"n1", "n2"}, 0, 3, ["mid", "small", "big", "other-queue", "important"]),
        # 6 short: nobody covers, so the largest (big, 4) goes; then 2 short: mid covers; then smallest first.
        ({"n1", "n2"}, 0, 6, ["big", "mid", "small", "other-queue", "important"]),
        # Room enough already: everyone, smallest first, own queue before the other, lower priority first.
        ({"n1", "n2"}, 8, 3, ["small", "mid", "big", "other-queue", "important"]),
        # One node: only what is held there counts (mid holds 2 on n1).
        ({"n1"}, 0, 2, ["mid", "small", "important"]),
        ({"n2"}, 0, 2, ["big", "mid", "other-queue"]),
    ],
)
def test_victims_go_lower_priority_and_own_queue_first_smallest_cover_else_largest(
    domain: set[str], idle: int, need: int, expected: list[str]
) -> None:
    nodes = {"n1": _node(idle), "n2": _node(0)}
    order = pick_victims(
        Domain("d", frozenset(domain)),
        nodes,
        by_node(HOLDINGS, GPU),
        _view(JOBS),
        Resource({GPU: need}),
        GPU,
        priority=5,
        queue="q",
    )
    assert order == expected


def test_equal_holders_go_by_uid() -> None:
    holdings = {uid: {"n1": Resource({GPU: 2})} for uid in ("b", "a", "c")}
    order = pick_victims(
        Domain("d", frozenset({"n1"})),
        {"n1": _node(0)},
        by_node(holdings, GPU),
        _view({uid: (0, "q") for uid in holdings}),
        Resource({GPU: 2}),
        GPU,
        priority=5,
        queue="q",
    )
    assert order == ["a", "b", "c"]
