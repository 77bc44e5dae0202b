"""The Grafana dashboards and alert rules: well-formed, and reading only metrics volcano-py declares (the
scrape test in tests/integration/test_metrics_scrape.py then checks each has data on a running cluster)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from observability import RULES, load_dashboards, load_rules, metric_names, queries

from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics

_SUFFIXES = {"histogram": ("_bucket", "_count", "_sum", "_created"), "counter": ("_total", "_created")}


def declared_samples() -> set[str]:
    """Every sample name the two processes can export, from their registries' metric families."""
    names: set[str] = set()
    for registry in (SchedulerMetrics().registry, ControllerMetrics().registry):
        for family in registry.collect():
            names.add(family.name)
            names.update(family.name + suffix for suffix in _SUFFIXES.get(family.type, ()))
    return names


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        pytest.param("volcano_queue_share", {"volcano_queue_share"}, id="bare"),
        pytest.param(
            'histogram_quantile(0.99, sum by (le, action) (rate(x_bucket{a="b c"}[$__rate_interval])))',
            {"x_bucket"},
            id="functions-grouping-matchers-range",
        ),
        pytest.param("a and on(queue_name) b > 1e3 or absent(c)", {"a", "b", "c"}, id="binary-and-number"),
        pytest.param('sum without (job) (m{l=~"$queue"}) / 1000', {"m"}, id="without-and-variable"),
    ],
)
def test_metric_names_of_promql(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names


def test_every_query_reads_declared_metrics_only() -> None:
    declared = declared_samples()
    unknown = {
        where: sorted(metric_names(expr) - declared)
        for where, expr in queries()
        if metric_names(expr) - declared
    }
    assert unknown == {}
    assert all(metric_names(expr) for _, expr in queries()), "a query that names no metric shows nothing"


def test_dashboards_cover_what_an_operator_watches() -> None:
    boards = load_dashboards()
    assert sorted(boards) == [
        "volcano-py-controller.json", "volcano-py-gpus.json", "volcano-py-queues.json",
        "volcano-py-scheduler.json",
    ]  # fmt: skip
    read = {name for _, expr in queries() for name in metric_names(expr)}
    for needed in (
        "volcano_e2e_scheduling_latency_milliseconds_bucket",
        "volcano_action_scheduling_latency_milliseconds_bucket",
        "volcano_plugin_scheduling_latency_milliseconds_bucket", "volcano_bound_pods_total",
        "volcano_unschedule_job_count", "volcano_queue_allocated_scalar_resources",
        "volcano_queue_deserved_scalar_resources", "volcano_queue_capacity_scalar_resources",
        "volcano_hypernode_gpu_allocated", "volcano_hypernode_gpu_stranded", "volcano_pod_evictions_total",
        "volcano_controller_work_queue_depth", "volcano_job_completed_phase_count_total",
    ):  # fmt: skip
        assert needed in read, needed


@pytest.mark.parametrize("name", [path for path in load_dashboards()])
def test_dashboard_is_importable(name: str) -> None:
    board = load_dashboards()[name]
    assert board["uid"] == name.removesuffix(".json") and board["title"].startswith("volcano-py / ")
    assert {"name": "datasource", "type": "datasource"}.items() <= board["templating"]["list"][0].items()
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique within a dashboard"
    for panel in board["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}" and panel["targets"], panel["title"]
            refs = [t["refId"] for t in panel["targets"]]
            assert len(refs) == len(set(refs)), panel["title"]


def test_alert_rules_are_complete() -> None:
    rules = [rule for group in load_rules()["groups"] for rule in group["rules"]]
    assert sorted(r["alert"] for r in rules) == [
        "VolcanoPyNoBindsWhileJobsPending", "VolcanoPyQueueStarved", "VolcanoPySchedulerDown",
        "VolcanoPyWebhookErrors",
    ]  # fmt: skip
    for rule in rules:
        assert rule["for"].endswith("m") and rule["labels"]["severity"] in ("critical", "warning"), rule[
            "alert"
        ]
        assert rule["annotations"]["summary"] and rule["annotations"]["description"], rule["alert"]
        assert rule["expr"].count("(") == rule["expr"].count(")"), rule["alert"]


def test_promtool_checks_the_rules(promtool: Path) -> None:
    done = subprocess.run(
        [str(promtool), "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 4 rules found" in done.stdout


def test_alerts_fire_when_and_only_when_they_should(promtool: Path) -> None:
    """deploy/prometheus/rules_test.yaml: each alert on series that should and should not fire it."""
    done = subprocess.run(
        [str(promtool), "test", "rules", "rules_test.yaml"],
        cwd=RULES.parent, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_promtool_refuses_a_broken_rule(promtool: Path, tmp_path: Path) -> None:
    broken = tmp_path / "rules.yaml"
    broken.write_text(RULES.read_text().replace("sum by (webhook) (rate(", "sum by (webhook) (rate((", 1))
    done = subprocess.run(
        [str(promtool), "check", "rules", str(broken)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0 and "VolcanoPyWebhookErrors" in done.stdout + done.stderr
