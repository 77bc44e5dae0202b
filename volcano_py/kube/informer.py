"""List + watch one resource kind into a :class:`Store`, forever, surviving disconnects and ``410 Gone``.

The protocol (client-go's reflector): list with pagination and remember the list's resourceVersion. The first
list asks for ``resourceVersion=0``, which the API server answers from its watch cache (in one response where
it allows) instead of reading every page from etcd; the watch then brings whatever the cache had not seen yet.
Watch from that version with bookmarks so the version keeps advancing even when nothing we watch changes;
after a dropped connection re-watch from the last version seen (back-off between failures); when the server
says that version is too old (410, or an ERROR event with code 410) relist, and the store turns the difference
into the events that were missed.

A mirror saved by an earlier process (``mirror_file``) can take the first list's place: ``resume`` loads it
and the watch starts from its version; the API server first sends every change since, in order. The informer
counts as synced once it has caught up: it has seen a version at least as new as the one a one-item list
answered just before the watch (true at once for a kind that changes often), or the watch has been quiet for
``CATCH_UP_QUIET_SECONDS`` since it connected or last brought a change (a kind that changed little or not at
all). A version too old for the server is a 410 as above: the informer lists then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from volcano_py.kube.backoff import Backoff
from volcano_py.kube.client import (
    JSON_ACCEPT,
    METADATA_ACCEPT,
    METADATA_LIST_ACCEPT,
    NETWORK_ERRORS,
    ApiError,
    KubeClient,
)
from volcano_py.kube.kinds import ResourceKind
from volcano_py.kube.mirror_file import SavedKind
from volcano_py.kube.store import Delta, EventType, Obj, Store, resource_version, version_number
from volcano_py.log import get_logger

_log = get_logger(__name__)

Handler = Callable[[Delta], None]


# A resumed watch that has brought nothing for this long has brought what it had: the server sends the missed
# changes back to back as soon as the watch starts.
CATCH_UP_QUIET_SECONDS = 0.5


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
        list_metadata_only: bool = False,
        watch_metadata_only: bool = False,
    ) -> None:
        self.client = client
        # Lists (at start, after a 410) read the objects' metadata only; the watch still brings them whole
        # unless ``watch_metadata_only``. For an owner that needs the bodies of few of the objects that exist
        # when it starts, and reads those whole itself (``kube.client.is_partial``), or none at all.
        self.list_metadata_only = list_metadata_only or watch_metadata_only
        self.watch_metadata_only = watch_metadata_only
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
        # Set by the watch's first answer after a resume (an event, or the 410 that voids the mirror), or a
        # list: whether a resumed mirror still holds can be known this soon.
        self.answered = asyncio.Event()
        self.resumed = False  # started from a saved mirror rather than a list
        self.mirror_expired = False  # ... and that mirror was too old for the API server's watch
        self._heard_at: float | None = None  # when the watch last connected or brought a change

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

    @property
    def selection(self) -> tuple[str, ...]:
        """What this informer mirrors, as a saved mirror records it."""
        return (
            self.kind.collection_path(self.namespace),
            self.label_selector or "",
            self.field_selector or "",
        )

    def saved(self) -> SavedKind | None:
        """The mirror as it stands, to save; None before it has synced."""
        if not self.synced.is_set() or not self.resource_version:
            return None
        return SavedKind(self.selection, self.resource_version, self.store.values())

    def resume(self, saved: SavedKind) -> bool:
        """Before ``run``: start from ``saved`` instead of a list, if it mirrors what this selects."""
        if saved.selection != self.selection or not saved.resource_version or self.relists or self.resumed:
            return False
        for delta in self.store.replace(saved.items):
            self._dispatch(delta)
        self.resource_version = saved.resource_version
        self.resumed = True
        return True

    async def watchable_from(self, version: str, within: float) -> bool:
        """Whether the API server can still watch this informer's objects from ``version``: False when it
        answers 410 at once. Any other first answer, or none within ``within`` seconds (nothing changed
        since), counts as yes; so does an error, which the informer's own watch meets again."""
        query = self._selectors() | {"watch": "true", "resourceVersion": version, "timeoutSeconds": 1}
        path = self.kind.collection_path(self.namespace)
        try:
            async with asyncio.timeout(within):
                async for event in self.client.stream(path, query, read_timeout=within):
                    interpret(event)
                    return True
        except ResourceExpired:
            return False
        except ApiError as exc:
            return exc.status != 410
        except NETWORK_ERRORS:
            pass
        return True

    def expired(self, reason: str) -> None:
        """The watch's version is gone from the API server (410): relist, and a resumed mirror is void."""
        _log.info("watch expired; relisting", kind=self.kind.kind, reason=reason)
        if self.resumed and not self.relists:
            self.mirror_expired = True
        self.answered.set()

    async def list(self) -> None:
        """Relist everything (paginated) and replace the store."""
        self._heard_at = None  # a resumed watch that expired is not caught up by going quiet
        items: list[Obj] = []
        query = self._selectors() | {"limit": self.page_size}
        if not self.relists and not self.resumed:
            # Any version will do for a start: the watch from it catches up. A relist after a 410 must not
            # go back in time, so it reads the latest (the default).
            query["resourceVersion"] = "0"
        path = self.kind.collection_path(self.namespace)
        accept = METADATA_LIST_ACCEPT if self.list_metadata_only else JSON_ACCEPT
        while True:
            page = await self.client.get(path, accept=accept, **query)
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
        self.answered.set()
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
        clock = asyncio.get_running_loop().time
        heard = not self.synced.is_set()  # only a resumed mirror catching up needs to know

        def connected() -> None:
            if heard:
                self._heard_at = clock()

        accept = METADATA_ACCEPT if self.watch_metadata_only else JSON_ACCEPT
        async for event in self.client.stream(
            path, query, read_timeout=self.watch_timeout_seconds + 30, connected=connected, accept=accept
        ):
            step = interpret(event)
            self.answered.set()
            if step.event_type is not None and step.obj is not None:
                self._trim(step.obj)
                self._dispatch(self.store.apply(step.event_type, step.obj))
                if heard:
                    self._heard_at = clock()
            if step.resource_version:
                self.resource_version = step.resource_version
            self.backoff.reset()

    async def _current_version(self) -> int | None:
        """The newest version the API server has now, from a one-item list; None if it does not say."""
        query = {**self._selectors(), "limit": 1}
        page = await self.client.request("GET", self.kind.collection_path(self.namespace), query=query)
        return version_number(str((page.get("metadata") or {}).get("resourceVersion", "")))

    async def _catch_up(self) -> None:
        """Set ``synced`` once the resumed watch has caught up (see the module's docstring)."""
        clock = asyncio.get_running_loop().time
        began, resumed_at = clock(), self.resource_version
        try:
            target = await self._current_version()
        except (ApiError, *NETWORK_ERRORS) as exc:
            _log.info("no current version to catch up to; waiting for a quiet watch", error=str(exc))
            target = None
        while True:
            if self.synced.is_set():
                return  # the watch expired and a list synced it instead
            heard = self._heard_at
            seen = version_number(self.resource_version)
            if (target is not None and seen is not None and seen >= target) or (
                heard is not None and clock() - heard >= CATCH_UP_QUIET_SECONDS
            ):
                break
            await asyncio.sleep(0.02)
        self.synced.set()
        _log.info(
            "resumed mirror caught up",
            kind=self.kind.kind,
            count=len(self.store),
            seconds=round(clock() - began, 2),
            resumed_at=resumed_at,
            resource_version=self.resource_version,
        )

    async def run(self) -> None:
        """List (or catch a resumed mirror up), then watch forever; returns only when cancelled."""
        catching_up = asyncio.create_task(self._catch_up()) if self.resumed else None
        try:
            await self._list_and_watch(need_list=not self.resumed)
        finally:
            if catching_up is not None:
                catching_up.cancel()
                await asyncio.gather(catching_up, return_exceptions=True)

    async def _list_and_watch(self, *, need_list: bool) -> None:
        while True:
            try:
                if need_list:
                    await self.list()
                    need_list = False
                    self.synced.set()
                await self.watch_once()
            except ResourceExpired as exc:
                self.expired(str(exc))
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
                    self.expired(exc.message)
                    need_list = True
                    continue
                delay = self.backoff.next_delay()
                _log.warning(
                    "list/watch failed", kind=self.kind.kind, error=str(exc), retry_in=round(delay, 2)
                )
                await asyncio.sleep(delay)
            except (*NETWORK_ERRORS, ValueError) as exc:
                delay = self.backoff.next_delay()
                _log.warning(
                    "list/watch connection lost",
                    kind=self.kind.kind,
                    error=repr(exc),
                    retry_in=round(delay, 2),
                )
                await asyncio.sleep(delay)
