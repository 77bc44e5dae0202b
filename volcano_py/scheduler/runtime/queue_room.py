"""Turns at a capped Queue's room, between the batch scheduler and the agent scheduler.

Each scheduler counts the other's pods in a Queue (``queue_charges.py``), but it sees them only once their
binds come back through its watch: two schedulers deciding at the same moment could each take the last room
of a Queue that has a ``capability``. So a scheduler places pods in such a Queue only while it holds the
Queue's Lease (``queue-room-<queue>`` in the lease namespace), and gives it back once its watch has shown
every bind it made there, writing the pods watch's resourceVersion at that moment on the Lease. The next
holder waits until its own pods watch has reached that version: its view then holds every pod the last
holder bound, and the room it sees is the room there is. A holder that stops renewing (a crash) loses the
Lease after ``LEASE_SECONDS``. Queues without a capability need none of this: nothing can be exceeded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Protocol

import aiohttp

from volcano_py.api.queue_charge import queue_of_pod
from volcano_py.api.queue_hierarchy import queue_name
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import LEASES
from volcano_py.kube.leader import format_micro_time
from volcano_py.kube.store import version_number
from volcano_py.log import get_logger
from volcano_py.resources import Resource
from volcano_py.scheduler.core import ClusterObjects

_log = get_logger(__name__)

LEASE_SECONDS: Final = 5
RELEASED_AT: Final = "volcano-py.io/released-at-version"
# How long a new holder waits at most for its watch to reach the last holder's version.
CATCH_UP_SECONDS: Final = 2.0
WARN_EVERY_SECONDS: Final = 30.0
_ERRORS = (ApiError, aiohttp.ClientError, TimeoutError, ConnectionError)


def lease_name(queue: str) -> str:
    return f"queue-room-{queue}"


def _parse_time(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        return None


class QueueRoom:
    def __init__(
        self,
        client: KubeClient,
        *,
        namespace: str,
        identity: str,
        watch_version: Callable[[], str],
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.identity = identity
        self.watch_version = watch_version
        self.wall_clock = wall_clock
        self.held: set[str] = set()
        self._warned: dict[str, float] = {}  # queue -> when a failure to take its turn was last logged

    def _body(self, queue: str, holder: str, resource_version: str, released_at: str = "") -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": lease_name(queue), "namespace": self.namespace}
        if resource_version:
            metadata["resourceVersion"] = resource_version
        if released_at:
            metadata["annotations"] = {RELEASED_AT: released_at}
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": metadata,
            "spec": {
                "holderIdentity": holder,
                "leaseDurationSeconds": LEASE_SECONDS,
                "renewTime": format_micro_time(self.wall_clock()),
            },
        }

    async def take(self, queues: Iterable[str]) -> set[str]:
        """Of ``queues``, those this scheduler holds now (taken or renewed)."""
        held = set()
        for queue in queues:
            try:
                if await self._take(queue):
                    held.add(queue)
            except _ERRORS as exc:
                # Its pods wait and are tried again: said once a while, not at every attempt.
                if time.monotonic() - self._warned.get(queue, float("-inf")) >= WARN_EVERY_SECONDS:
                    self._warned[queue] = time.monotonic()
                    _log.warning("could not take a queue's turn; its pods wait", queue=queue, error=repr(exc))
        return held

    async def _take(self, queue: str) -> bool:
        path = LEASES.object_path(lease_name(queue), self.namespace)
        try:
            lease = await self.client.get(path)
        except ApiError as exc:
            if not exc.not_found:
                raise
            try:
                await self.client.create(
                    LEASES.collection_path(self.namespace), self._body(queue, self.identity, "")
                )
            except ApiError as create_exc:
                if create_exc.conflict:
                    return False
                raise
            self.held.add(queue)
            return True
        spec = lease.get("spec") or {}
        meta = lease.get("metadata") or {}
        holder = str(spec.get("holderIdentity") or "")
        renewed = _parse_time(str(spec.get("renewTime") or ""))
        expired = renewed is None or self.wall_clock() - renewed > timedelta(seconds=LEASE_SECONDS)
        if holder not in ("", self.identity) and not expired:
            return False
        fresh = renewed is not None and self.wall_clock() - renewed < timedelta(seconds=LEASE_SECONDS / 2)
        if holder == self.identity and fresh:
            self.held.add(queue)
            return True  # ours, and renewed recently enough: no write
        released_at = str((meta.get("annotations") or {}).get(RELEASED_AT) or "")
        try:
            await self.client.replace(
                path, self._body(queue, self.identity, str(meta.get("resourceVersion") or ""), released_at)
            )
        except ApiError as exc:
            if exc.conflict:
                return False
            raise
        self.held.add(queue)
        if holder != self.identity and released_at:
            await self._catch_up(released_at)
        return True

    async def _catch_up(self, released_at: str) -> None:
        """Wait until this scheduler's pods watch has reached ``released_at``: the last holder's binds."""
        wanted = version_number(released_at)
        if wanted is None:
            return
        deadline = time.monotonic() + CATCH_UP_SECONDS
        while time.monotonic() < deadline:
            seen = version_number(self.watch_version())
            if seen is not None and seen >= wanted:
                return
            await asyncio.sleep(0.005)
        _log.warning("the pods watch is behind the queue's last holder", wanted=released_at)

    async def give_back(self, queues: Iterable[str]) -> None:
        """Hand the turns at ``queues`` back, saying how far this scheduler's watch had got: call it only once
        the watch has shown every bind made in them."""
        for queue in list(queues):
            if queue not in self.held:
                continue
            self.held.discard(queue)
            path = LEASES.object_path(lease_name(queue), self.namespace)
            for _ in range(3):  # a conflict is our own renewal racing this: read it again
                try:
                    lease = await self.client.get(path)
                    if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                        break
                    version = str((lease.get("metadata") or {}).get("resourceVersion") or "")
                    await self.client.replace(path, self._body(queue, "", version, self.watch_version()))
                    break
                except ApiError as exc:
                    if exc.conflict:
                        continue
                    _log.warning("could not give a queue's turn back", queue=queue, error=repr(exc))
                    break
                except _ERRORS as exc:
                    # Left to expire: the other scheduler takes it after ``LEASE_SECONDS``.
                    _log.warning("could not give a queue's turn back", queue=queue, error=repr(exc))
                    break


class QueueTurns:
    """The turns one scheduler holds, counted per use: a Queue is given back only once every placement
    made under its turn has come back through the watch (``bound`` says when a pod has)."""

    def __init__(self, room: QueueRoom, bound: Callable[[str], bool]) -> None:
        self.room = room
        self.bound = bound
        self._using: dict[str, int] = {}
        # Taking and giving back one after the other: a turn given back while another placement of this
        # process takes it again would leave that placement without the turn it counts on.
        self._lock = asyncio.Lock()
        self.refused = 0  # turns asked for and not had (the other scheduler held them)

    async def begin(self, queues: Iterable[str]) -> set[str]:
        """Take the turns at ``queues``; returns those held (each must be ended with ``end``)."""
        wanted = set(queues)
        async with self._lock:
            held = await self.room.take(wanted)
            for queue in held:
                self._using[queue] = self._using.get(queue, 0) + 1
        self.refused += len(wanted - held)
        return held

    async def end(self, held: Iterable[str], pods: Iterable[str]) -> None:
        """Once ``pods`` (bound under these turns) show in the watch, give back the turns no other placement
        still uses."""
        waiting = list(pods)
        deadline = time.monotonic() + 10.0
        while waiting and time.monotonic() < deadline:
            waiting = [key for key in waiting if not self.bound(key)]
            if waiting:
                await asyncio.sleep(0.005)
        async with self._lock:
            done = []
            for queue in held:
                left = self._using.get(queue, 1) - 1
                if left > 0:
                    self._using[queue] = left
                else:
                    self._using.pop(queue, None)
                    done.append(queue)
            await self.room.give_back(done)


class _Mirror(Protocol):
    scheduler_names: frozenset[str]

    def podgroup_queue(self, key: str) -> str | None: ...

    def queue_capability(self, name: str) -> Resource | None: ...


def capped_pending(state: ClusterObjects, cache: _Mirror) -> dict[str, list[str]]:
    """Queue -> the pending pods of ours in it (``namespace/name``), for the Queues with a capability."""
    if not any(cache.queue_capability(queue_name(q)) is not None for q in state.queues):
        return {}
    ours = cache.scheduler_names
    capped: dict[str, list[str]] = {}
    for pod in state.pods:
        spec = pod.get("spec") or {}
        if spec.get("nodeName") or spec.get("schedulerName") not in ours:
            continue
        queue = queue_of_pod(pod, cache.podgroup_queue)
        if cache.queue_capability(queue) is not None:
            meta = pod.get("metadata") or {}
            capped.setdefault(queue, []).append(f"{meta.get('namespace')}/{meta.get('name')}")
    return capped


def without_room(
    state: ClusterObjects, queues: Iterable[str], capability_of: Callable[[str], Resource | None]
) -> ClusterObjects:
    """The cluster as a session must see it while the other scheduler holds these Queues' turns: no room
    left in them (their capability counted as held elsewhere)."""
    charges = dict(state.queue_charges)
    for queue in queues:
        capability = capability_of(queue)
        if capability is not None:
            charges[queue] = charges.get(queue, Resource()) + capability
    return replace(state, queue_charges=charges)
