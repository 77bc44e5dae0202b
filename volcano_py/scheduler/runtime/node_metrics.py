"""Node load from the conf's metrics source: asked of Prometheus every ``metrics.interval`` and handed to the
cache, whose snapshot carries it to the ``usage`` plugin, so a session never waits on the network.

The queries are Volcano's (its Prometheus source): CPU and memory in percent, each a 10-minute average sampled
every 30 s, CPU from the idle rate over 5 minutes. Volcano asks them once per node with ``instance="<node>"``;
here they are asked once for the whole cluster, and each answer's ``instance`` label names its node: the same
numbers in two requests per interval, not two per node. So, as for Volcano, Prometheus must label each node's
node-exporter series with ``instance`` set to the node's name.

As in Volcano, a node the answer does not mention reads 0% at that time. Where a query fails (Prometheus down,
an error answer) Volcano also reads 0% for every node; here the last readings are kept instead, and the plugin
stops trusting them once they are 5 minutes old: a Prometheus restart does not make every loaded node look
idle for a cycle.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import aiohttp

from volcano_py.log import get_logger
from volcano_py.scheduler.core import MetricsConf, NodeUsage

_log = get_logger(__name__)

# Volcano's window (its source's NODE_METRICS_PERIOD) and queries, without the per-node instance matcher.
WINDOW: Final = "10m"
CPU_QUERY: Final = (
    "avg_over_time(clamp_min(100 - (avg by (instance) "
    f'(rate(node_cpu_seconds_total{{mode="idle"}}[5m])) * 100), 0)[{WINDOW}:30s])'
)
MEMORY_QUERY: Final = (
    f"100*avg_over_time(((1-node_memory_MemAvailable_bytes/node_memory_MemTotal_bytes))[{WINDOW}:30s])"
)
# Volcano's client gives a query round 60 s.
QUERY_TIMEOUT_SECONDS: Final = 60.0
# How often a scheduler whose conf names no metrics source looks again (a reloaded conf may add one).
IDLE_SECONDS: Final = 1.0


class MetricsError(RuntimeError):
    """Prometheus answered, but not with an instant vector."""


def vector_values(answer: Mapping[str, Any]) -> dict[str, float]:
    """Instance -> value of a Prometheus ``/api/v1/query`` answer (the first series of an instance counts, as
    Volcano reads the first row; a value that is no number is left out)."""
    if answer.get("status") != "success":  # raw read: Prometheus's HTTP answer, no Kubernetes object
        raise MetricsError(f"Prometheus answered {answer.get('errorType')}: {answer.get('error')}")
    data = answer.get("data") or {}
    if data.get("resultType") != "vector":
        raise MetricsError(f"Prometheus answered a {data.get('resultType')!r}, not an instant vector")
    values: dict[str, float] = {}
    for series in data.get("result") or ():
        instance = str((series.get("metric") or {}).get("instance", ""))
        try:
            value = float((series.get("value") or [None, ""])[1])
        except (TypeError, ValueError, IndexError):
            continue
        if instance and instance not in values and math.isfinite(value):
            values[instance] = value
    return values


def readings(
    cpu: Mapping[str, float], memory: Mapping[str, float], nodes: Iterable[str], at: datetime
) -> dict[str, NodeUsage]:
    """Every node's reading at ``at``; a node without a series reads 0%, as in Volcano."""
    return {node: NodeUsage(cpu.get(node, 0.0), memory.get(node, 0.0), at) for node in nodes}


class NodeMetricsCollector:
    """Asks the metrics source of the conf in force (``source()``) about the nodes in the cache
    (``nodes()``) every interval, and hands every node's reading to ``publish``."""

    def __init__(
        self,
        source: Callable[[], MetricsConf | None],
        nodes: Callable[[], Iterable[str]],
        publish: Callable[[dict[str, NodeUsage]], None],
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.source = source
        self.nodes = nodes
        self.publish = publish
        self.clock = clock
        self._failing: str | None = None

    async def run(self) -> None:
        timeout = aiohttp.ClientTimeout(total=QUERY_TIMEOUT_SECONDS)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            while True:
                conf = self.source()
                if conf is None:
                    await asyncio.sleep(IDLE_SECONDS)
                    continue
                await self.collect_once(http, conf)
                await asyncio.sleep(conf.interval.total_seconds())

    async def collect_once(self, http: aiohttp.ClientSession, conf: MetricsConf) -> bool:
        """One round; True when the readings were published."""
        try:
            cpu = await self._query(http, conf, CPU_QUERY)
            memory = await self._query(http, conf, MEMORY_QUERY)
        except (aiohttp.ClientError, TimeoutError, MetricsError, ValueError) as exc:
            error = str(exc) or type(exc).__name__
            if error != self._failing:  # once per kind of failure, not every interval
                _log.warning(
                    "node metrics query failed; keeping the last readings (usage ignores them after 5m)",
                    address=conf.address,
                    error=error,
                )
            self._failing = error
            return False
        if self._failing is not None:
            _log.info("node metrics queries answer again", address=conf.address)
            self._failing = None
        self.publish(readings(cpu, memory, self.nodes(), self.clock()))
        return True

    async def _query(self, http: aiohttp.ClientSession, conf: MetricsConf, query: str) -> dict[str, float]:
        async with http.get(
            f"{conf.address}/api/v1/query",
            params={"query": query},
            ssl=not conf.insecure_skip_verify,
        ) as response:
            # Prometheus answers a bad query with 400 and a JSON body that says why.
            if response.status >= 500 or "json" not in response.headers.get("Content-Type", ""):
                raise MetricsError(f"{conf.address} answered HTTP {response.status}")
            answer: dict[str, Any] = await response.json()
        return vector_values(answer)
