"""A loopback HTTPS proxy in front of the API server that misbehaves on request.

Our processes reach the API through it (their kubeconfig names it); it serves the API server's own
certificate, so clients trust it as they trust the API server. Faults it can add: ``latency`` before every
request; an ``error_rate`` of non-watch requests answered 429 (with Retry-After) or 500/503 without reaching
the API server; ``cut_watches()`` (every open watch's connection reset); ``gone(n)`` (the next n watches
answered with a 410 Gone ERROR event, as the API server does when a resourceVersion is too old).

It runs its own event loop in a thread, so a caller that blocks (restarting the API server, say) does not
freeze the traffic it carries.
"""

from __future__ import annotations

import asyncio
import json
import random
import ssl
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from aiohttp import web

T = TypeVar("T")

# Hop-by-hop and framing headers: the proxy frames its own answers (chunked), asks upstream for plain bodies.
_DROP_REQUEST = frozenset({"host", "content-length", "accept-encoding", "connection", "transfer-encoding"})
_DROP_RESPONSE = frozenset({"content-length", "transfer-encoding", "content-encoding", "connection"})


@dataclass(slots=True)
class ProxyStats:
    requests: int = 0
    injected_errors: int = 0
    watches_cut: int = 0
    gone_sent: int = 0
    upstream_errors: int = 0


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason,
            "code": code}  # fmt: skip


class FaultProxy:
    def __init__(
        self, upstream: str, *, ca_file: Path, cert_file: Path, key_file: Path, seed: int = 0
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self._ca_file = ca_file
        self._cert_file = cert_file
        self._key_file = key_file
        self._rng = random.Random(seed)
        self.latency = 0.0
        self.error_rate = 0.0
        self._gone = 0
        self.stats = ProxyStats()
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._watches: dict[int, web.BaseRequest] = {}  # by id(): requests do not hash

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    # -- control, from any thread ---------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._start())
            except BaseException as err:
                failure.append(err)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._stop())
            loop.close()

        self._thread = threading.Thread(target=serve, name="fault-proxy", daemon=True)
        self._thread.start()
        ready.wait(30)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop = None

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        assert self._loop is not None, "start() the proxy first"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)

    def cut_watches(self) -> int:
        """Reset the connection of every open watch; returns how many."""
        return self._call(self._cut())

    def gone(self, watches: int) -> None:
        """Answer the next ``watches`` watch requests with 410 Gone."""
        self._gone = watches

    def misbehave(self, *, latency: float = 0.0, error_rate: float = 0.0) -> None:
        if latency < 0 or not 0 <= error_rate <= 1:
            raise ValueError(f"latency must be >= 0 and error_rate within 0..1, got {latency}, {error_rate}")
        self.latency, self.error_rate = latency, error_rate

    # -- the server -----------------------------------------------------------------------------------------

    async def _start(self) -> None:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(str(self._cert_file), str(self._key_file))
        upstream_tls = ssl.create_default_context(cafile=str(self._ca_file))
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=upstream_tls, limit=0),
            auto_decompress=False,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=5),
        )
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=tls)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def _stop(self) -> None:
        await self._cut()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _cut(self) -> int:
        cut = 0
        for request in list(self._watches.values()):
            if request.transport is not None:
                request.transport.abort()
                cut += 1
        self._watches.clear()
        self.stats.watches_cut += cut
        return cut

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.stats.requests += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        watch = request.query.get("watch") in ("1", "true")
        if watch and self._gone > 0:
            self._gone -= 1
            self.stats.gone_sent += 1
            event = {"type": "ERROR", "object": _status(410, "Expired", "too old resource version (chaos)")}
            return web.Response(status=200, text=json.dumps(event) + "\n", content_type="application/json")
        if not watch and self.error_rate and self._rng.random() < self.error_rate:
            self.stats.injected_errors += 1
            code = self._rng.choice((429, 500, 503))
            reason = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}[code]
            headers = {"Retry-After": "1"} if code == 429 else {}
            return web.json_response(_status(code, reason, "injected by the chaos proxy"), status=code,
                                     headers=headers)  # fmt: skip
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROP_REQUEST}
        headers["Accept-Encoding"] = "identity"  # else aiohttp asks for gzip, and bodies pass on compressed
        body = await request.read()
        try:
            async with self._session.request(
                request.method, self.upstream + request.path_qs, headers=headers, data=body or None
            ) as upstream:
                response = web.StreamResponse(
                    status=upstream.status,
                    headers={k: v for k, v in upstream.headers.items() if k.lower() not in _DROP_RESPONSE},
                )
                await response.prepare(request)
                if watch:
                    self._watches[id(request)] = request
                try:
                    async for chunk in upstream.content.iter_any():
                        await response.write(chunk)
                finally:
                    self._watches.pop(id(request), None)
                await response.write_eof()
                return response
        except (aiohttp.ClientError, ConnectionError, TimeoutError) as err:
            self.stats.upstream_errors += 1
            if request.transport is not None and not request.transport.is_closing():
                # The API server went away mid-answer (restarted): the client sees the connection drop.
                request.transport.abort()
            raise web.HTTPServiceUnavailable() from err
