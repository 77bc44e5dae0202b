"""Hostile clients for the servers we open (webhook, metrics, dashboard): plain blocking sockets, so each
costs the test process a kernel socket and no event-loop memory, and the process's RSS measures the server.
Call them through ``asyncio.to_thread`` when the server runs in the test's own loop."""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import ssl
import time
from collections.abc import Iterator
from typing import Any

from structlog.testing import capture_logs


@contextlib.contextmanager
def logged() -> Iterator[list[dict[str, Any]]]:
    """The structlog events logged inside the block, whichever way structlog is set up by then.

    A logger proxy caches its processors on first use once ``volcano_py.log.configure`` has run (another
    test may have called it), and such a logger writes through the standard library, unseen by structlog's
    ``capture_logs``; so both paths are read. The list is filled when the block ends."""
    events: list[dict[str, Any]] = []

    class _Grab(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if isinstance(record.msg, dict):
                events.append({**record.msg, "log_level": record.levelname.lower()})

    grab = _Grab(logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(grab)
    try:
        with capture_logs() as captured:
            yield events
    finally:
        root.removeHandler(grab)
        events.extend(captured)


def rss_bytes() -> int:
    """This process's resident memory."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def connect_idle(port: int, count: int) -> list[socket.socket]:
    """``count`` connections that send nothing."""
    return [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count)]


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.close()


def closed_by_server(sockets: list[socket.socket], within: float) -> int:
    """How many of ``sockets`` the server has closed (EOF or reset) by ``within`` seconds from now."""
    closed = 0
    deadline = time.monotonic() + within
    with selectors.DefaultSelector() as waiting:  # epoll: select() stops at descriptor 1024
        for sock in sockets:
            waiting.register(sock, selectors.EVENT_READ)
        while waiting.get_map() and time.monotonic() < deadline:
            for key, _ in waiting.select(timeout=0.1):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    closed += 1
                    waiting.unregister(sock)
    return closed


def trickle(
    port: int, data: bytes, *, interval: float, tls: ssl.SSLContext | None = None, head: bytes = b""
) -> tuple[int, float, bytes]:
    """Send ``head`` at once, then ``data`` a byte every ``interval`` s until the server closes the
    connection: (bytes of ``data`` sent, seconds until it closed, what it answered)."""
    started = time.monotonic()
    sent = 0
    answer = b""
    with _connect(port, tls) as sock:
        try:
            sock.sendall(head)
            sock.settimeout(interval)  # a wait between bytes, during which an answer may come
            for byte in data:
                sock.sendall(bytes([byte]))
                sent += 1
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:  # nothing yet (or only a TLS session ticket)
                    continue
                answer += chunk
                if not chunk:
                    break
            sock.settimeout(10)
            while chunk := sock.recv(65536):  # what is left of the answer, until the server closes
                answer += chunk
        except OSError:
            pass
    return sent, time.monotonic() - started, answer


def exchange(port: int, request: bytes, *, tls: ssl.SSLContext | None = None, timeout: float = 10) -> bytes:
    """Send ``request`` whole and read the answer until the server closes or ``timeout`` passes."""
    with _connect(port, tls, timeout) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(request)
        chunks = []
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)


def status_of(answer: bytes) -> int:
    """The status code of a raw HTTP answer (0: none came)."""
    if not answer.startswith(b"HTTP/1."):
        return 0
    return int(answer.split(b" ", 2)[1])


@contextlib.contextmanager
def _connect(port: int, tls: ssl.SSLContext | None, timeout: float = 10) -> Iterator[socket.socket]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if tls is not None:
        sock = tls.wrap_socket(sock, server_hostname="127.0.0.1")
    try:
        yield sock
    finally:
        sock.close()
