"""How the Job controller watches Jobs, their pods and their PodGroups: two ways, one feed.

``InformerWatch`` (the default) runs informers of our own (``kube.informer``); ``KopfWatch``
(``--job-watch kopf``, an experiment kept so it can be measured again) has Kopf watch the same three kinds
with plain event handlers (registered in ``controllers/handlers.py``), and no Kopf index. Either way each
change reaches the same functions (``JobFeed``: ``job.feed`` and the flow controllers' owned-Job view) and
from them the same work queue and reconcile. ``docs/architecture.md`` has the figures that keep the
informers the default.

The Job workers must not run before the three kinds are listed (a reconcile on a half-known world counts
missing pods and creates duplicates). An informer says when it has listed; Kopf says so only to its indexes,
whose gate is what made a standby slow (``runtime/context.py``). So ``KopfWatch`` lists the objects' metadata
once itself and counts as listed when Kopf has shown each of them (or the object is gone).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.objects import namespace_of, uid_of, without_managed_fields
from volcano_py.controllers.job.feed import job_changed, job_pod_changed, podgroup_changed
from volcano_py.controllers.runtime.context import ControllerContext
from volcano_py.kube.client import KubeClient
from volcano_py.kube.informer import Informer
from volcano_py.kube.kinds import JOBS, PODGROUPS, PODS, ResourceKind, object_key
from volcano_py.kube.store import Delta, EventType, Obj
from volcano_py.kube.waiting import event_within
from volcano_py.log import get_logger

_log = get_logger(__name__)

INFORMER_WATCH = "informer"
KOPF_WATCH = "kopf"
JOB_WATCHES = (INFORMER_WATCH, KOPF_WATCH)
# Job pods are selected server-side by this label, whichever way they are watched.
JOB_POD_SELECTOR = c.JOB_NAME_KEY
# A Kopf listing that has shown nothing new for this long is checked against the API: what it still waits
# for may have been deleted before Kopf listed it.
STALL_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class JobFeed:
    """The three kinds' handlers, whatever watches them: the context's mirrors, then the work queues."""

    ctx: ControllerContext
    job_seen: Callable[[Delta], None]  # the flow controllers' view of the Jobs they own

    def job(self, delta: Delta) -> None:
        job_changed(self.ctx, delta)
        self.job_seen(delta)

    def podgroup(self, delta: Delta) -> None:
        podgroup_changed(self.ctx, delta)

    def pod(self, delta: Delta) -> None:
        job_pod_changed(self.ctx, delta)


class InformerWatch:
    """Informers of our own, one per kind and namespace (the pods by a server-side label selector)."""

    def __init__(self, client: KubeClient, feed: JobFeed, scopes: Sequence[str | None]) -> None:
        self.informers = [
            *(Informer(client, JOBS, feed.job, namespace=ns) for ns in scopes),
            *(Informer(client, PODGROUPS, feed.podgroup, namespace=ns) for ns in scopes),
            *(Informer(client, PODS, feed.pod, namespace=ns, label_selector=JOB_POD_SELECTOR)
              for ns in scopes),
        ]  # fmt: skip

    async def run(self) -> None:
        await asyncio.gather(*(informer.run() for informer in self.informers))

    async def listed(self) -> None:
        await asyncio.gather(*(informer.synced.wait() for informer in self.informers))


# Kopf's event types as the informers' (a listed object comes with type None).
_KOPF_TYPES: Mapping[str | None, EventType] = {
    None: EventType.ADDED,
    "ADDED": EventType.ADDED,
    "MODIFIED": EventType.MODIFIED,
    "DELETED": EventType.DELETED,
}


def delta_of(event: Mapping[str, Any]) -> Delta | None:
    """A Kopf raw event as the informers' delta, without the server-side apply ledger (as the informers
    keep none); None for an event type that carries no object change."""
    event_type = _KOPF_TYPES.get(event.get("type"))
    raw = event.get("object")
    if event_type is None or not isinstance(raw, dict):
        return None
    body: Obj = without_managed_fields(raw)
    return Delta(event_type, object_key(body), None, body)


@dataclass(slots=True)
class _Listing:
    """One selection's objects at the start, by uid, until Kopf has shown each of them."""

    informer: Informer  # lists the selection's metadata only; never runs
    waiting: set[str] | None = None  # None until listed
    shown: set[str] = field(default_factory=set)  # shown before the list came back
    progress: asyncio.Event = field(default_factory=asyncio.Event)

    def show(self, uid: str) -> None:
        if self.waiting is None:
            self.shown.add(uid)
        else:
            self.waiting.discard(uid)
        self.progress.set()

    async def list_uids(self) -> set[str]:
        await self.informer.list()
        return {uid_of(obj) for obj in self.informer.store.values()}

    async def wait_until_shown(self) -> None:
        self.waiting = await self.list_uids() - self.shown
        self.shown.clear()
        while self.waiting:
            self.progress.clear()
            if not await event_within(self.progress, STALL_SECONDS):
                # Nothing shown for a while: keep waiting only for objects that still exist.
                self.waiting &= await self.list_uids()


def _noop(_delta: Delta) -> None:
    return None


class KopfWatch:
    """Kopf's event handlers feed the Job controller (see the module's docstring)."""

    def __init__(self, client: KubeClient, feed: JobFeed, scopes: Sequence[str | None]) -> None:
        self.feed = feed
        self._listings: dict[ResourceKind, list[_Listing]] = {
            kind: [
                _Listing(Informer(client, kind, _noop, namespace=ns, label_selector=selector,
                                  list_metadata_only=True))
                for ns in scopes
            ]
            for kind, selector in ((JOBS, None), (PODGROUPS, None), (PODS, JOB_POD_SELECTOR))
        }  # fmt: skip

    def _shown(self, kind: ResourceKind, delta: Delta) -> None:
        namespace = namespace_of(delta.new)
        for listing in self._listings[kind]:
            if listing.informer.namespace in (None, namespace):
                listing.show(uid_of(delta.new))

    def _take(self, kind: ResourceKind, handle: Callable[[Delta], None], event: Mapping[str, Any]) -> None:
        delta = delta_of(event)
        if delta is None:
            return
        try:
            handle(delta)
        except Exception:  # as an informer does: one bad object must not stop the rest
            _log.exception("job watch handler failed", kind=kind.kind, key=delta.key, change=delta.type.value)
        self._shown(kind, delta)

    def job_event(self, event: Mapping[str, Any]) -> None:
        self._take(JOBS, self.feed.job, event)

    def podgroup_event(self, event: Mapping[str, Any]) -> None:
        self._take(PODGROUPS, self.feed.podgroup, event)

    def pod_event(self, event: Mapping[str, Any]) -> None:
        self._take(PODS, self.feed.pod, event)

    async def run(self) -> None:
        """Nothing to run: Kopf watches. Returns only when cancelled, as the informers' run does."""
        await asyncio.Event().wait()

    async def listed(self) -> None:
        await asyncio.gather(
            *(listing.wait_until_shown() for group in self._listings.values() for listing in group)
        )
        _log.debug("kopf has shown every listed object", kinds=[kind.plural for kind in self._listings])
