"""bench_scale's pure parts: percentiles of samples and of the scheduler's cycle histogram, the stop rules
of a point that does not fit, and the SVG drawn from a run's JSON."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from argparse import Namespace
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from benchmarks.benchlib import scaleplot
from benchmarks.benchlib.limits import Memory, deadline_stop, memory_stop, parse_meminfo, scale_points
from benchmarks.benchlib.sharded import SYSTEM as SHARDED
from benchmarks.benchlib.sharded import nodeshards, scheduler_names, scheduler_of, shard_nodes
from benchmarks.benchlib.stats import (
    bracketed,
    bucket_delta,
    busy_cores,
    churn_windows,
    gang_ready_latencies,
    histogram_buckets,
    histogram_quantile,
    of_baseline,
    percentile,
    windows,
)
from benchmarks.scale import systems as scale_systems
from benchmarks.scale.backlog import backlog_bodies
from benchmarks.scale.bench import NotMeasured, StopPoint, guarded
from benchmarks.scale.systems import AGENT, pod_scheduler_names, supports
from volcano_py.api import constants as c
from volcano_py.api.shard import NodeShard, validate_nodeshard
from volcano_py.scheduler.core import load_conf

INF = float("inf")
SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 0.5, 0.0),
        ([7.0], 0.99, 7.0),
        ([3.0, 1.0, 2.0], 0.5, 2.0),
        ([float(v) for v in range(1, 101)], 0.99, 100.0),
        ([float(v) for v in range(1, 101)], 0.50, 51.0),
    ],
)
def test_percentile(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == expected


@pytest.mark.parametrize(
    ("buckets", "q", "expected"),
    [
        ({5.0: 0, 10.0: 10, 20.0: 20, INF: 20}, 0.5, 10.0),  # the rank lands on a bucket's top
        ({5.0: 0, 10.0: 10, 20.0: 20, INF: 20}, 0.99, 19.8),  # interpolated inside (10, 20]
        ({5.0: 4, 10.0: 4, INF: 4}, 0.5, 2.5),  # inside the first bucket, from 0
        ({5.0: 0, 10.0: 1, INF: 10}, 0.99, 10.0),  # in +Inf: the highest finite bound
        ({5.0: 0, INF: 0}, 0.5, None),  # nothing observed
        ({}, 0.5, None),
    ],
)
def test_histogram_quantile(buckets: dict[float, float], q: float, expected: float | None) -> None:
    value = histogram_quantile(q, buckets)
    assert value == (pytest.approx(expected) if expected is not None else None)


def test_cycle_quantiles_from_two_scrapes_of_the_schedulers_histogram() -> None:
    registry = CollectorRegistry()
    cycle = Histogram(
        "e2e_scheduling_latency_milliseconds",
        "",
        namespace="volcano",
        buckets=[5, 10, 20, 40],
        registry=registry,
    )
    for ms in (3, 4, 30):  # before the window
        cycle.observe(ms)
    before = histogram_buckets(
        generate_latest(registry).decode(), "volcano_e2e_scheduling_latency_milliseconds"
    )
    for ms in [15] * 9 + [35]:  # in the window: nine cycles in (10, 20], one in (20, 40]
        cycle.observe(ms)
    after = histogram_buckets(
        generate_latest(registry).decode(), "volcano_e2e_scheduling_latency_milliseconds"
    )
    window = bucket_delta(before, after)
    assert window == {5.0: 0, 10.0: 0, 20.0: 9, 40.0: 10, INF: 10}
    assert histogram_quantile(0.5, window) == pytest.approx(15.0 + 5.0 / 9)
    assert histogram_quantile(0.99, window) == pytest.approx(38.0)  # 20 + 20 * 0.9 of the last cycle


def test_histogram_buckets_of_a_metric_absent_and_a_restarted_process() -> None:
    assert histogram_buckets("# nothing here\n", "volcano_e2e_scheduling_latency_milliseconds") == {}
    # A process restarted between two scrapes counts from zero: no negative observations.
    assert bucket_delta({5.0: 8, INF: 9}, {5.0: 1, INF: 2}) == {5.0: 0, INF: 0}


def test_windows_groups_samples_by_time_from_the_start() -> None:
    samples = [(99.0, 1.0), (100.0, 2.0), (159.9, 3.0), (160.0, 4.0), (290.0, 5.0)]
    assert windows(samples, start=100.0, width=60.0) == [[2.0, 3.0], [4.0], [], [5.0]]
    assert windows([], start=0.0, width=60.0) == []


def test_churn_windows_per_window_of_arrivals() -> None:
    created = {"a": 100.0, "b": 110.0, "c": 130.0, "d": 135.0, "late": 170.0}  # 30 s windows from 100
    bound = {"a": 100.5, "b": 112.0, "c": 130.2}  # d never bound
    cycles = [
        {10.0: 0, 100.0: 0, INF: 0},  # scraped at the start
        {10.0: 4, 100.0: 4, INF: 4},  # four cycles of under 10 ms in the first window
        {10.0: 4, 100.0: 6, INF: 6},  # two of 10-100 ms in the second
    ]
    lines = churn_windows(created, bound, cycles, [1.5, 2.5], start=100.0, width=30.0, count=2, filled=1000)
    assert lines == [
        {"window": 0, "pods_in_cluster": 1002, "created": 2, "bind_ms_p50": 2000.0, "bind_ms_p99": 2000.0,
         "unbound": 0, "cycle_ms_p50": 5.0, "cycle_ms_p99": 9.9, "load_average": 1.5},
        {"window": 1, "pods_in_cluster": 1004, "created": 2, "bind_ms_p50": 200.0, "bind_ms_p99": 200.0,
         "unbound": 1, "cycle_ms_p50": 55.0, "cycle_ms_p99": 99.1, "load_average": 2.5},
    ]  # fmt: skip
    # "late" arrived after the last whole window (count=2): its partial window is not reported.


MEMINFO = "MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:    6000000 kB\n"


def test_parse_meminfo_and_the_memory_rule() -> None:
    memory = parse_meminfo(MEMINFO)
    assert memory.used_fraction == pytest.approx(0.75)
    assert memory_stop(memory, 0.85) is None
    reason = memory_stop(memory, 0.70)
    assert reason is not None
    assert (
        "75% used" in reason
        and "5.7 GiB available of 22.9 GiB" in reason
        and "--max-memory-used 70%" in reason
    )
    with pytest.raises(ValueError, match="MemAvailable"):
        parse_meminfo("MemTotal: 1 kB\n")
    assert Memory(0, 0).used_fraction == 0.0


@pytest.mark.parametrize(
    ("done", "wanted", "elapsed", "expected"),
    [
        (10, 10, 9999.0, None),  # done, however long it took
        (5, 10, 599.0, None),  # not done, but within the deadline
        (5_000, 10_000, 600.0, "only 5,000 of 10,000 pods created within the 600 s deadline"),
    ],
)
def test_deadline_rule(done: int, wanted: int, elapsed: float, expected: str | None) -> None:
    assert deadline_stop("pods created", done, wanted, elapsed, 600.0) == expected


@pytest.mark.parametrize(
    ("nodes", "pods", "expected"),
    [
        ([1000, 2000, 5000], [10_000, 50_000, 100_000], [(1000, 10_000), (2000, 50_000), (5000, 100_000)]),
        ([1000], [10_000, 50_000], [(1000, 10_000), (1000, 50_000)]),
        ([1000, 2000], [10_000], [(1000, 10_000), (2000, 10_000)]),
    ],
)
def test_scale_points(nodes: list[int], pods: list[int], expected: list[tuple[int, int]]) -> None:
    assert scale_points(nodes, pods) == expected


@pytest.mark.parametrize(
    ("nodes", "pods", "message"),
    [
        ([1, 2], [1, 2, 3], "--nodes has 2 values and --pods 3"),
        ([0], [10], "must be positive"),
    ],
)
def test_scale_points_refused(nodes: list[int], pods: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        scale_points(nodes, pods)


def _result() -> dict[str, Any]:
    def backlog(system: str, pods: int, cpu: float) -> dict[str, Any]:
        return {"system": system, "shape": f"{pods}x1", "size": 1, "cpu_ms_per_pod": cpu,
                "scheduler_peak_rss_mib": 200.0, "last_bind_s": 10.0}  # fmt: skip

    return {
        "systems": ["null", "volcano-py", "volcano"],
        "points": [
            {
                "nodes": 100,
                "pods": 1000,
                "backlog": [backlog("null", 1000, 1.0), backlog("volcano-py", 1000, 2.0)],
                "restart": [
                    {"system": "volcano-py", "component": "scheduler", "first_bind_s": 5.0, "rss_mib": 300.0},
                    {"system": "volcano", "component": "scheduler", "first_bind_s": 9.0, "rss_mib": 150.0},
                    {"system": "volcano-py", "component": "controller", "first_pod_s": 3.0},
                ],
                "churn": [
                    {"system": "volcano-py", "cycle_ms_p99": 42.0, "bind_ms_p99": 900.0, "windows": [
                        {"pods_in_cluster": 1100, "cycle_ms_p99": 40.0},
                        {"pods_in_cluster": 1200, "cycle_ms_p99": None},
                    ]},
                ],
            },
            {
                "nodes": 200,
                "pods": 2000,
                "backlog": [backlog("volcano-py", 2000, 3.0)],
                "restart": [
                    {"system": "volcano-py", "component": "scheduler", "first_bind_s": 7.0, "rss_mib": 400.0},
                    # Volcano did not bind the probe within the deadline: no point there.
                    {"system": "volcano", "component": "scheduler", "first_bind_s": None, "rss_mib": 160.0},
                ],
                "stopped": "only 1,000 of 2,000 running pods created within the 60 s deadline",
            },
        ],
        "stopped": "only 1,000 of 2,000 running pods created within the 60 s deadline",
    }  # fmt: skip


def _charts(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    return {
        chart.attrib["data-plot"]: chart for chart in root.iter(f"{SVG}svg") if "data-plot" in chart.attrib
    }


def test_plot_draws_each_measure_against_pods_every_system_on_the_same_axes() -> None:
    svg = scaleplot.render(_result())
    charts = _charts(svg)
    restart = charts["scheduler restart"]
    lines = {line.attrib["data-series"]: line.attrib["points"] for line in restart.iter(f"{SVG}polyline")}
    assert set(lines) == {"volcano-py", "volcano"}
    assert len(lines["volcano-py"].split()) == 2  # both points
    assert len(lines["volcano"].split()) == 1  # the point without a bind is left out
    assert len(list(restart.iter(f"{SVG}circle"))) == 3  # a dot per point: a lone point shows
    # One panel per job size, joining the points of every size of cluster.
    backlog = charts["backlog 1-pod: CPU"]
    lines = {line.attrib["data-series"]: line.attrib["points"] for line in backlog.iter(f"{SVG}polyline")}
    assert {name: len(points.split()) for name, points in lines.items()} == {"null": 1, "volcano-py": 2}
    # A system has one colour on the whole page, whichever systems a panel shows.
    colours = {
        (title, line.attrib["data-series"]): line.attrib["stroke"]
        for title, chart in charts.items()
        for line in chart.iter(f"{SVG}polyline")
    }
    assert colours[("scheduler restart", "volcano-py")] == colours[("backlog 1-pod: CPU", "volcano-py")]
    assert colours[("scheduler restart", "volcano")] != colours[("backlog 1-pod: CPU", "null")]
    # Churn over the run against the point's pods; within a point against the pods in the cluster per
    # window, a window without a figure left out.
    assert len(next(charts["churn: bind latency"].iter(f"{SVG}polyline")).attrib["points"].split()) == 1
    assert len(next(charts["churn at 100 nodes"].iter(f"{SVG}polyline")).attrib["points"].split()) == 1
    assert "churn at 200 nodes" not in charts  # that point has no churn
    assert "churn: cycle time" in charts and "controller restart" in charts
    caption = ET.fromstring(svg).find(f"{SVG}text")
    assert caption is not None and caption.text is not None
    assert "100 nodes / 1,000 pods, 200 nodes / 2,000 pods" in caption.text
    assert "stopped: only 1,000 of 2,000 running pods" in caption.text


def test_plot_of_a_result_without_measures_says_so() -> None:
    svg = scaleplot.render({"points": [], "stopped": "the machine's memory is 90% used"})
    assert _charts(svg) == {}
    texts = [text.text for text in ET.fromstring(svg).iter(f"{SVG}text")]
    assert texts == [
        "bench_scale: no point (stopped: the machine's memory is 90% used)",
        "no measurement in this result",
    ]


def test_a_gang_pod_waits_from_its_gangs_last_pod_created() -> None:
    created = {"g-0": 10.0, "g-1": 10.4, "h-0": 11.0}
    bound = {"g-0": 10.6, "g-1": 10.6, "h-0": 11.2}
    gang_of = {"g-0": "g", "g-1": "g", "h-0": "h"}
    assert [round(v) for v in gang_ready_latencies(created, bound, gang_of)] == [200, 200, 200]
    assert gang_ready_latencies(created, {"g-0": 10.6}, gang_of) == [pytest.approx(200.0)]


@pytest.mark.parametrize(
    ("systems", "expected"),
    [
        (["null", "volcano-py", "volcano"], ["null", "volcano-py", "null", "volcano", "null"]),
        (["volcano-py", "null"], ["null", "volcano-py", "null"]),
        (["null"], ["null"]),
        (["volcano-py", "volcano"], ["volcano-py", "volcano"]),
        (["null", "volcano-py", SHARDED], ["null", "volcano-py", "null", SHARDED, "null"]),
    ],
)
def test_the_null_binder_runs_on_either_side_of_each_system(systems: list[str], expected: list[str]) -> None:
    assert bracketed(systems) == expected


def test_each_system_is_rated_against_the_null_runs_beside_it() -> None:
    lines: list[dict[str, Any]] = [
        {"system": "null", "pods_per_second": 800.0},
        {"system": "volcano-py", "pods_per_second": 500.0},
        {"system": "null", "pods_per_second": 450.0},
        {"system": "volcano", "pods_per_second": 90.0},
    ]
    of_baseline(lines)
    assert lines[1]["of_null"] == 0.8 and lines[1]["null_pods_per_second"] == [800.0, 450.0]
    # The last null run has not happened yet: the one before is all there is.
    assert lines[3]["of_null"] == 0.2 and lines[3]["null_pods_per_second"] == [450.0]
    assert "of_null" not in lines[0] and "of_null" not in lines[2]


def test_a_system_not_measured_gets_no_rate_and_the_ones_after_it_keep_theirs() -> None:
    lines: list[dict[str, Any]] = [
        {"system": "null", "pods_per_second": 200.0},
        {"system": "volcano", "pods": 10_000, "bound": 0, "not_measured": "its controller was late"},
        {"system": "kai", "pods_per_second": 20.0},
    ]
    of_baseline(lines)
    assert "of_null" not in lines[1]
    assert lines[2]["of_null"] == 0.1


async def test_a_late_controller_skips_its_system_and_full_memory_still_stops_the_point() -> None:
    """The deadline raises what the caller names (the backlog's controller stage: NotMeasured, so the run
    goes on with the next system); a machine out of memory stops the point whatever the caller named."""
    never = asyncio.Event()
    late = Namespace(args=Namespace(deadline=0.0, max_memory_used=1.0))

    async def none_done() -> int:
        return 0

    with pytest.raises(NotMeasured, match="only 0 of 5 PodGroups made within the 0 s deadline"):
        await guarded(late, never.wait(), "PodGroups made", 5, none_done, late=NotMeasured)  # type: ignore[arg-type]
    full = Namespace(args=Namespace(deadline=3600.0, max_memory_used=0.0))
    with pytest.raises(StopPoint):
        await guarded(full, never.wait(), "PodGroups made", 5, none_done, late=NotMeasured)  # type: ignore[arg-type]


def test_busy_cores_over_the_last_window_of_samples() -> None:
    # (seconds, CPU seconds so far) of the control plane, sampled each second.
    samples = [(0.0, 0.0), (1.0, 1.5), (2.0, 3.0), (3.0, 3.2), (4.0, 3.4)]
    assert busy_cores(samples, 2.0) == pytest.approx(0.2)  # the last two seconds, after a busy start
    assert busy_cores(samples, 4.0) == pytest.approx(0.85)
    assert busy_cores(samples, 5.0) is None  # not sampled that long yet
    assert busy_cores([], 1.0) is None


def test_the_sharded_system_splits_the_nodes_and_the_jobs_in_two() -> None:
    shards = nodeshards([f"node-{i}" for i in range(5)])
    assert [(s["metadata"]["name"], s["spec"]["nodesDesired"]) for s in shards] == [
        ("shard-a", ["node-0", "node-1", "node-2"]),
        ("shard-b", ["node-3", "node-4"]),
    ]
    assert all(validate_nodeshard(NodeShard.model_validate(shard)) == [] for shard in shards)
    assert shard_nodes(["n0", "n1", "n2", "n3"]) == {
        "volcano": frozenset({"n0", "n1"}),
        "volcano-b": frozenset({"n2", "n3"}),
    }
    names = scheduler_names(SHARDED)
    assert names == ("volcano", "volcano-b") and scheduler_names("volcano-py") == ("volcano",)
    # Job j's pods go to names[j % 2]: the one-pod jobs alternate, a gang stays with one scheduler.
    assert [scheduler_of(f"job{j}-0", names) for j in range(4)] == ["volcano", "volcano-b"] * 2
    assert {scheduler_of(f"job3-{i}", names) for i in range(20)} == {"volcano-b"}


@pytest.mark.parametrize(
    ("system", "size", "expected"),
    [
        ("volcano-py", 1, True),
        ("volcano-py", 20, True),
        (AGENT, 1, True),
        (AGENT, 20, False),  # a gang is the batch scheduler's
        ("kube-scheduler", 1, True),
        ("kube-scheduler", 500, False),
        ("coscheduling", 500, True),
    ],
)
def test_which_systems_run_which_job_sizes(system: str, size: int, expected: bool) -> None:
    assert supports(system, size) is expected


def test_the_agents_pods_are_addressed_to_it_and_the_others_keep_theirs() -> None:
    assert pod_scheduler_names(AGENT) == ("agent-scheduler",)
    assert pod_scheduler_names("volcano-py") == ("volcano",)
    assert pod_scheduler_names(SHARDED) == ("volcano", "volcano-b")
    # A one-pod backlog job for the agent: no PodGroup, its schedulerName the agent's.
    ((path, pod),) = backlog_bodies("ns", 1, 1, False, pod_scheduler_names(AGENT))
    assert path.endswith("/namespaces/ns/pods") and pod["spec"]["schedulerName"] == "agent-scheduler"
    assert c.KUBE_GROUP_NAME_KEY not in (pod["metadata"].get("annotations") or {})


def test_shipped_conf_is_each_charts_own_and_the_file_volcano_py_ships_parses(tmp_path: Path) -> None:
    assert scale_systems.scheduler_conf("builtin", "volcano-py", None) is None
    ours = scale_systems.scheduler_conf("shipped", "volcano-py", None)
    assert ours == scale_systems.SHIPPED_CONF
    assert ours is not None
    names = set(load_conf(ours.read_text()).plugin_names())
    assert {"binpack", "cpsat"} <= names
    theirs = scale_systems.scheduler_conf("shipped", "volcano", tmp_path)
    assert theirs == tmp_path / "installer/helm/chart/volcano/config/volcano-scheduler.conf"
    assert scale_systems.scheduler_conf("shipped", "kai", tmp_path) is None  # other families: their default
    with pytest.raises(ValueError, match="--volcano-src"):
        scale_systems.scheduler_conf("shipped", "volcano", None)
