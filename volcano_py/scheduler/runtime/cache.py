"""The scheduler's mirror of the cluster, as the next session reads it.

Informers keep plain-dict copies of nodes, pods, PodGroups, Queues, PriorityClasses and HyperNodes; with
sharding on (``sharding``) the NodeShards too, so a shard's change reaches the next snapshot without a
restart. Every change bumps ``generation``, which runs a cycle. Around the informers the cache keeps:

* the binder's promises (``promises``): binds, evictions, claims and PodGroup statuses on their way, which
  every snapshot shows as made until the watch shows them;
* the pacing's signals (``arrivals``): when a pod came that a cycle may place (``last_arrival``), whether it
  made its gang whole (``last_whole``), and when other news came (``last_news``);
* the nodes' load as the metrics collector last read it (``set_node_usage``), which every snapshot carries;
* given a ``MirrorFile``, its informers' mirrors on disk (``saved_mirror``), which a restart resumes from.

The cache never decides anything: the scheduling core reads its ``ClusterObjects`` and decides.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.bodies.pod import drop_status_fields
from volcano_py.api.bodies.podgroup import podgroup_queue
from volcano_py.api.bodies.queue import queue_capability, queue_spec_parent
from volcano_py.api.objects import name_of
from volcano_py.api.scheduling import QueueState
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.informer import Informer
from volcano_py.kube.kinds import (
    NODESHARDS,
    PODGROUPS,
    PODS,
    QUEUES,
    RESOURCE_CLAIMS,
    SESSION_KINDS,
    ResourceKind,
)
from volcano_py.kube.mirror_file import MirrorFile
from volcano_py.kube.store import Delta, EventType, Obj
from volcano_py.kube.waiting import event_within
from volcano_py.log import get_logger
from volcano_py.resources import QuantityError, Resource
from volcano_py.scheduler.core import ClusterObjects, NodeUsage
from volcano_py.scheduler.framework.decisions import ClaimWrite
from volcano_py.scheduler.runtime.arrivals import Arrival, Arrivals
from volcano_py.scheduler.runtime.promises import Promises
from volcano_py.scheduler.runtime.promises import bound_view as bound_view  # imported from here too
from volcano_py.scheduler.runtime.queue_charges import QueueCharges
from volcano_py.scheduler.runtime.saved_mirror import SavedMirror
from volcano_py.scheduler.runtime.shown_pods import ShownPods

_log = get_logger(__name__)

# A pod's status parts no scheduler code reads, yet about a seventh of a mirrored pod's memory (more with
# several containers): dropped as pods arrive. The phase, conditions, start time and nominated node stay.
_UNREAD_POD_STATUS = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses", "podIPs",
                      "hostIPs")  # fmt: skip


def _trim_pod(pod: Obj) -> None:
    drop_status_fields(pod, _UNREAD_POD_STATUS)


class SchedulerCache:
    """Informers plus the binder's promises. ``run()`` mirrors; ``snapshot()`` is sync and cheap."""

    def __init__(
        self,
        client: KubeClient,
        *,
        scheduler_names: Sequence[str] = (c.SCHEDULER_NAME,),
        mirror: MirrorFile | None = None,
        sharding: bool = False,
        partners: Sequence[str] = (),
        shown_as: Callable[[Obj], Obj] | None = None,
    ) -> None:
        """``sharding``: mirror the NodeShards too (a scheduler run with a sharding mode other than none);
        ``partners``: the schedulers whose pods this one counts in their queues (``queue_charges``);
        ``shown_as``: each pod as the sessions see it (the agent scheduler shows its own as another
        scheduler's but those an attempt places: ``snapshot(placing=...)``), kept as the watch brings them
        (``ShownPods``)."""
        if not scheduler_names:
            raise ValueError("scheduler_names must name at least one scheduler (e.g. 'volcano')")
        self.client = client
        # Set once the saved mirror (if any) is loaded, before the watches catch it up; ``resumed``: it was.
        self.loaded = asyncio.Event()
        self.resumed = False
        self.save_waits: Callable[[], bool] = lambda: False
        self.scheduler_names = frozenset(scheduler_names)
        self.generation = 0
        # When the newest pending pod of ours was seen (monotonic), and a signal for it: see ``pacing``.
        self.last_arrival = float("-inf")
        # When the newest such pod was one a cycle can place at once: its gang has all of its minMember pods.
        self.last_whole = float("-inf")
        self.arrival = asyncio.Event()
        # When something else came that a cycle may have to place: a new PodGroup (a Volcano Job's pods come
        # once enqueue admits it), a bind that failed (its pod waits again).
        self.last_news = float("-inf")
        self.arrivals = Arrivals(self.scheduler_names, self.podgroup)
        extras = {PODS: self._on_pod, RESOURCE_CLAIMS: self._on_claim, PODGROUPS: self._on_podgroup}
        self.node_usage: dict[str, NodeUsage] = {}
        # Called with every change the watches bring, before the cache's own bookkeeping (the agent
        # scheduler's queue is fed here).
        self.watchers: list[Callable[[ResourceKind, Delta], None]] = []
        self.charges = QueueCharges(partners, self.podgroup_queue) if partners else None
        if self.charges is not None:
            self.watchers.append(self.charges.observe)
        self.informers: dict[str, Informer] = {
            field: self._informer(kind, extras.get(kind), optional=optional)
            for field, kind, optional in SESSION_KINDS
        }
        if sharding:  # optional: without the CRD there are no shards, so no nodes in hard mode
            self.informers["nodeshards"] = self._informer(NODESHARDS, optional=True)
        stores = {name: informer.store for name, informer in self.informers.items()}
        self.shown = ShownPods(shown_as) if shown_as is not None else None
        self.promises = Promises(
            stores["pods"],
            stores["podgroups"],
            stores["resource_claims"],
            changed=self._changed,
            shown=self.shown,
        )
        self.saved_mirror = SavedMirror(mirror, self) if mirror is not None else None

    def _changed(self) -> None:
        self.generation += 1

    def _informer(self, kind: ResourceKind, extra: Any = None, *, optional: bool = False) -> Informer:
        def handle(delta: Delta) -> None:
            self.generation += 1
            for watcher in self.watchers:
                watcher(kind, delta)
            if extra is not None:
                extra(delta)

        return Informer(
            self.client, kind, handle, optional=optional, trim=_trim_pod if kind is PODS else None
        )

    # --- mirror ---------------------------------------------------------------------------------------------

    async def run(self) -> None:
        if self.saved_mirror is not None:
            self.resumed = await self.saved_mirror.resume()
        self.loaded.set()
        async with asyncio.TaskGroup() as group:
            for informer in self.informers.values():
                group.create_task(informer.run())
            if self.saved_mirror is not None:
                group.create_task(self.saved_mirror.keep())

    async def wait_synced(self) -> None:
        await asyncio.gather(*(informer.synced.wait() for informer in self.informers.values()))

    @property
    def synced(self) -> bool:
        return all(informer.synced.is_set() for informer in self.informers.values())

    async def save_mirror(self) -> bool:
        """Write the mirrors on disk as they stand now; whether it was written (never without a file)."""
        return self.saved_mirror is not None and await self.saved_mirror.save()

    def mirror_expired(self) -> bool:
        """Whether a resumed mirror proved older than the API server's watch history (its kind relists)."""
        return any(informer.mirror_expired for informer in self.informers.values())

    async def first_answer(self, kind: str, within: float) -> None:
        """Until the resumed watch of ``kind`` has first answered (with the 410 of an expired mirror, if it
        is one), for at most ``within`` seconds: a quiet cluster may have nothing to send."""
        informer = self.informers[kind]
        if informer.resumed:
            await event_within(informer.answered, within)

    # --- what the watches bring, beyond the mirror ----------------------------------------------------------

    def _on_pod(self, delta: Delta) -> None:
        if self.shown is not None:
            self.shown.observe(delta)
        arrival = self.arrivals.seen(delta)
        if arrival is not Arrival.NONE:
            self.last_arrival = time.monotonic()
            if arrival is Arrival.WHOLE:
                self.last_whole = self.last_arrival
            self.arrival.set()
        self.promises.pod_seen(delta)

    def _on_podgroup(self, delta: Delta) -> None:
        if delta.type is EventType.ADDED:
            self.last_news = time.monotonic()
        self.promises.podgroup_seen(delta)

    def _on_claim(self, delta: Delta) -> None:
        self.promises.claim_seen(delta)

    # --- lookups --------------------------------------------------------------------------------------------

    def node_names(self) -> list[str]:
        nodes = self.informers["nodes"].store.values()
        return [name_of(node) for node in nodes]

    def set_node_usage(self, usage: dict[str, NodeUsage]) -> None:
        """The nodes' load as just read; a changed load is news (a node may have cooled below a threshold)."""
        changed = {n: (u.cpu, u.memory) for n, u in usage.items()} != {
            n: (u.cpu, u.memory) for n, u in self.node_usage.items()
        }
        self.node_usage = usage
        if changed:
            self.generation += 1

    def nodeshards(self) -> list[Obj]:
        """The NodeShards as last seen (none when sharding is off)."""
        informer = self.informers.get("nodeshards")
        return informer.store.values() if informer is not None else []

    def pod(self, key: str) -> Obj | None:
        return self.informers["pods"].store.get(key)

    def podgroup(self, key: str) -> Obj | None:
        return self.informers["podgroups"].store.get(key)

    def queue(self, name: str) -> Obj | None:
        return self.informers["queues"].store.get(name)

    def podgroup_queue(self, key: str) -> str | None:
        podgroup = self.podgroup(key)
        return podgroup_queue(podgroup) if podgroup else None

    def queue_capability(self, name: str) -> Resource | None:
        """The ``capability`` that bounds a Queue: its own, else its nearest ancestor's (None: unbounded).
        Two schedulers could both take the last of such a Queue's room (``queue_room``)."""
        seen: set[str] = set()
        while name and name not in seen:
            seen.add(name)
            queue = self.queue(name)
            if queue is None:
                return None
            capability = queue_capability(queue)
            if capability:
                try:
                    return Resource.parse(capability)
                except (QuantityError, TypeError, AttributeError):
                    return None  # the session refuses the Queue, and says so
            name = queue_spec_parent(queue)
        return None

    def watch_version(self) -> str:
        """How far the pods watch has got (its last resourceVersion)."""
        return self.informers["pods"].resource_version

    # --- promises (see ``promises``) ------------------------------------------------------------------------

    def assume(self, pod_key: str, uid: str, node: str, annotations: Mapping[str, str] | None = None) -> None:
        self.promises.assume(pod_key, uid, node, annotations)

    def forget(self, pod_key: str) -> None:
        self.last_news = time.monotonic()  # the pod waits again
        self.promises.forget(pod_key)

    def assumed_node(self, pod_key: str) -> str | None:
        return self.promises.assumed_node(pod_key)

    def assume_claims(self, pod_name: str, pod_uid: str, writes: Sequence[ClaimWrite]) -> None:
        self.promises.assume_claims(pod_name, pod_uid, writes)

    def forget_claims(self, pod_uid: str) -> None:
        self.promises.forget_claims(pod_uid)

    def mark_evicting(self, pod_key: str, uid: str) -> None:
        self.promises.mark_evicting(pod_key, uid)

    def unmark_evicting(self, pod_key: str) -> None:
        self.promises.unmark_evicting(pod_key)

    def promise_status(self, key: str, status: Obj) -> None:
        self.promises.promise_status(key, status)

    def status_written(self, key: str, status: Obj) -> None:
        self.promises.status_written(key, status)

    def withdraw_status(self, key: str, status: Obj | None = None) -> None:
        self.promises.withdraw_status(key, status)

    def promised_status(self, key: str) -> Obj | None:
        return self.promises.promised_status(key)

    # --- the session's view ---------------------------------------------------------------------------------

    def snapshot(
        self,
        *,
        placing: Collection[str] = (),
        podgroups: bool = True,
    ) -> ClusterObjects:
        """The cluster as the next session sees it. ``placing``: pods shown as they are rather than as
        ``shown_as`` shows them (those an agent scheduler's attempt places); ``podgroups``: False leaves them
        out (the agent scheduler places pods one by one, gangs are the batch scheduler's)."""
        # Shared lists: the session's views tell an unchanged kind by the list's identity.
        read: dict[str, Any] = {
            field: self.informers[field].store.shared_values()
            for field, _, _ in SESSION_KINDS
            if field not in ("pods", "podgroups", "resource_claims")
        }
        # The promised kinds come with the binds, evictions and writes promised but not yet seen in a watch.
        return ClusterObjects(
            **read,
            pods=self.promises.pods(placing),
            podgroups=self.promises.podgroups() if podgroups else [],
            resource_claims=self.promises.claims(),
            nodeshards=self.nodeshards(),
            node_usage=self.node_usage,
            generation=self.generation,
            queue_charges=self.charges.sums() if self.charges is not None else {},
        )

    # --- start-up -------------------------------------------------------------------------------------------

    async def ensure_default_queues(self) -> list[str]:
        """Create the ``root`` and ``default`` queues when missing (as Volcano does); return those created."""
        created: list[str] = []
        for name, reclaimable in ((c.ROOT_QUEUE, False), (c.DEFAULT_QUEUE, True)):
            if self.queue(name) is not None:
                continue
            spec: dict[str, Any] = {"weight": 1, "reclaimable": reclaimable}
            if name == c.DEFAULT_QUEUE:
                spec["parent"] = c.ROOT_QUEUE
            body: Obj = {
                "apiVersion": c.SCHEDULING_API_VERSION,
                "kind": c.QUEUE_KIND,
                "metadata": {"name": name},
                "spec": spec,
            }
            try:
                await self.client.create(QUEUES.collection_path(), body)
                created.append(name)
            except ApiError as exc:
                if not exc.conflict:
                    raise
                continue
            try:
                await self.client.patch(
                    QUEUES.object_path(name, None, "status"), {"status": {"state": QueueState.OPEN.value}}
                )
            except ApiError as exc:
                _log.warning("could not open the new queue", queue=name, error=str(exc))
        if created:
            _log.info("created missing queues", queues=created)
        return created
