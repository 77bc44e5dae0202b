"""The metrics server as an operator sees it: Volcano's metric names over HTTP, health and readiness."""

import aiohttp
import pytest

from volcano_py.kube.health import MetricsServer
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics


async def fetch(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}{path}") as resp:
        return resp.status, await resp.text()


async def test_metrics_health_and_readiness_over_http() -> None:
    metrics = SchedulerMetrics()
    ready = {"value": False}
    server = MetricsServer(metrics, host="127.0.0.1", port=0, ready=lambda: ready["value"])
    await server.start()
    try:
        metrics.e2e_scheduling_latency.observe(12.5)
        metrics.action_scheduling_latency.labels("allocate").observe(3)
        metrics.plugin_scheduling_latency.labels("gang", "OnSessionOpen").observe(1)
        metrics.bound_pods.inc(3)
        metrics.set_queue_resources(
            "allocated", "default", {"cpu": 1500, "memory": 2**30, "nvidia.com/gpu": 2000}
        )
        status, body = await fetch(server.port, "/metrics")
        assert status == 200
        assert "volcano_e2e_scheduling_latency_milliseconds_count 1.0" in body
        assert 'volcano_action_scheduling_latency_milliseconds_count{action="allocate"} 1.0' in body
        assert (
            'volcano_plugin_scheduling_latency_milliseconds_count{OnSession="OnSessionOpen",plugin="gang"}'
            in body
        )
        assert "volcano_bound_pods_total 3.0" in body
        assert 'volcano_queue_allocated_milli_cpu{queue_name="default"} 1500.0' in body
        assert 'volcano_queue_allocated_memory_bytes{queue_name="default"} 1.073741824e+09' in body
        assert (
            'volcano_queue_allocated_scalar_resources{queue_name="default",resource="nvidia.com/gpu"} 2.0'
            in body
        )
        assert (await fetch(server.port, "/healthz"))[0] == 200
        assert (await fetch(server.port, "/readyz"))[0] == 503
        ready["value"] = True
        assert await fetch(server.port, "/readyz") == (200, "ok")
    finally:
        await server.stop()


def test_vanished_scalar_resource_drops_to_zero_and_deleted_queue_disappears() -> None:
    metrics = SchedulerMetrics()
    metrics.set_queue_resources("deserved", "q1", {"cpu": 1000, "nvidia.com/gpu": 4000})
    metrics.set_queue_resources("deserved", "q1", {"cpu": 1000})
    text = metrics.expose().decode()
    assert 'volcano_queue_deserved_scalar_resources{queue_name="q1",resource="nvidia.com/gpu"} 0.0' in text
    metrics.delete_queue("q1")
    assert 'queue_name="q1"' not in metrics.expose().decode()


def test_unknown_queue_metric_kind_is_named() -> None:
    with pytest.raises(ValueError, match="'guaranteed'"):
        SchedulerMetrics().set_queue_resources("guaranteed", "q", {})


def test_each_instance_has_its_own_registry() -> None:
    a, b = SchedulerMetrics(), SchedulerMetrics()
    a.bound_pods.inc()
    assert "volcano_bound_pods_total 0.0" in b.expose().decode()
