"""The limits every HTTP server of ours holds its clients to: the admission webhook (HTTPS), ``/metrics``
``/healthz`` ``/readyz`` (both processes) and the dashboard. All three are aiohttp servers.

aiohttp already bounds a request's head (a line 8,190 bytes, 128 headers) and the body a handler reads
(``client_max_size``), and answers 400 or 413 beyond them. Left alone it also keeps a connection that has
not sent a whole request head for an hour (its ``keepalive_timeout``, 3,630 s, is armed when a connection
opens; earlier releases than the one pinned never closed such a connection) and waits forever for a body a
handler reads, so a client sending a byte a second, or a few thousand that connect and say nothing, hold the
server's sockets and memory. ``ServingLimits`` closes those:

- ``header_timeout``: a connection must send a whole request head within this, from the moment it is open
  (after TLS), and is closed after this long idle between requests (aiohttp's ``keepalive_timeout``).
- ``body_timeout``: a handler that reads a body gives up after this and answers 408 (``read_body``).
- ``max_body_bytes``: a body announced larger is refused with 413 before a byte of it is read; one sent
  chunked is cut off at the limit (aiohttp's ``client_max_size``).
- ``handshake_timeout``: a TLS client that has not finished its handshake by then is dropped.
- ``backlog``: connections the kernel queues before the server accepts them (aiohttp's 128 drops a burst's
  SYNs, and each dropped one waits a second or more to retry).
- ``linger``: after a refusal with the body unread, how long the rest is read and dropped so the client can
  read the answer, before the connection is closed.

A refusal is logged once, as one line with the reason and the peer; aiohttp's own refusals of a malformed
request would otherwise log a traceback each (``RefusalLogger``).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from volcano_py.log import get_logger

_log = get_logger(__name__)

HEADER_TIMEOUT_SECONDS: Final = 10.0
BODY_TIMEOUT_SECONDS: Final = 10.0
HANDSHAKE_TIMEOUT_SECONDS: Final = 10.0
LINGER_SECONDS: Final = 2.0
BACKLOG: Final = 1024
# aiohttp's own bounds on a request head, named here so the docs and the tests read them from one place.
MAX_LINE_BYTES: Final = 8190
MAX_FIELD_BYTES: Final = 8190
MAX_HEADERS: Final = 128
# What a server that reads no body lets a handler read (aiohttp's default): the dashboard, metrics, health.
MAX_BODY_BYTES: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ServingLimits:
    header_timeout: float = HEADER_TIMEOUT_SECONDS
    body_timeout: float = BODY_TIMEOUT_SECONDS
    max_body_bytes: int = MAX_BODY_BYTES
    handshake_timeout: float = HANDSHAKE_TIMEOUT_SECONDS
    linger: float = LINGER_SECONDS
    backlog: int = BACKLOG

    def runner_kwargs(self) -> dict[str, Any]:
        """What ``web.AppRunner`` hands each connection's handler."""
        return {
            "keepalive_timeout": self.header_timeout,
            "max_line_size": MAX_LINE_BYTES,
            "max_field_size": MAX_FIELD_BYTES,
            "max_headers": MAX_HEADERS,
            "lingering_time": self.linger,
            "logger": REFUSAL_LOGGER,
            "access_log": None,
        }

    def application(self) -> web.Application:
        return web.Application(client_max_size=self.max_body_bytes)


DEFAULT_LIMITS: Final = ServingLimits()


def refused(request: web.BaseRequest, status: int, reason: str, **fields: Any) -> None:
    """Log one refused request: one line, its status, why, and who sent it."""
    _log.warning(
        "request refused", status=status, reason=reason, peer=request.remote, path=request.path, **fields
    )


class Refused(web.HTTPClientError):
    """A refusal with its status and a body that says why and what would do."""

    def __init__(self, status: int, reason: str) -> None:
        self.status_code = status
        super().__init__(text=reason + "\n")


def refusal(request: web.BaseRequest, status: int, reason: str, **fields: Any) -> Refused:
    """The answer ``status`` with ``reason`` as its body (what the client reads), logged once."""
    refused(request, status, reason, **fields)
    return Refused(status, reason)


async def read_body(request: web.BaseRequest, limits: ServingLimits) -> bytes:
    """The whole body, or a logged refusal: 413 when it is (or is announced) over ``max_body_bytes``, 408
    when it has not all arrived within ``body_timeout``."""
    too_large = (
        f"the body is larger than this server reads ({limits.max_body_bytes} bytes): send a smaller request"
    )
    if request.content_length is not None and request.content_length > limits.max_body_bytes:
        raise refusal(request, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, too_large, length=request.content_length)
    try:
        async with asyncio.timeout(limits.body_timeout):
            return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise refusal(request, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, too_large) from None
    except TimeoutError:
        raise refusal(
            request,
            HTTPStatus.REQUEST_TIMEOUT,
            f"the body did not arrive within {limits.body_timeout:g} s: send the request at once",
        ) from None


class RefusalLogger(logging.Logger):
    """aiohttp's server logger. A request aiohttp refuses before any handler runs (a malformed request line,
    a head over the limits) becomes one line with the reason and the peer; anything else goes on to
    ``aiohttp.server`` as before, a traceback included, because that is a fault of ours."""

    def __init__(self) -> None:
        super().__init__("aiohttp.server")

    def exception(self, msg: object, *args: Any, exc_info: Any = True, **kwargs: Any) -> None:
        error = exc_info if isinstance(exc_info, BaseException) else sys.exc_info()[1]
        if isinstance(error, HttpProcessingError):
            peer = args[0] if args else None
            _log.warning("request refused", status=error.code, reason=error.message, peer=peer)
            return
        logging.getLogger("aiohttp.server").exception(msg, *args, exc_info=exc_info, **kwargs)

    def debug(self, msg: object, *args: Any, **kwargs: Any) -> None:
        logging.getLogger("aiohttp.server").debug(msg, *args, **kwargs)


REFUSAL_LOGGER: Final = RefusalLogger()
