"""shuffle + rescheduling: which running pods a session evicts from over-used nodes, and which it keeps.

Each case is a cluster (nodes of 8 cpu / 32Gi unless it says otherwise), one session under a conf whose
rescheduling strategy is due, and the pods a user would see evicted. The protections are preempt's: gangs,
PodDisruptionBudgets (pdb), cooldowns (cdp), ``volcano.sh/preemptable: "false"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from tests.scheduler.evict_harness import NOW, Cluster
from volcano_py.resources import Resource
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework import combine
from volcano_py.scheduler.framework.arguments import ConfError
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.extension import Victim
from volcano_py.scheduler.framework.status import TaskStatus
from volcano_py.scheduler.framework.task import TaskInfo, timestamp

NOW_S = timestamp(NOW)
DUE = {"rescheduling": NOW_S - 120}  # ran two minutes ago, interval one minute


def conf(
    params: str = "thresholds: {cpu: 20}\n          targetThresholds: {cpu: 50}", extra: str = ""
) -> str:
    return f"""
actions: "allocate, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: pdb
  - name: cdp
- plugins:
  - name: predicates
  - name: nodeorder
  - name: rescheduling
    arguments:
      interval: 1m
      strategies:
      - name: lowNodeUtilization
        params:
          {params}
{extra}"""


def run(
    cluster: Cluster, text: str | None = None, timers: Mapping[str, float] | None = None
) -> SessionResult:
    return run_session(
        cluster.snapshot(), load_conf(text or conf()), NOW, timers=DUE if timers is None else timers
    )


def evicted(result: SessionResult) -> set[str]:
    return {e.name for e in result.evictions}


def four_singles_on_n0(**kw: Any) -> Cluster:
    """n0 full with four 2-cpu one-pod jobs (100% cpu), n1 empty."""
    return (
        Cluster()
        .nodes_named("n", 2)
        .job("a", priority="low", cpu="2", running_on=["n0"], **kw)
        .job("b", priority="mid", cpu="2", running_on=["n0"], **kw)
        .job("c", priority="high", cpu="2", running_on=["n0"], **kw)
        .job("d", priority="high", cpu="2", running_on=["n0"], **kw)
    )


def _pod(cluster: Cluster, name: str) -> dict[str, Any]:
    return next(p for p in cluster.pods if p["metadata"]["name"] == name)


def _pdb_on(cluster: Cluster, pod: str) -> Cluster:
    _pod(cluster, pod)["metadata"]["labels"] = {"app": pod}
    cluster.pdbs.append(
        {"metadata": {"name": "keep", "namespace": "default"},
         "spec": {"selector": {"matchLabels": {"app": pod}}}, "status": {"disruptionsAllowed": 0}}
    )  # fmt: skip
    return cluster


def _cooling(cluster: Cluster, pod: str) -> Cluster:
    obj = _pod(cluster, pod)
    obj["metadata"]["labels"] = {"volcano.sh/cooldown-time": "1h"}
    obj["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T11:50:00Z"}
    ]
    return cluster


def _annotate(cluster: Cluster, pod: str, annotations: dict[str, str]) -> Cluster:
    _pod(cluster, pod)["metadata"]["annotations"].update(annotations)
    return cluster


CASES = [
    pytest.param(
        four_singles_on_n0, conf(), {"a-0", "b-0"}, id="lowest-priority-pods-leave-until-under-target"
    ),
    pytest.param(
        lambda: four_singles_on_n0().node("n2", cpu=8),
        conf(),
        {"a-0", "b-0", "c-0"},
        id="with-room-to-spare-the-node-goes-below-its-target",
    ),
    pytest.param(
        lambda: four_singles_on_n0().job("e", cpu="2", running_on=["n1"]),
        conf(),
        set(),
        id="no-low-node-nothing-moves",
    ),
    pytest.param(
        lambda: Cluster().nodes_named("n", 2).job("a", cpu="1", running_on=["n0"]),
        conf(),
        set(),
        id="every-node-low-nothing-moves",
    ),
    pytest.param(
        four_singles_on_n0, conf("thresholds: {cpu: 20}"), set(), id="default-targets-100-nothing-is-high"
    ),
    pytest.param(
        four_singles_on_n0,
        conf("thresholds: {cpu: 20}\n          targetThresholds: {cpu: 50}\n          numberOfNodes: 1"),
        set(),
        id="no-more-low-nodes-than-numberOfNodes",
    ),
    pytest.param(
        lambda: _pdb_on(four_singles_on_n0(), "a-0"), conf(), {"b-0"}, id="pdb-budget-keeps-its-pod"
    ),
    pytest.param(
        lambda: _cooling(four_singles_on_n0(), "a-0"), conf(), {"b-0"}, id="cdp-cooldown-keeps-its-pod"
    ),
    pytest.param(
        lambda: _annotate(four_singles_on_n0(), "a-0", {"volcano.sh/preemptable": "false"}),
        conf(),
        {"b-0", "c-0"},
        id="non-preemptable-pod-is-never-named",
    ),
    pytest.param(
        four_singles_on_n0,
        conf("thresholds: {cpu: 20}\n          targetThresholds: {cpu: 50}\n          thresholdPriority: 50"),
        {"a-0"},
        id="thresholdPriority-keeps-pods-at-or-above-it",
    ),
    pytest.param(
        lambda: (
            Cluster()
            .nodes_named("n", 2)
            .job("g", priority="low", cpu="2", running_on=["n0"] * 4, min_member=4)
        ),
        conf(),
        set(),
        id="gang-at-its-minimum-keeps-every-pod",
    ),
    pytest.param(
        lambda: (
            Cluster()
            .nodes_named("n", 2)
            .job("g", priority="low", cpu="2", running_on=["n0"] * 4, min_member=3)
        ),
        conf(),
        {"g-0"},
        id="elastic-job-gives-up-only-pods-above-its-minimum",
    ),
    pytest.param(
        lambda: (
            Cluster()
            .node("n0", cpu=8)
            .node("n1", cpu=64)
            .job("g", priority="low", cpu="2", running_on=["n0"] * 4, min_member=4)
        ),
        conf("thresholds: {cpu: 20}\n          targetThresholds: {cpu: 20}"),
        {"g-0", "g-1", "g-2", "g-3"},
        id="gang-goes-whole-when-every-pod-is-named",
    ),
    pytest.param(
        lambda: (
            Cluster()
            .node("n0", cpu=16)
            .node("n1", cpu=8)
            .job("big", priority="low", cpu="6", running_on=["n0"])
            .job("small", priority="mid", cpu="2", running_on=["n0"] * 5, min_member=1)
        ),
        conf(),
        {"small-0", "small-1"},
        id="nodeFit-skips-a-pod-no-low-node-has-room-for",
    ),
    pytest.param(
        lambda: (
            Cluster()
            .node("n0", cpu=16)
            .node("n1", cpu=8)
            .job("big", priority="low", cpu="6", running_on=["n0"])
            .job("small", priority="mid", cpu="2", running_on=["n0"] * 5, min_member=1)
        ),
        conf("thresholds: {cpu: 20}\n          targetThresholds: {cpu: 50}\n          nodeFit: false"),
        {"big-0"},
        id="without-nodeFit-the-lowest-priority-pod-goes-whatever-its-size",
    ),
]


@pytest.mark.parametrize(("build", "text", "expected"), CASES)
def test_shuffle_evicts_what_rescheduling_names(
    build: Callable[[], Cluster], text: str, expected: set[str]
) -> None:
    assert evicted(run(build(), text)) == expected


def test_each_eviction_says_why_and_names_shuffle() -> None:
    result = run(four_singles_on_n0())
    [first, *_] = result.evictions
    assert first.reason == "shuffle" and first.preemptor is None
    assert (
        "lowNodeUtilization: node n0 is over its targetThresholds (cpu requested 100% of allocatable"
        in first.detail
    )


@pytest.mark.parametrize(
    ("timers", "expected", "next_mark"),
    [
        pytest.param({}, set(), NOW_S, id="first-session-starts-the-interval"),
        pytest.param({"rescheduling": NOW_S - 30}, set(), NOW_S - 30, id="within-the-interval"),
        pytest.param(DUE, {"a-0", "b-0"}, NOW_S, id="interval-passed"),
    ],
)
def test_the_interval_is_kept_on_the_sessions_clock(
    timers: dict[str, float], expected: set[str], next_mark: float
) -> None:
    result = run(four_singles_on_n0(), timers=timers)
    assert evicted(result) == expected
    assert result.timers["rescheduling"] == next_mark


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ("metricsPeriod: 5m", "argument 'metricsPeriod' is not supported"),
        (
            "strategies: [{name: highNodeUtilization}]",
            "strategies[0].name: 'highNodeUtilization' is not a strategy",
        ),
        (
            "strategies: [{name: lowNodeUtilization, params: {thresholds: {gpu: 5}}}]",
            "unknown resource 'gpu'",
        ),
        (
            "strategies: [{name: lowNodeUtilization, params: {thresholds: {cpu: 150}}}]",
            "thresholds.cpu must be a percent",
        ),
        (
            "strategies: [{name: lowNodeUtilization, params: {evictableNamespaces: x}}]",
            "unknown key(s) evictableNamespaces",
        ),
        ("interval: soon", "argument 'interval' must be a positive duration"),
        ("intervals: 5m", "unknown argument(s) intervals"),
    ],
    ids=[
        "metrics-source",
        "unknown-strategy",
        "unknown-resource",
        "percent-range",
        "unknown-param",
        "bad-interval",
        "typo",
    ],
)
def test_rescheduling_arguments_are_checked_at_load(arguments: str, says: str) -> None:
    text = f"""
actions: "allocate, shuffle"
tiers:
- plugins:
  - name: rescheduling
    arguments: {{{arguments}}}
"""
    with pytest.raises(ConfError, match=None) as err:
        load_conf(text)
    assert "plugin rescheduling" in str(err.value) and says in str(err.value)


def test_volcanos_documented_rescheduling_conf_loads() -> None:
    load_conf("""
actions: "enqueue, allocate, backfill, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
  - name: rescheduling
    arguments:
      interval: 5m
      strategies:
      - name: lowNodeUtilization
        params:
          thresholds: {cpu: 30, memory: 30, pods: 30}
          targetThresholds: {cpu: 60, memory: 60, pods: 60}
          thresholdPriorityClassName: system-cluster-critical
          nodeFit: true
""")


def _task(name: str) -> TaskInfo:
    return TaskInfo(name, "default", name, name, "", Resource(), 0, TaskStatus.RUNNING, "n0")


A, B, C = _task("a"), _task("b"), _task("c")


def _names(*tasks: TaskInfo) -> Callable[[], list[Victim]]:
    return lambda: [Victim(t, "x") for t in tasks]


@pytest.mark.parametrize(
    ("tiers", "expected"),
    [
        ([[_names(A), _names(B)]], ["a", "b"]),
        ([[_names(A), _names(A, C)]], ["a", "c"]),
        ([[_names()], [_names(C)]], ["c"]),
        ([[_names(A)], [_names(B)]], ["a"]),
        ([[], []], []),
    ],
    ids=[
        "union-within-a-tier",
        "a-pod-named-twice-once",
        "empty-tier-passes-on",
        "first-tier-with-victims-decides",
        "none",
    ],
)
def test_victim_tasks_rule(tiers: list[list[Callable[[], list[Victim]]]], expected: list[str]) -> None:
    assert [v.task.name for v in combine.union_first_tier(tiers)] == expected


def test_enabled_victim_false_switches_a_plugins_victims_off() -> None:
    text = conf().replace("  - name: rescheduling\n", "  - name: rescheduling\n    enabledVictim: false\n")
    assert "enabledVictim: false" in text
    assert evicted(run(four_singles_on_n0(), text)) == set()
