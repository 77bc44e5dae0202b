"""The scheduler's mirror of the cluster, and what it has promised but the API has not yet confirmed.

Informers keep plain-dict copies of nodes, pods, PodGroups, Queues, PriorityClasses and HyperNodes. On top of
them the cache remembers two kinds of promise the binder made:

* *assumed* binds: a pod whose bind was sent counts as bound on its node in every snapshot until the watch
  shows it bound (or deleted), so the next cycle cannot place it, or another pod into its room, twice; a
  failed bind is ``forget()``-ed and the pod is pending again;
* *evictions* in flight: a pod whose delete was sent counts as releasing until the watch shows it terminating;
* *claims* being written with a bind: a ResourceClaim counts as allocated and reserved for its pod until the
  watch shows it so (or the bind fails), so the next cycle does not hand its devices to another pod;
* *PodGroup statuses* being written: a PodGroup shows the status the binder is writing until the watch
  brings a newer version of it (or the write fails), so the next cycle neither admits a gang again that
  enqueue admitted nor offers the same status again while the write is on its way.

With sharding on (``sharding``), it also mirrors the NodeShards, so a shard's change reaches the next
snapshot (and bumps the generation, which runs a cycle) without a restart.

It also holds the nodes' load as the metrics collector last read it (``set_node_usage``), which every snapshot
carries. The cache never decides anything: the scheduling core reads its ``ClusterObjects`` and decides.

Given a ``MirrorFile``, the cache saves its informers' mirrors once synced, then every
``MIRROR_SAVE_SECONDS`` while anything changes (and when the process stops), and a process started on that
file resumes the watches from it instead of listing the cluster again. The file must come from this cluster:
it names the uid of the ``root`` Queue, which every cluster with this scheduler has, and is read only when the
API server shows the same uid. A save waits while ``save_waits`` says so (the binder's backlog: encoding
100,000 objects takes a second of CPU the binds need), ``SAVE_WAIT_LIMIT`` at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp

from volcano_py.api import constants as c
from volcano_py.api.common import now_time
from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.api.scheduling import QueueState, group_key_of, min_member_of
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
from volcano_py.kube.mirror_file import MirrorFile, SavedKind
from volcano_py.kube.store import Delta, EventType, Obj
from volcano_py.log import get_logger
from volcano_py.resources import QuantityError, Resource
from volcano_py.scheduler.core import ClusterObjects, NodeUsage
from volcano_py.scheduler.framework.decisions import ClaimWrite
from volcano_py.scheduler.runtime.queue_charges import QueueCharges

_log = get_logger(__name__)


@dataclass(slots=True)
class _Assumed:
    uid: str
    node: str
    # What the bind writes on the pod with the node (the chosen GPU cards), so the next snapshot counts them.
    annotations: Mapping[str, str] = field(default_factory=dict)
    # The informer's pod and the bound view made of it: the same view while the pod is unchanged, so the
    # core's records read it once, not once per cycle until the watch shows the bind.
    seen: Obj | None = None
    view: Obj | None = None

    def view_of(self, pod: Obj) -> Obj:
        if self.seen is not pod or self.view is None:
            self.seen, self.view = pod, bound_view(pod, self.node, self.annotations)
        return self.view


def _uid(obj: Obj) -> str:
    return str(obj.get("metadata", {}).get("uid", ""))


_OVER = (PodPhase.SUCCEEDED, PodPhase.FAILED)


def _unbound(pod: Obj) -> bool:
    """Not on a node yet and not over: waiting for a scheduler."""
    return not (pod.get("spec") or {}).get("nodeName") and pod_phase(pod) not in _OVER


def bound_view(pod: Obj, node: str, annotations: Mapping[str, str]) -> Obj:
    """The pod as its bind to ``node`` will leave it: what the cache shows of an assumed pod."""
    bound = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node}}
    if annotations:
        meta = pod.get("metadata") or {}
        bound["metadata"] = {**meta, "annotations": {**(meta.get("annotations") or {}), **annotations}}
    return bound


@dataclass(slots=True)
class _AssumedClaim:
    """A claim's promised state: its uid, the allocation the binds write (None: it had one), and the pods
    (uid -> name) it is being reserved for."""

    uid: str
    allocation: Mapping[str, Any] | None
    pods: dict[str, str] = field(default_factory=dict)

    def shown_in(self, claim: Obj) -> bool:
        status = claim.get("status") or {}
        reserved = {r.get("uid") for r in status.get("reservedFor") or ()}
        return status.get("allocation") is not None and all(uid in reserved for uid in self.pods)

    def view_of(self, claim: Obj) -> Obj:
        status = dict(claim.get("status") or {})
        if status.get("allocation") is None and self.allocation is not None:
            status["allocation"] = dict(self.allocation)
        reserved = list(status.get("reservedFor") or [])
        have = {r.get("uid") for r in reserved}
        for uid, name in self.pods.items():
            if uid not in have:
                reserved.append({"resource": "pods", "name": name, "uid": uid})
        status["reservedFor"] = reserved
        return {**claim, "status": status}


def _terminating(pod: Obj) -> Obj:
    return {**pod, "metadata": {**(pod.get("metadata") or {}), "deletionTimestamp": now_time()}}


# A promised status whose write has answered, but which the watch never confirms nor replaces (a lost event),
# is dropped this long after the answer: the next cycle then offers the status again. A write still queued
# keeps its promise however long it waits (a backlog's status writes wait behind its binds).
STATUS_PROMISE_SECONDS = 60.0


@dataclass(slots=True)
class _PromisedStatus:
    """A PodGroup status being written, shown on the informer's PodGroup it was promised on (``base``)."""

    base: Obj
    status: Obj
    view: Obj
    # When its write answered (None: still on its way).
    written: float | None = None


# A pod's status parts no scheduler code reads, yet about a seventh of a mirrored pod's memory (more with
# several containers): dropped as pods arrive. The phase, conditions, start time and nominated node stay.
_UNREAD_POD_STATUS = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses", "podIPs",
                      "hostIPs")  # fmt: skip


def _trim_pod(pod: Obj) -> None:
    status = pod.get("status")
    if status:
        for name in _UNREAD_POD_STATUS:
            status.pop(name, None)


# How long the probe of a saved mirror waits for the API server's first word: a watch from a version still
# held answers at once with what changed since, or with nothing at all if nothing did.
PROBE_SECONDS: Final = 0.5
PROBED_KINDS: Final = ("pods", "podgroups")
# A mirror saved this recently is read without the probe: kube-apiserver keeps each kind's watch events for
# 75 s and more (its watch cache grows to hold that much), so the probe would mostly wait out a quiet
# cluster's silence. Should the history be shorter (a very busy cluster), the watch's 410 still voids it.
RECENT_MIRROR_SECONDS: Final = 60.0
# How often a changing mirror is saved: a restart resumes from at most this long ago, well within the
# API server's watch window (its watch cache keeps at least the last 75 s of changes).
MIRROR_SAVE_SECONDS = 30.0
# How long a periodic save may wait for ``save_waits`` to clear.
SAVE_WAIT_LIMIT: Final = 120.0


class SchedulerCache:
    """Informers plus the assume/evict overlay. ``run()`` mirrors; ``snapshot()`` is sync and cheap."""

    def __init__(
        self,
        client: KubeClient,
        *,
        scheduler_names: Sequence[str] = (c.SCHEDULER_NAME,),
        mirror: MirrorFile | None = None,
        sharding: bool = False,
        partners: Sequence[str] = (),
    ) -> None:
        """``sharding``: mirror the NodeShards too (a scheduler run with a sharding mode other than none);
        ``partners``: the schedulers whose pods this one counts in their queues (``queue_charges``)."""
        if not scheduler_names:
            raise ValueError("scheduler_names must name at least one scheduler (e.g. 'volcano')")
        self.client = client
        self.mirror = mirror
        # Set once the saved mirror (if any) is loaded, before the watches catch it up; ``resumed``: it was.
        self.loaded = asyncio.Event()
        self._saving = asyncio.Lock()
        self.resumed = False
        self._mirror_failed = False  # said once: a directory we cannot write is not news every 30 s
        self.save_waits: Callable[[], bool] = lambda: False
        self.scheduler_names = frozenset(scheduler_names)
        self.generation = 0
        self._assumed: dict[str, _Assumed] = {}
        # The assumed pods as snapshots show them (bound), kept as binds are assumed and as the watch brings
        # their pods: a backlog assumes tens of thousands at once, and each cycle would look at them all.
        self._assumed_shown: dict[str, Obj] = {}
        self._evicting: dict[str, str] = {}
        self._claims: dict[str, _AssumedClaim] = {}
        self._statuses: dict[str, _PromisedStatus] = {}
        # Evicting pods as shown (terminating), by the informer's pod: the same view while it is unchanged.
        self._terminating: dict[str, tuple[Obj, Obj]] = {}
        # When the newest pending pod of ours was seen (monotonic), and a signal for it: see ``pacing``.
        self.last_arrival = float("-inf")
        # When the newest such pod was one a cycle can place at once: its gang has all of its minMember pods.
        self.last_whole = float("-inf")
        self.arrival = asyncio.Event()
        # When something else came that a cycle may have to place: a new PodGroup (a Volcano Job's pods come
        # once enqueue admits it), a bind that failed (its pod waits again).
        self.last_news = float("-inf")
        # Pods of ours per PodGroup key (``namespace/name``), from the pods watch: whether a gang is whole.
        self._group_pods: dict[str, int] = {}
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

    # --- mirror -------------------------------------------------------------------------------------------

    async def run(self) -> None:
        if self.mirror is not None:
            await self._resume(self.mirror)
        self.loaded.set()
        async with asyncio.TaskGroup() as group:
            for informer in self.informers.values():
                group.create_task(informer.run())
            if self.mirror is not None:
                group.create_task(self._keep_mirror())

    # --- the mirror on disk ---------------------------------------------------------------------------------

    async def _cluster_uid(self) -> str | None:
        """This cluster's mark in a mirror file: the uid of its root Queue (None: no root Queue yet). Listed
        by name: the scheduler's role may list Queues but not get one."""
        try:
            found = await self.client.get(
                QUEUES.collection_path(), fieldSelector=f"metadata.name={c.ROOT_QUEUE}"
            )
        except (ApiError, aiohttp.ClientError, TimeoutError) as exc:
            # Not found: no Queue CRD yet, so no mirror of this cluster either; nothing to warn about.
            if not (isinstance(exc, ApiError) and exc.not_found):
                _log.warning("cannot tell which cluster this is; listing it", error=str(exc))
            return None
        return next((uid for root in found.get("items") or () if (uid := _uid(root))), None)

    async def _resume(self, mirror: MirrorFile) -> None:
        began = time.monotonic()
        cluster = await self._cluster_uid()
        if cluster is None:
            return
        asked = time.monotonic()
        if not await self._watchable(mirror, cluster):
            return
        probed = time.monotonic()
        saved = await asyncio.to_thread(mirror.read, cluster)
        if not saved:
            return
        read = time.monotonic()
        resumed = {
            name: len(saved[name].items)
            for name, informer in self.informers.items()
            if name in saved and informer.resume(saved[name])
        }
        self.resumed = bool(resumed)
        # Each step's wall time: a restart's seconds to the first bind are mostly these and the core's read.
        _log.info(
            "resuming from the saved mirror",
            path=str(mirror.path),
            objects=resumed,
            cluster_seconds=round(asked - began, 2),
            probe_seconds=round(probed - asked, 2),
            read_seconds=round(read - probed, 2),
            resume_seconds=round(time.monotonic() - read, 2),
        )

    async def _watchable(self, mirror: MirrorFile, cluster: str) -> bool:
        """Whether the saved pods and PodGroups (nearly all of a mirror's objects) can still be watched from
        their versions. A mirror older than the API server's watch history is void: reading it (seconds at
        50,000 pods, holding the GIL) would only delay the list that replaces it. Its header alone names the
        versions; a watch request per kind tells, unless the file is recent enough that the server surely
        still holds them."""
        header = await asyncio.to_thread(mirror.header, cluster)
        if header is None or time.time() - header.saved_at < RECENT_MIRROR_SECONDS:
            return True
        probes = [
            self.informers[kind].watchable_from(version, PROBE_SECONDS)
            for kind in PROBED_KINDS
            if (version := header.versions.get(kind))
        ]
        if all(await asyncio.gather(*probes)):
            return True
        _log.info("saved mirror older than the API server's watch history; listing", path=str(mirror.path))
        return False

    def mirror_expired(self) -> bool:
        """Whether a resumed mirror proved older than the API server's watch history (its kind relists)."""
        return any(informer.mirror_expired for informer in self.informers.values())

    async def first_answer(self, kind: str, within: float) -> None:
        """Until the resumed watch of ``kind`` has first answered (with the 410 of an expired mirror, if it
        is one), for at most ``within`` seconds: a quiet cluster may have nothing to send."""
        informer = self.informers[kind]
        if informer.resumed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(informer.answered.wait(), within)

    def _saved_kinds(self) -> tuple[str, dict[str, SavedKind]] | None:
        root = self.queue(c.ROOT_QUEUE)
        if root is None or not self.synced:
            return None
        kinds = {name: saved for name, informer in self.informers.items() if (saved := informer.saved())}
        return _uid(root), kinds

    async def save_mirror(self) -> bool:
        """Write the mirrors as they stand now (in a worker thread); whether it was written. A failure is
        logged, never raised."""
        if self.mirror is None or (state := self._saved_kinds()) is None:
            return False
        began = time.monotonic()
        try:
            # One write at a time: the save on stop must not race the periodic one still in its thread.
            async with self._saving:
                size = await asyncio.to_thread(self.mirror.write, *state)
        except (OSError, TypeError) as exc:  # TypeError: an object JSON cannot hold (none expected)
            if not self._mirror_failed:
                _log.warning(
                    "cannot save the mirror; restarts will list the cluster (see --mirror-dir)",
                    path=str(self.mirror.path),
                    error=str(exc),
                )
            self._mirror_failed = True
            return False
        self._mirror_failed = False
        _log.debug("mirror saved", bytes=size, seconds=round(time.monotonic() - began, 2))
        return True

    async def _until_save_may_start(self) -> None:
        """While ``save_waits`` says so, ``SAVE_WAIT_LIMIT`` at most (it is polled: nothing signals it)."""
        deadline = time.monotonic() + SAVE_WAIT_LIMIT
        while time.monotonic() < deadline:
            if not self.save_waits():
                return
            await asyncio.sleep(1.0)

    async def _keep_mirror(self) -> None:
        """Save once synced (a fresh list is what a restart would have to do again), then while it changes."""
        await self.wait_synced()
        saved_at = -1
        while True:
            if self.generation != saved_at:
                await self._until_save_may_start()
                generation = self.generation
                if await self.save_mirror():
                    saved_at = generation
                elif self.queue(c.ROOT_QUEUE) is None:
                    # A new cluster's root Queue, which marks the file, is being created: soon, not in 30 s.
                    await asyncio.sleep(1.0)
                    continue
            await asyncio.sleep(MIRROR_SAVE_SECONDS)

    async def wait_synced(self) -> None:
        await asyncio.gather(*(informer.synced.wait() for informer in self.informers.values()))

    @property
    def synced(self) -> bool:
        return all(informer.synced.is_set() for informer in self.informers.values())

    def _on_pod(self, delta: Delta) -> None:
        key = delta.key
        group, joined = self._count_group(delta)
        if delta.new is not None and (self._newly_schedulable(delta) or (joined and _unbound(delta.new))):
            self.last_arrival = time.monotonic()
            if group is not None and self._whole(group):
                self.last_whole = self.last_arrival
            self.arrival.set()
        assumed = self._assumed.get(key)
        if assumed is not None:
            pod = delta.new or {}
            # The watch has caught up (bound, gone, or a different pod under the same name): stop assuming.
            if (
                delta.type is EventType.DELETED
                or _uid(pod) != assumed.uid
                or pod.get("spec", {}).get("nodeName")
            ):
                del self._assumed[key]
                self._assumed_shown.pop(key, None)
            else:
                self._assumed_shown[key] = assumed.view_of(pod)
        if key in self._evicting:
            pod = delta.new or {}
            if delta.type is EventType.DELETED or pod.get("metadata", {}).get("deletionTimestamp"):
                del self._evicting[key]

    def _on_podgroup(self, delta: Delta) -> None:
        if delta.type is EventType.ADDED:
            self.last_news = time.monotonic()
        promised = self._statuses.get(delta.key)
        if promised is not None and (delta.type is EventType.DELETED or delta.new is not promised.base):
            del self._statuses[delta.key]  # the watch brought our write, or something newer

    def _on_claim(self, delta: Delta) -> None:
        assumed = self._claims.get(delta.key)
        if assumed is None:
            return
        claim = delta.new or {}
        if delta.type is EventType.DELETED or _uid(claim) != assumed.uid or assumed.shown_in(claim):
            del self._claims[delta.key]

    def _group_of(self, pod: Obj | None) -> str | None:
        if pod is None or (pod.get("spec") or {}).get("schedulerName") not in self.scheduler_names:
            return None
        return group_key_of(pod)

    def _count_group(self, delta: Delta) -> tuple[str | None, bool]:
        """Keep the per-PodGroup pod counts; returns the pod's group now and whether it just joined it (the
        PodGroup controller names the group of a plain pod after the pod exists)."""
        gone = delta.type is EventType.DELETED
        before, after = self._group_of(delta.old), None if gone else self._group_of(delta.new)
        if before == after:
            return after, False
        counts = self._group_pods
        if before is not None:
            left = counts.get(before, 0) - 1
            if left > 0:
                counts[before] = left
            else:
                counts.pop(before, None)
        if after is not None:
            counts[after] = counts.get(after, 0) + 1
        return after, after is not None

    def _whole(self, group: str) -> bool:
        """Whether the gang's PodGroup exists and has as many pods as its minMember: a cycle can place it."""
        podgroup = self.podgroup(group)
        return podgroup is not None and self._group_pods.get(group, 0) >= min_member_of(podgroup)

    def _newly_schedulable(self, delta: Delta) -> bool:
        """A pending pod of ours that a cycle may place now: a new one, or one whose scheduling gates were
        just removed (its gang may be whole at last)."""
        spec = (delta.new or {}).get("spec") or {}
        if spec.get("nodeName") or spec.get("schedulerName") not in self.scheduler_names:
            return False
        if delta.type is EventType.ADDED:
            return True
        old = (delta.old or {}).get("spec") or {}
        return (
            delta.type is EventType.MODIFIED
            and bool(old.get("schedulingGates"))
            and not spec.get("schedulingGates")
        )

    def node_names(self) -> list[str]:
        nodes = self.informers["nodes"].store.values()
        return [str(node.get("metadata", {}).get("name", "")) for node in nodes]

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

    # --- promises -----------------------------------------------------------------------------------------

    def assume(self, pod_key: str, uid: str, node: str, annotations: Mapping[str, str] | None = None) -> None:
        """Count the pod as bound to ``node`` from now on (its bind is being sent)."""
        assumed = self._assumed[pod_key] = _Assumed(uid, node, dict(annotations or {}))
        pod = self.pod(pod_key)
        if pod is not None and _uid(pod) == uid and not pod.get("spec", {}).get("nodeName"):
            self._assumed_shown[pod_key] = assumed.view_of(pod)
        else:  # shown once the watch brings it as assumed (or never: it is bound or gone already)
            self._assumed_shown.pop(pod_key, None)
        self.generation += 1

    def forget(self, pod_key: str) -> None:
        """The bind failed: the pod is pending again and its node's room is free again."""
        self.last_news = time.monotonic()
        self._assumed_shown.pop(pod_key, None)
        if self._assumed.pop(pod_key, None) is not None:
            self.generation += 1

    def assume_claims(self, pod_name: str, pod_uid: str, writes: Sequence[ClaimWrite]) -> None:
        """Count the claims as allocated and reserved for the pod from now on (its bind is being sent)."""
        for write in writes:
            assumed = self._claims.get(write.key)
            if assumed is None or assumed.uid != write.uid:
                assumed = self._claims[write.key] = _AssumedClaim(write.uid, write.allocation)
            elif assumed.allocation is None:
                assumed.allocation = write.allocation
            assumed.pods[pod_uid] = pod_name
        self.generation += 1

    def promise_status(self, key: str, status: Obj) -> None:
        """Show ``status`` on the PodGroup of ``key`` from now on (the binder is writing it)."""
        base = self.podgroup(key)
        if base is None:
            return
        promised = self._statuses.get(key)
        if promised is not None and promised.base is base and promised.status is status:
            return
        self._statuses[key] = _PromisedStatus(base, status, {**base, "status": status})
        self.generation += 1

    def status_written(self, key: str, status: Obj) -> None:
        """The write of ``status`` answered: the watch shows it soon (see ``STATUS_PROMISE_SECONDS``)."""
        promised = self._statuses.get(key)
        if promised is not None and promised.status is status:
            promised.written = time.monotonic()

    def withdraw_status(self, key: str, status: Obj | None = None) -> None:
        """The write of ``status`` (None: any) failed or was dropped: the PodGroup is as the API says."""
        promised = self._statuses.get(key)
        if promised is not None and (status is None or promised.status is status):
            del self._statuses[key]
            self.generation += 1

    def promised_status(self, key: str) -> Obj | None:
        promised = self._statuses.get(key)
        return promised.status if promised is not None else None

    def forget_claims(self, pod_uid: str) -> None:
        """The pod's bind failed: its claims are as the API says again."""
        for key, assumed in list(self._claims.items()):
            if assumed.pods.pop(pod_uid, None) is not None and not assumed.pods:
                del self._claims[key]
        self.generation += 1

    def assumed_node(self, pod_key: str) -> str | None:
        assumed = self._assumed.get(pod_key)
        return assumed.node if assumed else None

    def mark_evicting(self, pod_key: str, uid: str) -> None:
        self._evicting[pod_key] = uid
        self.generation += 1

    def unmark_evicting(self, pod_key: str) -> None:
        if self._evicting.pop(pod_key, None) is not None:
            self.generation += 1

    # --- views ----------------------------------------------------------------------------------------------

    def _pods_with_promises(self, hidden: Mapping[str, Obj] | None = None) -> list[Obj]:
        # Only the promised pods are looked at, and the assumed ones are kept as shown (``_on_pod``).
        store = self.informers["pods"].store
        if not self._evicting:
            if hidden:
                return store.values_with({**hidden, **self._assumed_shown})
            return store.values_with(self._assumed_shown)
        shown = {**(hidden or {}), **self._assumed_shown}
        if self._terminating.keys() - self._evicting.keys():
            self._terminating = {k: v for k, v in self._terminating.items() if k in self._evicting}
        for key in self._evicting:
            pod = store.get(key)
            if pod is None or pod.get("metadata", {}).get("deletionTimestamp"):
                continue
            seen = self._terminating.get(key)
            if seen is None or seen[0] is not pod:
                seen = self._terminating[key] = (pod, _terminating(shown.get(key, pod)))
            shown[key] = seen[1]
        return store.values_with(shown)

    def _podgroups_with_promises(self) -> list[Obj]:
        store = self.informers["podgroups"].store
        if not self._statuses:
            return store.values()
        now = time.monotonic()
        stale = [
            key
            for key, p in self._statuses.items()
            if p.written is not None and now - p.written > STATUS_PROMISE_SECONDS
        ]
        for key in stale:
            self.withdraw_status(key)
        return store.values_with({key: promised.view for key, promised in self._statuses.items()})

    def podgroup_queue(self, key: str) -> str | None:
        podgroup = self.podgroup(key)
        return str((podgroup.get("spec") or {}).get("queue") or c.DEFAULT_QUEUE) if podgroup else None

    def queue_capability(self, name: str) -> Resource | None:
        """The ``capability`` that bounds a Queue: its own, else its nearest ancestor's (None: unbounded).
        Two schedulers could both take the last of such a Queue's room (``queue_room``)."""
        seen: set[str] = set()
        while name and name not in seen:
            seen.add(name)
            queue = self.queue(name)
            if queue is None:
                return None
            spec = queue.get("spec") or {}
            if spec.get("capability"):
                try:
                    return Resource.parse(spec["capability"])
                except (QuantityError, TypeError, AttributeError):
                    return None  # the session refuses the Queue, and says so
            name = str(spec.get("parent") or "")
        return None

    def watch_version(self) -> str:
        """How far the pods watch has got (its last resourceVersion)."""
        return self.informers["pods"].resource_version

    def snapshot(self, *, hidden: Mapping[str, Obj] | None = None, podgroups: bool = True) -> ClusterObjects:
        """The cluster as the next session sees it. ``hidden``: pods shown as these views instead (the agent
        scheduler hides the pending pods another of its workers takes); ``podgroups``: False leaves them out
        (the agent scheduler places pods one by one, gangs are the batch scheduler's)."""
        # Pods come with the binds and evictions promised but not yet seen in a watch.
        # Shared lists: the session's views tell an unchanged kind by the list's identity.
        read: dict[str, Any] = {
            field: self.informers[field].store.shared_values()
            for field, _, _ in SESSION_KINDS
            if field not in ("pods", "podgroups", "resource_claims")
        }
        return ClusterObjects(
            **read,
            pods=self._pods_with_promises(hidden),
            podgroups=self._podgroups_with_promises() if podgroups else [],
            resource_claims=self._claims_with_promises(),
            nodeshards=self.nodeshards(),
            node_usage=self.node_usage,
            generation=self.generation,
            queue_charges=self.charges.sums() if self.charges is not None else {},
        )

    def _claims_with_promises(self) -> list[Obj]:
        claims = self.informers["resource_claims"].store.values()
        if not self._claims:
            return claims
        out: list[Obj] = []
        for claim in claims:
            meta = claim.get("metadata") or {}
            assumed = self._claims.get(f"{meta.get('namespace')}/{meta.get('name')}")
            promised = assumed is not None and assumed.uid == _uid(claim)
            out.append(assumed.view_of(claim) if assumed is not None and promised else claim)
        return out

    # --- start-up -------------------------------------------------------------------------------------------

    async def ensure_default_queues(self) -> list[str]:
        """Create the ``root`` and ``default`` queues when missing (as Volcano does); return those created."""
        created: list[str] = []
        for name, reclaimable in ((c.ROOT_QUEUE, False), (c.DEFAULT_QUEUE, True)):
            if self.queue(name) is not None:
                continue
            body: Obj = {
                "apiVersion": c.SCHEDULING_API_VERSION,
                "kind": c.QUEUE_KIND,
                "metadata": {"name": name},
                "spec": {"weight": 1, "reclaimable": reclaimable},
            }
            if name == c.DEFAULT_QUEUE:
                body["spec"]["parent"] = c.ROOT_QUEUE
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
