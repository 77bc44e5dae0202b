"""The HTTP endpoint both processes serve: ``/metrics`` (Prometheus text), ``/healthz`` and ``/readyz``.

``/healthz`` says the process is alive; ``/readyz`` says it can do its work (``ready()``: for the scheduler,
caches synced and leading). Port 0 lets the OS pick; ``port`` then holds the real one. Clients are held to
``serving.ServingLimits`` (a slow or silent connection is closed, a malformed request refused in one line).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from volcano_py.kube.serving import DEFAULT_LIMITS, ServingLimits
from volcano_py.log import get_logger

_log = get_logger(__name__)


class Exposes(Protocol):
    """A process's metrics: the Prometheus text of its own registry."""

    def expose(self) -> bytes: ...


class MetricsServer:
    """``/metrics``, ``/healthz`` and ``/readyz`` on ``host:port`` for one process's metrics."""

    def __init__(
        self,
        metrics: Exposes,
        *,
        host: str = "0.0.0.0",
        port: int = 8080,
        ready: Callable[[], bool] = lambda: True,
        component: str = "volcano-py",
        limits: ServingLimits = DEFAULT_LIMITS,
    ) -> None:
        self.metrics = metrics
        self.host = host
        self.port = port
        self.ready = ready
        self.component = component
        self.limits = limits
        self._runner: web.AppRunner | None = None

    async def _metrics(self, _request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.expose(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _healthz(self, _request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, _request: web.Request) -> web.Response:
        if self.ready():
            return web.Response(text="ok")
        return web.Response(status=503, text="not ready: caches not synced or not the leader")

    async def start(self) -> None:
        app = self.limits.application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        self._runner = web.AppRunner(app, **self.limits.runner_kwargs())
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port, backlog=self.limits.backlog).start()
        # With port 0 the OS picked one: report the real one.
        if self._runner.addresses:
            self.port = int(self._runner.addresses[0][1])
        _log.info("metrics server listening", component=self.component, host=self.host, port=self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
