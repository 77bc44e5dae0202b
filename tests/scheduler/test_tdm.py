"""tdm: revocable nodes take preemptable pods only inside their zone's window, and shuffle evicts those pods
once it closes. Sessions run at the harness's NOW, 12:00 UTC; node n1 is in revocable zone ``rz``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.scheduler.evict_harness import NOW, Cluster
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.arguments import ConfError
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.task import timestamp
from volcano_py.scheduler.plugins.tdm_rules import Window, max_evictions

NOW_S = timestamp(NOW)
OPEN, CLOSED = "11:00-13:00", "13:00-14:00"
PREEMPTABLE = {"volcano.sh/preemptable": "true"}


def conf(
    window: str = OPEN, period: str = "1m", actions: str = "enqueue, allocate, backfill, shuffle"
) -> str:
    return f"""
actions: "{actions}"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: tdm
    arguments:
      tdm.revocable-zone.rz: "{window}"
      tdm.evict.period: {period}
- plugins:
  - name: predicates
  - name: nodeorder
"""


def revocable(cluster: Cluster, node: str = "n1", zone: str = "rz") -> Cluster:
    next(n for n in cluster.nodes if n["metadata"]["name"] == node)["metadata"]["labels"][
        "volcano.sh/revocable-zone"
    ] = zone
    return cluster


def run(cluster: Cluster, text: str, timers: Mapping[str, float] | None = None) -> SessionResult:
    return run_session(cluster.snapshot(), load_conf(text), NOW, timers=timers)


def bound(result: SessionResult) -> dict[str, str]:
    return {b.name: b.node for b in result.binds}


# --- windows and budgets ----------------------------------------------------------------------------------


def _at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 1, 1, hour, minute, second, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "moment", "is_open"),
    [
        ("10:00-21:00", _at(12), True),
        ("10:00-21:00", _at(9, 59, 59), False),
        ("10:00-21:00", _at(21, 0, 0), True),  # the end minute's first second is still inside, as Volcano's
        ("10:00-21:00", _at(21, 0, 1), False),
        ("22:00-06:00", _at(23), True),
        ("22:00-06:00", _at(3), True),  # Volcano closes an over-midnight window at midnight; here at its end
        ("22:00-06:00", _at(12), False),
        ("8:30-9:00", _at(8, 45), True),
        ("07:00-07:00", _at(3), True),  # start == end: all day
    ],
)
def test_window_open_at(text: str, moment: datetime, is_open: bool) -> None:
    assert Window.parse(text).open_at(moment) is is_open


@pytest.mark.parametrize("text", ["10:00 - 12:00", "10-12", "24:00-01:00", "10:60-11:00", "10:00"])
def test_window_refuses_what_is_not_hh_mm(text: str) -> None:
    with pytest.raises(ValueError, match=r"HH:MM-HH:MM|hours go to 23"):
        Window.parse(text)


@pytest.mark.parametrize(
    ("annotations", "tasks", "running", "finished", "cap"),
    [
        ({}, 4, 4, 0, 1),
        ({"volcano.sh/jdb-min-available": "2"}, 4, 4, 0, 2),
        ({"volcano.sh/jdb-min-available": "50%"}, 5, 5, 0, 2),  # 50% of 5 rounds up to 3
        ({"volcano.sh/jdb-min-available": "4"}, 4, 3, 0, 0),  # already below: none (Volcano: one)
        ({"volcano.sh/jdb-max-unavailable": "2"}, 4, 4, 0, 2),
        ({"volcano.sh/jdb-max-unavailable": "2"}, 4, 3, 0, 1),  # one already not running
        ({"volcano.sh/jdb-max-unavailable": "2"}, 4, 2, 2, 2),  # finished pods are not unavailable
        ({"volcano.sh/jdb-max-unavailable": "25%"}, 4, 4, 0, 1),
    ],
)
def test_max_evictions_follows_the_jobs_budget(
    annotations: dict[str, str], tasks: int, running: int, finished: int, cap: int
) -> None:
    assert max_evictions(annotations, tasks=tasks, running=running, finished=finished) == cap


# --- placement --------------------------------------------------------------------------------------------


def one_pending(annotations: dict[str, str] | None = None, cpu: str = "2") -> Cluster:
    cluster = revocable(Cluster().nodes_named("n", 2, cpu=4)).job("filler", cpu="4", running_on=["n0"])
    return cluster.job("p", cpu=cpu, pending=1, created=1, pod_annotations=annotations)


@pytest.mark.parametrize(
    ("build", "window", "placed", "says"),
    [
        pytest.param(
            lambda: one_pending(PREEMPTABLE), OPEN, {"p-0": "n1"}, None, id="preemptable-inside-window"
        ),
        pytest.param(
            lambda: one_pending({"volcano.sh/revocable-zone": "*"}), OPEN, {"p-0": "n1"}, None, id="zone-star"
        ),
        pytest.param(
            lambda: one_pending(PREEMPTABLE),
            CLOSED,
            {},
            "1 node in revocable zone rz outside its window 13:00-14:00 (UTC)",
            id="preemptable-outside-window",
        ),
        pytest.param(
            lambda: one_pending(),
            OPEN,
            {},
            "1 node revocable (zone rz), and the pod is not volcano.sh/preemptable",
            id="ordinary-pod-never-on-revocable",
        ),
        pytest.param(
            lambda: one_pending({"volcano.sh/revocable-zone": "rz"}),
            OPEN,
            {},
            "is not volcano.sh/preemptable",
            id="a-named-zone-gives-no-leave-as-in-volcano",
        ),
        pytest.param(
            lambda: revocable(one_pending(PREEMPTABLE), zone="other"),
            OPEN,
            {},
            "in revocable zone other, which has no tdm.revocable-zone.other window",
            id="zone-without-window",
        ),
    ],
)
def test_revocable_nodes_take_preemptable_pods_only_inside_the_window(
    build: Callable[[], Cluster], window: str, placed: dict[str, str], says: str | None
) -> None:
    result = run(build(), conf(window))
    assert bound(result) == placed
    if says is not None:
        assert says in result.explanations["default/p"].message


def test_an_open_revocable_node_is_preferred_by_preemptable_pods() -> None:
    cluster = revocable(Cluster().nodes_named("n", 2, cpu=4)).job(
        "p", cpu="1", pending=1, pod_annotations=PREEMPTABLE
    )
    assert bound(run(cluster, conf(OPEN))) == {"p-0": "n1"}


def test_jobs_not_preemptable_go_first() -> None:
    cluster = Cluster().nodes_named("n", 1, cpu=4)
    cluster.job("spot", cpu="4", pending=1, created=0).job("steady", cpu="4", pending=1, created=5)
    cluster.podgroups[0]["metadata"]["annotations"] = PREEMPTABLE
    assert bound(run(cluster, conf(OPEN))) == {"steady-0": "n0"}


# --- evictions --------------------------------------------------------------------------------------------


def running_on_rz(pods: int = 1, min_member: int = 1, podgroup: dict[str, str] | None = None) -> Cluster:
    cluster = revocable(Cluster().nodes_named("n", 2, cpu=8))
    cluster.job("spot", cpu="1", running_on=["n1"] * pods, min_member=min_member, pod_annotations=PREEMPTABLE)
    cluster.job("steady", cpu="1", running_on=["n0"])  # an ordinary pod on an ordinary node stays
    if podgroup:
        cluster.podgroups[0]["metadata"]["annotations"] = podgroup
    return cluster


@pytest.mark.parametrize(
    ("build", "window", "timers", "evicted"),
    [
        pytest.param(running_on_rz, CLOSED, None, {"spot-0"}, id="window-closed-evicts"),
        pytest.param(running_on_rz, OPEN, None, set(), id="window-open-keeps"),
        pytest.param(running_on_rz, CLOSED, {"tdm": NOW_S - 30}, set(), id="within-evict-period"),
        pytest.param(running_on_rz, CLOSED, {"tdm": NOW_S - 61}, {"spot-0"}, id="evict-period-passed"),
        pytest.param(lambda: running_on_rz(3), CLOSED, None, {"spot-0"}, id="one-pod-per-job-per-round"),
        pytest.param(
            lambda: running_on_rz(3, podgroup={"volcano.sh/jdb-max-unavailable": "2"}),
            CLOSED,
            None,
            {"spot-0", "spot-1"},
            id="the-jobs-budget-sets-the-round",
        ),
        pytest.param(
            lambda: running_on_rz(3, min_member=3), CLOSED, None, set(), id="a-gang-at-its-minimum-stays"
        ),
    ],
)
def test_shuffle_evicts_preemptable_pods_once_the_window_closes(
    build: Callable[[], Cluster], window: str, timers: dict[str, float] | None, evicted: set[str]
) -> None:
    result = run(build(), conf(window), timers)
    assert {e.name for e in result.evictions} == evicted
    for eviction in result.evictions:
        assert eviction.reason == "shuffle"
        assert eviction.detail == "tdm: revocable zone rz's window 13:00-14:00 (UTC) has closed"
    assert result.timers.get("tdm") == (NOW_S if evicted or timers is None else timers["tdm"])


def preemption(preemptor: dict[str, str]) -> Cluster:
    cluster = revocable(Cluster().nodes_named("n", 2, cpu=4))
    cluster.job("spot", priority="low", cpu="4", running_on=["n0"], pod_annotations=PREEMPTABLE)
    cluster.job("zone", priority="low", cpu="4", running_on=["n1"], pod_annotations=PREEMPTABLE)
    return cluster.job("urgent", priority="high", cpu="4", pending=1, created=1, pod_annotations=preemptor)


@pytest.mark.parametrize(
    ("preemptor", "evicted"),
    [
        ({"volcano.sh/preemptable": "false"}, {"spot-0"}),  # only the preemptable pod on an ordinary node
        ({}, set()),  # a pod is preemptable by default, and preemptable pods preempt nothing under tdm
    ],
    ids=["non-preemptable-preemptor", "preemptable-preemptor"],
)
def test_preemption_under_tdm(preemptor: dict[str, str], evicted: set[str]) -> None:
    result = run(preemption(preemptor), conf(OPEN, actions="enqueue, allocate, preempt"))
    assert {e.name for e in result.evictions} == evicted


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"tdm.revocable-zone.rz": "10:00"}, "argument 'tdm.revocable-zone.rz': '10:00' is not a window"),
        ({"tdm.evict.period": "soon"}, "argument 'tdm.evict.period' must be a positive duration"),
        ({"tdm.evict.max-num": "2"}, "unknown argument(s) tdm.evict.max-num"),
        ({"tdm.revocable-zone.": "10:00-11:00"}, "names no zone"),
    ],
)
def test_tdm_arguments_are_checked_at_load(arguments: dict[str, Any], says: str) -> None:
    body = "".join(f"      {key}: {value!r}\n" for key, value in arguments.items())
    with pytest.raises(ConfError) as err:
        load_conf(f'actions: "allocate, shuffle"\ntiers:\n- plugins:\n  - name: tdm\n    arguments:\n{body}')
    assert "plugin tdm" in str(err.value) and says in str(err.value)
