"""List + watch one resource kind into a :class:`Store`, forever, surviving disconnects and ``410 Gone``.

The protocol (client-go's reflector): list with pagination and remember the list's resourceVersion. The first
list asks for ``resourceVersion=0``, which the API server answers from its watch cache (in one response where
it allows) instead of reading every page from etcd; the watch then brings whatever the cache had not seen yet.
Watch from that version with bookmarks so the version keeps advancing even when nothing we watch changes;
after a dropped connection re-watch from the last version seen (back-off between failures); when the server
says that version is too old (410, or an ERROR event with code 410) relist, and the store turns the difference
into the events that were missed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from volcano_py.kube.backoff import Backoff
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import ResourceKind
from volcano_py.kube.store import Delta, EventType, Obj, Store, resource_version
from volcano_py.log import get_logger

_log = get_logger(__name__)

Handler = Callable[[Delta], None]


class ResourceExpired(Exception):
    """The watch's resourceVersion was compacted away: relist."""


@dataclass(frozen=True, slots=True)
class WatchStep:
    """What one watch line means for the informer: a delta to apply, or only a new resourceVersion."""

    event_type: EventType | None
    obj: Obj | None
    resource_version: str


def interpret(event: dict[str, Any]) -> WatchStep:
    """Decode one watch event; :class:`ResourceExpired` for a 410, :class:`ApiError` for other errors."""
    kind = event.get("type")
    obj = event.get("object")
    if not isinstance(obj, dict):
        raise ApiError(500, "BadWatchEvent", f"watch event without an object: {str(event)[:200]}")
    if kind == "ERROR":
        code = int(obj.get("code", 500))
        if code == 410:
            raise ResourceExpired(str(obj.get("message", "resourceVersion too old")))
        raise ApiError(code, str(obj.get("reason", "")), str(obj.get("message", "")), obj)
    if kind == "BOOKMARK":
        return WatchStep(None, None, resource_version(obj))
    try:
        event_type = EventType(str(kind))
    except ValueError:
        raise ApiError(500, "BadWatchEvent", f"unknown watch event type {kind!r}") from None
    return WatchStep(event_type, obj, resource_version(obj))


def _drop_field_ledger(obj: Obj) -> None:
    """Drop what no reader of a mirror needs and every object carries: ``managedFields`` (the server-side
    apply ledger) is often the largest part of a pod, and a mirror of 100,000 pods kept it for nothing. An
    update sent without it leaves the server's copy as it is."""
    meta = obj.get("metadata")
    if meta is not None:
        meta.pop("managedFields", None)


class Informer:
    """Mirrors one kind (optionally filtered by selectors); calls ``handler`` for every change, in order."""

    def __init__(
        self,
        client: KubeClient,
        kind: ResourceKind,
        handler: Handler,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        watch_timeout_seconds: int = 300,
        backoff: Backoff | None = None,
        optional: bool = False,
        trim: Callable[[Obj], None] | None = None,
    ) -> None:
        self.client = client
        # What else this mirror's owner never reads, dropped from each object as it arrives (in place).
        self.trim = trim
        self.kind = kind
        self.handler = handler
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.page_size = page_size
        self.watch_timeout_seconds = watch_timeout_seconds
        self.backoff = backoff or Backoff()
        # An optional kind (e.g. HyperNode when its CRD is not installed) counts as synced and empty on a 404.
        self.optional = optional
        self.store = Store()
        self.synced = asyncio.Event()
        self.resource_version = ""
        self.relists = 0

    def _trim(self, obj: Obj) -> None:
        _drop_field_ledger(obj)
        if self.trim is not None:
            self.trim(obj)

    def _selectors(self) -> dict[str, str | int]:
        query: dict[str, str | int] = {}
        if self.label_selector:
            query["labelSelector"] = self.label_selector
        if self.field_selector:
            query["fieldSelector"] = self.field_selector
        return query

    def _dispatch(self, delta: Delta | None) -> None:
        if delta is None:
            return
        try:
            self.handler(delta)
        except Exception:
            # One bad object must not stop the mirror; the handler's owner logs what it could not digest.
            _log.exception(
                "informer handler failed", kind=self.kind.kind, key=delta.key, change=delta.type.value
            )

    async def list(self) -> None:
        """Relist everything (paginated) and replace the store."""
        items: list[Obj] = []
        query = self._selectors() | {"limit": self.page_size}
        if not self.relists:
            # Any version will do for a start: the watch from it catches up. A relist after a 410 must not
            # go back in time, so it reads the latest (the default).
            query["resourceVersion"] = "0"
        path = self.kind.collection_path(self.namespace)
        while True:
            page = await self.client.get(path, **query)
            page_items = page.get("items") or []
            # Lists leave out kind/apiVersion on items; restore them so handlers see whole objects.
            for item in page_items:
                self._trim(item)
                item.setdefault("kind", self.kind.kind)
                item.setdefault("apiVersion", self.kind.api_version)
            items.extend(page_items)
            meta = page.get("metadata") or {}
            token = meta.get("continue")
            if not token:
                self.resource_version = str(meta.get("resourceVersion", ""))
                break
            query.pop("resourceVersion", None)  # a continued list keeps the first page's version
            query["continue"] = token
        for delta in self.store.replace(items):
            self._dispatch(delta)
        self.relists += 1
        _log.debug("listed", kind=self.kind.kind, count=len(items), resource_version=self.resource_version)

    async def watch_once(self) -> None:
        """One watch request from the current resourceVersion, applying events until the server closes it."""
        query = self._selectors() | {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "resourceVersion": self.resource_version,
            "timeoutSeconds": self.watch_timeout_seconds,
        }
        path = self.kind.collection_path(self.namespace)
        async for event in self.client.stream(path, query, read_timeout=self.watch_timeout_seconds + 30):
            step = interpret(event)
            if step.event_type is not None and step.obj is not None:
                self._trim(step.obj)
                self._dispatch(self.store.apply(step.event_type, step.obj))
            if step.resource_version:
                self.resource_version = step.resource_version
            self.backoff.reset()

    async def run(self) -> None:
        """List, then watch forever; returns only when cancelled."""
        need_list = True
        while True:
            try:
                if need_list:
                    await self.list()
                    need_list = False
                    self.synced.set()
                await self.watch_once()
            except ResourceExpired as exc:
                _log.info("watch expired; relisting", kind=self.kind.kind, reason=str(exc))
                need_list = True
            except ApiError as exc:
                if exc.not_found and self.optional:
                    for delta in self.store.replace([]):
                        self._dispatch(delta)
                    self.synced.set()
                    need_list = True
                    await asyncio.sleep(self.backoff.maximum)
                    continue
                if exc.gone:
                    _log.info("watch expired; relisting", kind=self.kind.kind, reason=exc.message)
                    need_list = True
                    continue
                delay = self.backoff.next_delay()
                _log.warning(
                    "list/watch failed", kind=self.kind.kind, error=str(exc), retry_in=round(delay, 2)
                )
                await asyncio.sleep(delay)
            except (aiohttp.ClientError, TimeoutError, ConnectionError, ValueError) as exc:
                delay = self.backoff.next_delay()
                _log.warning(
                    "list/watch connection lost",
                    kind=self.kind.kind,
                    error=repr(exc),
                    retry_in=round(delay, 2),
                )
                await asyncio.sleep(delay)
