"""The ``usage`` plugin against a real Prometheus: a node whose Prometheus-reported CPU load is over the
threshold gets no pod, and a pod that could only go there waits saying so.

Prometheus (built from the pinned Prometheus module, like promtool) scrapes node-exporter series for two fake
nodes every second, and the scheduler asks it Volcano's queries. The series come from a small exporter in this
test, one target per node with ``instance`` set to the node's name (as Volcano's queries expect): a CPU idle
counter growing at 1 - load per second and the memory gauges. KWOK could serve such series from a ``Metric``
(CEL over its nodes and pods), but the session's kwok runs without its metrics server and reads its
configuration once, at start: serving them would change the cluster every integration test shares, for a
load each test must set for itself.

Volcano's CPU query averages 5-minute rates over 10 minutes, and Prometheus divides a rate by its whole
window, so a series minutes old reads far busier than it is. The same series' last 20 minutes are therefore
written into Prometheus's storage with promtool before it starts (``tsdb create-blocks-from openmetrics``):
the nodes have been loaded so for a while, and scraping carries the series on.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from test_scheduler_binding import (  # type: ignore[import-not-found]
    POOL_LABEL,
    api,
    events_for,
    pods_by_name,
    start_scheduler,
    wait_until,
)

from volcano_py.devcluster.ports import free_ports
from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import PODS
from volcano_py.scheduler.runtime.node_metrics import CPU_QUERY

pytestmark = pytest.mark.integration
__all__ = ["api", "start_scheduler"]  # fixtures used here by name

NODE_MEMORY = 64 * 1024**3
AVAILABLE = NODE_MEMORY * 0.9
# Minutes of history written before Prometheus starts: the 10-minute average of 5-minute rates needs 15.
HISTORY_MINUTES = 20
# The CPU load each node of the pool reports: the first over the plugin's default threshold (80%).
LOADS = (0.95, 0.10)


class NodeExporter:
    """node-exporter's CPU and memory series for each node at ``/nodes/<name>/metrics``; the CPU counters
    are a function of the wall clock, so their history can be written ahead (``history``)."""

    def __init__(self, loads: Mapping[str, float]) -> None:
        self.loads = dict(loads)
        self.booted = time.time() - 2 * HISTORY_MINUTES * 60
        self.runner: web.AppRunner | None = None
        self.port = 0

    def idle_seconds(self, node: str, at: float) -> float:
        return (at - self.booted) * (1 - self.loads[node])

    async def metrics(self, request: web.Request) -> web.Response:
        node = request.match_info["node"]
        now = time.time()
        busy = (now - self.booted) * self.loads[node]
        body = (
            "# TYPE node_cpu_seconds_total counter\n"
            f'node_cpu_seconds_total{{cpu="0",mode="idle"}} {self.idle_seconds(node, now):.3f}\n'
            f'node_cpu_seconds_total{{cpu="0",mode="user"}} {busy:.3f}\n'
            "# TYPE node_memory_MemTotal_bytes gauge\n"
            f"node_memory_MemTotal_bytes {NODE_MEMORY}\n"
            "# TYPE node_memory_MemAvailable_bytes gauge\n"
            f"node_memory_MemAvailable_bytes {AVAILABLE:.0f}\n"
        )
        # Prometheus 3 refuses a scrape whose Content-Type does not name the exposition format.
        return web.Response(text=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})

    def history(self, until: float) -> str:
        """The series of every node, every 15 s of the last ``HISTORY_MINUTES`` before ``until``, in the
        OpenMetrics text promtool backfills from (labelled as the scrape labels them)."""
        steps = [until - 15 * i for i in range(HISTORY_MINUTES * 4, 0, -1)]
        lines: list[str] = []
        for name, value in (
            ('node_cpu_seconds_total{{cpu="0",mode="idle",instance="{node}",job="node"}}', self.idle_seconds),
            ('node_memory_MemTotal_bytes{{instance="{node}",job="node"}}', lambda _n, _t: NODE_MEMORY),
            ('node_memory_MemAvailable_bytes{{instance="{node}",job="node"}}', lambda _n, _t: AVAILABLE),
        ):
            for node in self.loads:
                lines += [f"{name.format(node=node)} {value(node, at):.3f} {at:.3f}" for at in steps]
        return "\n".join([*lines, "# EOF", ""])

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/nodes/{node}/metrics", self.metrics)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = self.runner.addresses[0][1]

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


def prometheus_config(exporter_port: int, nodes: list[str]) -> str:
    targets = "".join(
        f"  - targets: ['127.0.0.1:{exporter_port}']\n"
        f"    labels: {{instance: {node}, __metrics_path__: /nodes/{node}/metrics}}\n"
        for node in nodes
    )
    return (
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        "- job_name: node\n"
        "  static_configs:\n" + targets
    )


@pytest.fixture
def pool(cluster: Any) -> Iterator[list[str]]:
    """Two fresh nodes (16 CPUs each) labelled ``POOL_LABEL=<pool>`` (the first node's name less its
    index): the first loaded, the second idle."""
    name = f"us{uuid.uuid4().hex[:6]}"
    labels = {POOL_LABEL: name}
    yield list(cluster.create_nodes(2, prefix=f"{name}-", cpu="16", memory="64Gi", gpus=0, labels=labels))
    cluster.delete_nodes(f"{name}-")


@pytest.fixture
async def exporter(pool: list[str]) -> AsyncIterator[NodeExporter]:
    serving = NodeExporter(dict(zip(pool, LOADS, strict=True)))
    await serving.start()
    yield serving
    await serving.stop()


@pytest.fixture
def prometheus_address(
    prometheus: Path, promtool: Path, exporter: NodeExporter, pool: list[str], tmp_path: Path
) -> Iterator[str]:
    """A Prometheus holding the exporter's last minutes and scraping it every second; its address."""
    config = tmp_path / "prometheus.yml"
    config.write_text(prometheus_config(exporter.port, pool))
    history = tmp_path / "history.om"
    history.write_text(exporter.history(time.time()))
    subprocess.run(
        [str(promtool), "tsdb", "create-blocks-from", "openmetrics", str(history), str(tmp_path / "data")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (port,) = free_ports(1)
    with (tmp_path / "prometheus.log").open("w") as log:
        process = subprocess.Popen(
            [
                str(prometheus),
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def cpu_loads(address: str) -> dict[str, float]:
    """Volcano's CPU query, as the scheduler asks it, per node."""
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"{address}/api/v1/query", params={"query": CPU_QUERY}) as response,
        ):
            answer = await response.json()
    except (aiohttp.ClientError, ValueError):
        return {}  # not up yet
    result = (answer.get("data") or {}).get("result") or []
    return {s["metric"]["instance"]: float(s["value"][1]) for s in result}


def pod(name: str, scheduler: str, selector: Mapping[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": dict(selector),
            "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
        },
    }


async def test_usage_keeps_pods_off_the_node_prometheus_reports_loaded(
    api: KubeClient,
    namespace: str,
    pool: list[str],
    prometheus_address: str,
    start_scheduler: Any,
    tmp_path: Path,
) -> None:
    hot, cool = pool

    async def reported() -> dict[str, float]:
        loads = await cpu_loads(prometheus_address)
        return loads if set(loads) == set(pool) else {}

    loads = await wait_until(reported, "Prometheus to answer Volcano's CPU query for both nodes", 30)
    assert loads[hot] > 80 > loads[cool]
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(
        'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n'
        "  - name: conformance\n- plugins:\n  - name: predicates\n  - name: usage\n  - name: nodeorder\n"
        f"metrics: {{type: prometheus, address: '{prometheus_address}', interval: 1s}}\n"
    )
    name = f"vc-usage-{uuid.uuid4().hex[:6]}"
    running = await start_scheduler(name, scheduler_conf=str(conf))
    cache = running.scheduler.cache
    await wait_until(lambda: hot in cache.node_usage, "the scheduler to read the nodes' load", 30)

    pool_label = {POOL_LABEL: hot.rsplit("-", 1)[0]}
    for i in range(4):
        await api.create(PODS.collection_path(namespace), pod(f"p{i}", name, pool_label))
    await api.create(PODS.collection_path(namespace), pod("pinned", name, {"kubernetes.io/hostname": hot}))

    async def all_bound() -> dict[str, Any]:
        current = await pods_by_name(api, namespace)
        return current if all(current[f"p{i}"]["spec"].get("nodeName") for i in range(4)) else {}

    current = await wait_until(all_bound, "the four pods bound", 30)
    assert {current[f"p{i}"]["spec"]["nodeName"] for i in range(4)} == {cool}

    async def told() -> list[str]:
        events = await events_for(api, namespace, "pinned")
        return [e["message"] for e in events if e["reason"] == "FailedScheduling"]

    messages = await wait_until(told, "the pod that fits only the loaded node to be told why", 30)
    assert "report CPU load above 80% (usage plugin's thresholds.cpu)" in messages[0]
    assert not (await pods_by_name(api, namespace))["pinned"]["spec"].get("nodeName")
