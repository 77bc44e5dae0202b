"""The scheduler's node-load collector: Volcano's two queries asked of Prometheus's HTTP API, each node's
reading taken from the series whose ``instance`` is its name, 0% for a node without one, and the last
readings kept (and the cache not bumped) when Prometheus fails. Served by a local aiohttp server answering as
Prometheus does; the real one is exercised by tests/integration/test_scheduler_usage.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from structlog.testing import capture_logs

from volcano_py.scheduler.core import MetricsConf, NodeUsage
from volcano_py.scheduler.runtime.cycle import default_core
from volcano_py.scheduler.runtime.node_metrics import (
    CPU_QUERY,
    MEMORY_QUERY,
    MetricsError,
    NodeMetricsCollector,
    vector_values,
)

AT = datetime(2026, 1, 1, 12, tzinfo=UTC)
METRICS = "metrics: {type: prometheus, address: 'http://prometheus:9090'}\n"
Answers = dict[str, tuple[int, Any]]


def vector(*series: tuple[str, str]) -> dict[str, Any]:
    result = [{"metric": {"instance": name}, "value": [1767268800.0, value]} for name, value in series]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(vector(("n0", "93.5"), ("n1", "12")), {"n0": 93.5, "n1": 12.0}, id="two-nodes"),
        pytest.param(vector(("n0", "50"), ("n0", "70")), {"n0": 50.0}, id="first-series-of-an-instance"),
        pytest.param(vector(("n0", "NaN"), ("n1", "x")), {}, id="no-number-no-value"),
        pytest.param({"status": "error", "errorType": "bad_data", "error": "parse error"}, "bad_data",
                     id="error-answer"),
        pytest.param({"status": "success", "data": {"resultType": "matrix", "result": []}}, "instant vector",
                     id="not-a-vector"),
    ],
)  # fmt: skip
def test_vector_values(answer: dict[str, Any], expected: dict[str, float] | str) -> None:
    if isinstance(expected, str):
        with pytest.raises(MetricsError, match=expected):
            vector_values(answer)
        return
    assert vector_values(answer) == expected


@pytest.fixture
async def prometheus() -> AsyncIterator[Callable[[Answers], Awaitable[tuple[str, list[str]]]]]:
    """Start a server answering ``/api/v1/query`` per query text; returns its address and the queries."""
    runners: list[web.AppRunner] = []

    async def start(answers: Answers) -> tuple[str, list[str]]:
        asked: list[str] = []

        async def query(request: web.Request) -> web.Response:
            text = request.query["query"]
            asked.append(text)
            status, body = answers[text]
            if isinstance(body, str):
                return web.Response(status=status, text=body)
            return web.json_response(body, status=status)

        app = web.Application()
        app.router.add_get("/prom/api/v1/query", query)
        runner = web.AppRunner(app)
        await runner.setup()
        runners.append(runner)
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return f"http://127.0.0.1:{runner.addresses[0][1]}/prom", asked

    yield start
    for runner in runners:
        await runner.cleanup()


async def test_a_round_reads_every_node_and_keeps_the_last_readings_on_failure(
    prometheus: Callable[[Answers], Awaitable[tuple[str, list[str]]]],
) -> None:
    answers: Answers = {
        CPU_QUERY: (200, vector(("n0", "93.5"), ("n1", "12"), ("gone", "50"))),
        MEMORY_QUERY: (200, vector(("n0", "40"))),
    }
    address, asked = await prometheus(answers)
    published: list[dict[str, NodeUsage]] = []
    collector = NodeMetricsCollector(
        lambda: None, lambda: ["n0", "n1", "n2"], published.append, clock=lambda: AT
    )
    conf = MetricsConf("prometheus", address, timedelta(seconds=1))
    async with aiohttp.ClientSession() as http:
        assert await collector.collect_once(http, conf)
        assert asked == [CPU_QUERY, MEMORY_QUERY]
        assert published == [
            {"n0": NodeUsage(93.5, 40.0, AT), "n1": NodeUsage(12.0, 0.0, AT), "n2": NodeUsage(0.0, 0.0, AT)}
        ]
        answers[CPU_QUERY] = (503, "Service Unavailable")
        assert not await collector.collect_once(http, conf)
        answers[CPU_QUERY] = (400, {"status": "error", "errorType": "bad_data", "error": "unknown function"})
        assert not await collector.collect_once(http, conf)
        assert len(published) == 1
        down = MetricsConf("prometheus", "http://127.0.0.1:1", timedelta(seconds=1))
        assert not await collector.collect_once(http, down)
    assert len(published) == 1


def test_volcanos_queries() -> None:
    # Volcano's per-node queries (pkg/scheduler/metrics/source/metrics_client_prometheus.go) without the
    # instance="<node>" matcher: the same series, asked for all nodes at once.
    assert CPU_QUERY == (
        'avg_over_time(clamp_min(100 - (avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[5m])) '
        "* 100), 0)[10m:30s])"
    )
    assert MEMORY_QUERY == (
        "100*avg_over_time(((1-node_memory_MemAvailable_bytes/node_memory_MemTotal_bytes))[10m:30s])"
    )


@pytest.mark.parametrize(
    ("metrics", "warned"),
    [pytest.param("", True, id="usage-without-metrics"), pytest.param(METRICS, False, id="with-metrics")],
)
def test_a_usage_conf_without_metrics_is_loaded_with_a_warning(metrics: str, warned: bool) -> None:
    text = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: usage\n' + metrics
    with capture_logs() as logs:
        conf = default_core(("volcano",)).load_conf(text)
    assert conf.plugin_names() == ["usage"]
    assert any("no metrics section" in entry["event"] for entry in logs) is warned
