"""The HTTPS server the API server calls for admission: Kopf's admission engine behind limits of ours.

Kopf's own ``WebhookServer`` reads any body up to aiohttp's 1 MiB default (a large Job's UPDATE, which carries
the object twice, can exceed it, while Volcano and the API server allow 3 MiB), keeps a silent connection for
an hour, has no TLS handshake timeout of its own and answers a body of the wrong shape with a 500 and a
traceback. This server is Kopf's ``settings.admission.server`` protocol (called with Kopf's engine, it yields
the client config) and holds each request to ``WEBHOOK_LIMITS``, in this order:

1. a path that is not one of our webhooks: 404; a Content-Type other than ``application/json``: 415;
2. a body announced or sent over 3 MiB: 413, the rest unread; a body not all there within 10 s: 408;
3. a body that is not an AdmissionReview (``review.decode_review``), or is one for another resource than the
   path's webhook admits: 400, the message naming the field;
4. only then Kopf's engine, whose answer (allowed, or denied with our message) is the 200.

Each refusal is logged once, one line with the reason and the peer (``kube.serving``). The certificate is
made in-process at start (``server.configure_server``) and never changes on disk, so unlike Kopf's server this
one does not watch its files.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
from collections.abc import AsyncGenerator, Mapping
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final, cast

import kopf
from aiohttp import web

from volcano_py.kube.serving import ServingLimits, read_body, refusal
from volcano_py.log import get_logger
from volcano_py.webhooks.review import GroupVersionResource, ReviewError, decode_review

_log = get_logger(__name__)

# Volcano's and the API server's cap on an admission request body.
MAX_REVIEW_BYTES: Final = 3 * 1024 * 1024
JSON: Final = "application/json"
WEBHOOK_LIMITS: Final = ServingLimits(max_body_bytes=MAX_REVIEW_BYTES)


class AdmissionEndpoint:
    """Serves Kopf's admission engine at ``https://<addr>:<port>/<webhook id>`` for the ``webhooks`` given
    (id -> the resource it admits). ``port`` 0 picks a free one; ``port`` then holds it."""

    def __init__(
        self,
        *,
        addr: str,
        port: int,
        host: str,
        certfile: Path,
        pkeyfile: Path,
        cafile: Path,
        webhooks: Mapping[str, GroupVersionResource],
        limits: ServingLimits = WEBHOOK_LIMITS,
    ) -> None:
        self.addr = addr
        self.port = port
        self.host = host
        self.certfile = certfile
        self.pkeyfile = pkeyfile
        self.cafile = cafile
        self.webhooks = dict(webhooks)
        self.limits = limits

    async def __call__(self, fn: kopf.WebhookFn) -> AsyncGenerator[kopf.WebhookClientConfig, None]:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.certfile, self.pkeyfile)
        app = self.limits.application()

        async def serve(request: web.Request) -> web.StreamResponse:
            return await self._serve(fn, request)

        app.router.add_post("/{webhook}", serve)
        runner = web.AppRunner(app, handle_signals=False, **self.limits.runner_kwargs())
        await runner.setup()
        assert runner.server is not None  # set up just now
        # Our own listening socket rather than aiohttp's TCPSite, which cannot pass a TLS handshake timeout.
        server = await asyncio.get_running_loop().create_server(
            runner.server,
            self.addr or None,
            self.port,
            ssl=context,
            ssl_handshake_timeout=self.limits.handshake_timeout,
            backlog=self.limits.backlog,
            reuse_address=True,
        )
        try:
            self.port = int(server.sockets[0].getsockname()[1])
            _log.info("admission webhooks listening", addr=self.addr, port=self.port)
            config = kopf.WebhookClientConfig(url=f"https://{self.host}:{self.port}")
            config["caBundle"] = base64.b64encode(self.cafile.read_bytes()).decode("ascii")
            yield config
            await asyncio.Event().wait()
        finally:
            server.close()
            await runner.cleanup()

    async def _serve(self, fn: kopf.WebhookFn, request: web.Request) -> web.StreamResponse:
        webhook = request.match_info["webhook"]
        admits = self.webhooks.get(webhook)
        if admits is None:
            ours = ", ".join(f"/{name}" for name in sorted(self.webhooks))
            raise refusal(
                request, HTTPStatus.NOT_FOUND, f"no admission webhook at /{webhook}; ours are {ours}"
            )
        if request.content_type != JSON:
            raise refusal(
                request,
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                f"Content-Type {request.content_type!r}: an AdmissionReview is sent as {JSON}",
                webhook=webhook,
            )
        body = await read_body(request, self.limits)
        try:
            review = decode_review(body)
        except ReviewError as err:
            raise refusal(
                request, HTTPStatus.BAD_REQUEST, f"not an AdmissionReview: {err}", webhook=webhook
            ) from None
        if review.resource != admits:
            raise refusal(
                request,
                HTTPStatus.BAD_REQUEST,
                f"request.resource {review.resource}: /{webhook} admits {admits}",
                webhook=webhook,
            )
        peer = request.transport.get_extra_info("peercert") if request.transport is not None else None
        answer = await fn(cast(Any, review.raw), webhook=webhook, sslpeer=peer, headers=dict(request.headers))
        return web.json_response(answer)
