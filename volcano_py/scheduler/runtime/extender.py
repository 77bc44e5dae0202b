"""HTTP scheduler extenders, the I/O half: ask before a session, tell after it.

The core's ``consult`` says what to ask (Volcano's request bodies, built from the cycle's snapshot); this
module POSTs them to ``<extender.urlPrefix>/<verb>`` and turns what comes back into ``ExtenderAnswers`` for
the session. As Volcano's plugin: ``onSessionOpen`` first (when it fails and the extender is not
``extender.ignorable``, nothing else is asked, as Volcano's plugin then registers nothing); then, all at
once (at most ``concurrency`` in flight, each within ``extender.httpTimeout``), the predicate for every
pending task the extender is interested in on every node, jobEnqueueable for every Pending job with
``minResources`` and queueOverused for every queue with pending pods; then prioritize for each task over the
nodes its predicate passed (when two or more did: with one candidate Volcano asks no score); after the
session, ``onSessionClose``. A call fails on a refused connection, a timeout, an HTTP status other than
200, an answer over 10 MiB or one that is not the verb's JSON; the session reads failures by
``extender.ignorable``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from volcano_py.api.extender import MAX_RESPONSE_BYTES
from volcano_py.log import get_logger
from volcano_py.scheduler.core import (
    CallFailed,
    Consultation,
    ExtenderAnswers,
    ExtenderConf,
    Refusal,
    passed_nodes,
    predicate_body,
    prioritize_body,
    read_enqueueable,
    read_overused,
    read_predicate,
    read_prioritize,
)

_log = get_logger(__name__)

# Calls in flight at once, over all verbs of one cycle.
DEFAULT_CONCURRENCY = 32
_NO_BODY = b"{}"


class ExtenderClient:
    """One HTTP client for the scheduler's extender calls (created on first use, in the running loop)."""

    def __init__(self, concurrency: int = DEFAULT_CONCURRENCY) -> None:
        self.concurrency = concurrency
        self._http: aiohttp.ClientSession | None = None
        self._slots = asyncio.Semaphore(concurrency)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None

    def _client(self) -> aiohttp.ClientSession:
        if self._http is None:
            self._http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self.concurrency))
        return self._http

    async def post(self, conf: ExtenderConf, verb: str, body: bytes, *, read: bool = True) -> Any:
        """POST ``body`` to the verb's URL: the decoded JSON answer (None when ``read`` is false), or a
        ``CallFailed`` saying why there is none."""
        url = conf.url(verb)
        try:
            async with (
                self._slots,
                self._client().post(
                    url,
                    data=body,
                    headers={"Content-Type": "application/json"},
                    timeout=aiohttp.ClientTimeout(total=conf.timeout),
                ) as response,
            ):
                if response.status != 200:
                    # Volcano's words for it.
                    return CallFailed(f"failed {verb} with extender at URL {url}, code {response.status}")
                if not read:
                    return None
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.content.iter_chunked(1 << 16):
                    size += len(chunk)
                    if size > MAX_RESPONSE_BYTES:
                        return CallFailed(f"{verb} at {url}: answer over {MAX_RESPONSE_BYTES} bytes")
                    chunks.append(chunk)
            return json.loads(b"".join(chunks))
        except TimeoutError:
            return CallFailed(f"{verb} at {url}: no answer within {conf.timeout:g}s (extender.httpTimeout)")
        except aiohttp.ClientError as exc:
            return CallFailed(f"{verb} at {url}: {exc or type(exc).__name__}")
        except ValueError as exc:  # not JSON, or not UTF-8
            return CallFailed(f"{verb} at {url}: the answer is not JSON ({exc})")

    async def ask(self, consulted: Consultation) -> ExtenderAnswers:
        """Every question of ``consulted``, answered or failed."""
        conf = consulted.conf
        opened: CallFailed | None = None
        if consulted.open_body is not None:
            got = await self.post(conf, conf.on_session_open, consulted.open_body, read=False)
            if isinstance(got, CallFailed):
                _log.warning("extender onSessionOpen failed", error=got.message, ignorable=conf.ignorable)
                opened = got
                if not conf.ignorable:
                    return ExtenderAnswers(opened=opened)
        fits: dict[str, dict[str, Refusal | CallFailed]] = {}
        enqueueable: dict[str, int | CallFailed] = {}
        overused: dict[str, bool | CallFailed] = {}
        failed: list[CallFailed] = []

        async def fit(uid: str, task: bytes, node: str, body: bytes) -> None:
            got = await self.post(conf, conf.predicate, predicate_body(task, body))
            answer = got if isinstance(got, CallFailed) else read_predicate(got)
            if answer is not None:
                fits.setdefault(uid, {})[node] = answer
                if isinstance(answer, CallFailed):
                    failed.append(answer)

        async def admit(uid: str, body: bytes) -> None:
            got = await self.post(conf, conf.job_enqueueable, body)
            answer = enqueueable[uid] = got if isinstance(got, CallFailed) else read_enqueueable(got)
            if isinstance(answer, CallFailed):
                failed.append(answer)

        async def weigh(name: str, body: bytes) -> None:
            got = await self.post(conf, conf.queue_overused, body)
            answer = overused[name] = got if isinstance(got, CallFailed) else read_overused(got)
            if isinstance(answer, CallFailed):
                failed.append(answer)

        await asyncio.gather(
            *(admit(uid, body) for uid, body in consulted.jobs),
            *(weigh(name, body) for name, body in consulted.queues),
            *(
                fit(uid, t, name, n)
                for uid, t in (consulted.tasks if consulted.ask_predicate else ())
                for name, n in consulted.nodes
            ),
        )
        scores: dict[str, dict[str, float] | CallFailed] = {}
        if consulted.ask_prioritize:

            async def rank(uid: str, task: bytes) -> None:
                nodes = passed_nodes(consulted, fits.get(uid, {}))
                if len(nodes) < 2:
                    return
                got = await self.post(conf, conf.prioritize, prioritize_body(task, nodes))
                answer = got if isinstance(got, CallFailed) else read_prioritize(got)
                scores[uid] = dict(answer) if not isinstance(answer, CallFailed) else answer
                if isinstance(answer, CallFailed):
                    failed.append(answer)

            await asyncio.gather(*(rank(uid, t) for uid, t in consulted.tasks))
        if failed:
            # One line per cycle, not one per call: a dead extender fails every (task, node) pair.
            _log.warning(
                "extender calls failed", count=len(failed), first=failed[0].message, ignorable=conf.ignorable
            )
        return ExtenderAnswers(
            opened=opened,
            asked=frozenset(uid for uid, _ in consulted.tasks),
            fits=fits,
            scores=scores,
            enqueueable=enqueueable,
            overused=overused,
        )

    async def closed(self, consulted: Consultation) -> None:
        """Tell the extender the session is over (``onSessionClose``, with the empty object Volcano sends)."""
        conf = consulted.conf
        if not conf.on_session_close:
            return
        got = await self.post(conf, conf.on_session_close, _NO_BODY, read=False)
        if isinstance(got, CallFailed):
            _log.warning("extender onSessionClose failed", error=got.message)
