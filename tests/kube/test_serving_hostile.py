"""Hostile clients against the plain-HTTP servers we open: ``/metrics`` ``/healthz`` ``/readyz`` (both
processes) and the dashboard, each started for real on a loopback port with short limits."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable

import aiohttp
import pytest

from tests import hostile
from volcano_py.dashboard.server import serve
from volcano_py.dashboard.state import DashboardState
from volcano_py.kube.health import MetricsServer
from volcano_py.kube.serving import MAX_LINE_BYTES, ServingLimits
from volcano_py.scheduler.core import load_conf
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics

LIMITS = ServingLimits(header_timeout=1.0, body_timeout=1.0, linger=0.2)
IDLE_CONNECTIONS = 1200
RSS_GROWTH_BOUND = 50 * 1024 * 1024

Server = tuple[int, str]  # (port, a path that answers 200)


async def _metrics() -> AsyncIterator[Server]:
    server = MetricsServer(SchedulerMetrics(), host="127.0.0.1", port=0, limits=LIMITS)
    await server.start()
    try:
        yield server.port, "/healthz"
    finally:
        await server.stop()


async def _dashboard(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Server]:
    state = DashboardState(None, load_conf(None), conf_source="the built-in default conf")  # type: ignore[arg-type]
    # The mirror of the cluster is not under test here: it waits, as it does between watch events.
    monkeypatch.setattr(state, "run", asyncio.Event().wait)
    stop = asyncio.Event()
    started: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    serving = asyncio.create_task(serve(state, host="127.0.0.1", port=0, stop=stop, started=started,
                                        limits=LIMITS))  # fmt: skip
    try:
        yield await started, "/healthz"
    finally:
        stop.set()
        await serving


@pytest.fixture(params=["metrics", "dashboard"])
async def server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Server]:
    starts: dict[str, Callable[[], AsyncIterator[Server]]] = {
        "metrics": _metrics,
        "dashboard": lambda: _dashboard(monkeypatch),
    }
    async for started in starts[request.param]():
        yield started


async def _get(port: int, path: str) -> tuple[int, float]:
    began = time.monotonic()
    timeout = aiohttp.ClientTimeout(total=10)
    async with (
        aiohttp.ClientSession(timeout=timeout) as http,
        http.get(f"http://127.0.0.1:{port}{path}") as r,
    ):
        await r.read()
        return r.status, time.monotonic() - began


async def test_a_client_trickling_its_request_head_is_closed_at_the_header_timeout(server: Server) -> None:
    port, path = server
    head = f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Pad: {'a' * 60}\r\n\r\n".encode()
    sent, seconds, _ = await asyncio.to_thread(hostile.trickle, port, head, interval=0.05)
    assert sent < len(head)
    assert seconds < LIMITS.header_timeout + 2


async def test_idle_connections_neither_hold_the_server_nor_its_memory(server: Server) -> None:
    port, path = server
    before = hostile.rss_bytes()
    idle = await asyncio.to_thread(hostile.connect_idle, port, IDLE_CONNECTIONS)
    try:
        status, seconds = await _get(port, path)
        assert (status, seconds < 2) == (200, True)
        assert hostile.rss_bytes() - before < RSS_GROWTH_BOUND
        closed = await asyncio.to_thread(hostile.closed_by_server, idle, LIMITS.header_timeout + 5)
        assert closed == IDLE_CONNECTIONS
    finally:
        hostile.close_all(idle)


LONG = b"a" * (MAX_LINE_BYTES + 10)
MALFORMED = [
    pytest.param(b"GET /healthz HTTP/1.1\r\nX-Long: " + LONG + b"\r\n\r\n", id="long-header"),
    pytest.param(
        b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n",
        id="200-headers",
    ),
    pytest.param(b"GET /" + LONG + b" HTTP/1.1\r\n\r\n", id="long-request-line"),
    pytest.param(b"GET /healthz HTTP/1.1\r\nContent-Length: -5\r\n\r\n", id="negative-length"),
]


@pytest.mark.parametrize("request_bytes", MALFORMED)
async def test_a_malformed_request_is_refused_with_400_and_logged_once_without_a_traceback(
    server: Server, request_bytes: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    port, path = server
    with hostile.logged() as logs, caplog.at_level(logging.DEBUG, logger="aiohttp"):
        answer = await asyncio.to_thread(hostile.exchange, port, request_bytes, timeout=5)
        assert (await _get(port, path))[0] == 200  # and the server goes on
    assert hostile.status_of(answer) == 400
    refusals = [entry for entry in logs if entry["event"] == "request refused"]
    assert len(refusals) == 1, logs
    assert refusals[0]["status"] == 400 and refusals[0]["peer"] == "127.0.0.1" and refusals[0]["reason"]
    foreign = [r for r in caplog.records if not isinstance(r.msg, dict)]  # ours are in `logs`
    assert not [r for r in foreign if r.levelno >= logging.WARNING or r.exc_info], foreign
