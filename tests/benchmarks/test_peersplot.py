"""bench_scale's figure of every system at one size: a bar per system per measure, the null binder's runs
as their mean, a system measured again in a later result replacing its earlier bar, one run with another
conf kept beside it under its conf's name."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from benchmarks.benchlib import peersplot

Row = dict[str, Any]


def backlog(system: str, size: int, rate: float, of_null: float | None = None) -> Row:
    row: Row = {"system": system, "size": size, "pods_per_second": rate}
    if of_null is not None:
        row["of_null"] = of_null
    return row


def trace_run(system: str, stranded: float, gangs: int, wait: float) -> Row:
    return {
        "system": system,
        "end": {"stranded_gpus": stranded},
        "gangs_whole": gangs,
        "gang_wait_ms_p50": wait,
    }


FIRST: Row = {
    "points": [{
        "backlog": [backlog("null", 1, 500), backlog("volcano-py", 1, 400, 0.7), backlog("null", 1, 600),
                    backlog("kai", 1, 30, 0.05), backlog("volcano-py", 20, 450)],
        "churn": [{"system": "null", "bind_ms_p50": 4}, {"system": "volcano-py-agent", "bind_ms_p50": 10}],
        "trace": {"runs": [trace_run("volcano-py", 95, 53, 27), trace_run("kai", 16, 68, 3347)]},
    }],
    "confs": {"volcano-py": "/repo/deploy/volcano-scheduler.conf"},
}  # fmt: skip
LATER: Row = {
    "points": [{
        "churn": [{"system": "volcano-py-agent", "bind_ms_p50": 6.5}],
        "trace": {"runs": [trace_run("volcano-py", 0, 68, 144)]},
    }],
    "confs": {"volcano-py": {"file": "/tmp/single-pods.conf", "text": "..."}},
}  # fmt: skip


def bars(panel_title: str) -> list[tuple[str, float, str]]:
    [found] = [bars for title, _, bars in peersplot.panels([FIRST, LATER]) if title == panel_title]
    return found


def test_each_measure_is_a_panel_of_bars_the_null_runs_as_their_mean() -> None:
    one_pod = bars("backlog, one-pod jobs: pods bound a second")
    assert one_pod == [
        ("null binder (2 runs)", 550.0, "550"),
        ("volcano-py", 400.0, "400 (0.70 of null)"),  # the run's own ratio, not the mean's
        ("kai", 30.0, "30 (0.05 of null)"),
    ]
    assert [name for name, _, _ in bars("backlog, gangs of 20: pods bound a second")] == ["volcano-py"]


def test_a_later_result_replaces_a_systems_bar_or_stands_beside_it_under_its_conf() -> None:
    assert bars("churn: create to bind, median ms") == [
        ("null binder (1 runs)", 4.0, "4.0"),
        ("volcano-py-agent", 6.5, "6.5"),
    ]
    stranded = bars("openb trace: GPUs stranded at the end")
    assert [(name, value) for name, value, _ in stranded] == [
        ("volcano-py", 95.0), ("kai", 16.0), ("volcano-py (single-pods.conf)", 0.0),
    ]  # fmt: skip


def test_the_figure_is_one_svg_with_a_bar_for_each() -> None:
    svg = peersplot.render([FIRST, LATER], "every system at 1,000 nodes")
    root = ET.fromstring(svg)
    rects = root.findall(".//{http://www.w3.org/2000/svg}rect")
    drawn = sum(len(panel[2]) for panel in peersplot.panels([FIRST, LATER]))
    assert len(rects) == drawn + 1  # and the background
    assert "every system at 1,000 nodes" in svg
    assert "(log scale)" in svg  # the latency panels
    assert "no measurement" in peersplot.render([], "empty")


def test_a_later_run_with_the_same_conf_file_replaces_the_bar() -> None:
    again: Row = {
        "points": [{"trace": {"runs": [trace_run("volcano-py", 2, 55, 30)]}}],
        "confs": {"volcano-py": {"file": "/repo/deploy/volcano-scheduler.conf", "text": "..."}},
    }
    [stranded] = [
        b for title, _, b in peersplot.panels([FIRST, again]) if title.endswith("stranded at the end")
    ]
    assert [(name, value) for name, value, _ in stranded] == [
        ("volcano-py", 2.0),
        ("kai", 16.0),
    ]  # in its place
