"""Turns at a capped Queue's room, between the batch scheduler and the agent scheduler.

Each scheduler counts the other's pods in a Queue (``queue_charges.py``), but it sees them only once their
binds come back through its watch: two schedulers deciding at the same moment could each take the last room
of a Queue that has a ``capability``. So a scheduler places pods in such a Queue only while it holds the
Queue's turn (recorded, for every Queue, on the one Lease ``volcano-queue-turns`` in the lease namespace),
and gives it back once its watch has shown every bind it made there, writing the pods watch's
resourceVersion at that moment beside it. The next
holder waits until its own pods watch has reached that version: its view then holds every pod the last
holder bound, and the room it sees is the room there is. A holder that stops renewing (a crash) loses the
Lease after ``LEASE_SECONDS``. Queues without a capability need none of this: nothing can be exceeded.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol

from volcano_py.api.objects import annotations_of, name_of, namespace_of, resource_version_of, spec_of
from volcano_py.api.queue_charge import queue_of_pod
from volcano_py.api.queue_hierarchy import queue_name
from volcano_py.kube.client import NETWORK_ERRORS, ApiError, KubeClient
from volcano_py.kube.kinds import LEASES
from volcano_py.kube.store import version_number
from volcano_py.log import get_logger
from volcano_py.resources import Resource
from volcano_py.scheduler.core import ClusterObjects

_log = get_logger(__name__)

LEASE_SECONDS: Final = 5
# One Lease for every Queue's turn (named, so RBAC can pin the schedulers to it), the turns in an annotation.
TURNS_LEASE: Final = "volcano-queue-turns"
TURNS_KEY: Final = "volcano-py.io/queue-turns"
# How long a new holder waits at most for its watch to reach the last holder's version.
CATCH_UP_SECONDS: Final = 2.0
WARN_EVERY_SECONDS: Final = 30.0
_ERRORS = (ApiError, *NETWORK_ERRORS)


@dataclass(frozen=True, slots=True)
class Turn:
    """Who holds a Queue's turn ("" for no one), when they last took or renewed it (seconds since the
    epoch), and how far the last holder's pods watch had got when it gave the turn back."""

    holder: str = ""
    renewed: float = 0.0
    released_at: str = ""


def read_turns(lease: Mapping[str, Any]) -> dict[str, Turn]:
    text = annotations_of(lease).get(TURNS_KEY) or "{}"
    try:
        raw = json.loads(text)
    except ValueError:
        return {}  # unreadable: every turn free (written afresh by the next taker)
    turns: dict[str, Turn] = {}
    for queue, entry in raw.items() if isinstance(raw, dict) else ():
        if isinstance(entry, dict):
            turns[str(queue)] = Turn(
                str(entry.get("holder") or ""),
                float(entry.get("renewed") or 0.0),
                str(entry.get("releasedAt") or ""),
            )
    return turns


def turns_text(turns: Mapping[str, Turn]) -> str:
    return json.dumps(
        {
            q: {"holder": t.holder, "renewed": t.renewed, "releasedAt": t.released_at}
            for q, t in sorted(turns.items())
        },
        separators=(",", ":"),
    )


def claim(
    turns: Mapping[str, Turn], queues: Iterable[str], me: str, now: float
) -> tuple[dict[str, Turn], set[str], str, bool]:
    """Take the turns at ``queues`` that are free, expired or ours: the new turns, the queues held, the
    version the last holders' binds reach (to wait for; "" for none), and whether anything must be written
    (a turn of ours renewed less than half a lease ago needs no write)."""
    new = dict(turns)
    held: set[str] = set()
    wait_for = ""
    changed = False
    for queue in queues:
        turn = turns.get(queue, Turn())
        age = now - turn.renewed
        if turn.holder not in ("", me) and age <= LEASE_SECONDS:
            continue
        held.add(queue)
        if turn.holder == me and age < LEASE_SECONDS / 2:
            continue
        new[queue] = Turn(me, now, turn.released_at)
        changed = True
        if turn.holder != me and turn.released_at and _later(turn.released_at, wait_for):
            wait_for = turn.released_at
    return new, held, wait_for, changed


def release(
    turns: Mapping[str, Turn], queues: Iterable[str], me: str, version: str
) -> tuple[dict[str, Turn], bool]:
    """Give back the turns at ``queues`` that are ours, saying our watch had reached ``version``."""
    new = dict(turns)
    changed = False
    for queue in queues:
        turn = turns.get(queue)
        if turn is not None and turn.holder == me:
            new[queue] = Turn("", turn.renewed, version)
            changed = True
    return new, changed


def _later(version: str, than: str) -> bool:
    a, b = version_number(version), version_number(than)
    return b is None or (a is not None and a > b)


class QueueRoom:
    """The turns this scheduler holds, read and written on the one Lease ``TURNS_LEASE``."""

    def __init__(
        self,
        client: KubeClient,
        *,
        namespace: str,
        identity: str,
        watch_version: Callable[[], str],
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.identity = identity
        self.watch_version = watch_version
        self.wall_clock = wall_clock
        self.held: set[str] = set()
        self._warned = float("-inf")  # when a failure to take a turn was last logged

    def _path(self) -> str:
        return LEASES.object_path(TURNS_LEASE, self.namespace)

    async def _read(self) -> tuple[dict[str, Turn], str]:
        """The turns and the Lease's resourceVersion ("" when there is no Lease yet)."""
        try:
            lease = await self.client.get(self._path())
        except ApiError as exc:
            if not exc.not_found:
                raise
            return {}, ""
        return read_turns(lease), resource_version_of(lease)

    async def _write(self, turns: Mapping[str, Turn], version: str) -> None:
        """Write the turns at ``version`` (create when ""); ``ApiError`` with ``conflict`` when it moved."""
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": TURNS_LEASE,
                "namespace": self.namespace,
                "annotations": {TURNS_KEY: turns_text(turns)},
                **({"resourceVersion": version} if version else {}),
            },
            "spec": {},
        }
        if version:
            await self.client.replace(self._path(), body)
        else:
            await self.client.create(LEASES.collection_path(self.namespace), body)

    async def take(self, queues: Iterable[str]) -> set[str]:
        """Of ``queues``, those this scheduler holds now (taken or renewed)."""
        wanted = list(queues)
        try:
            for _ in range(5):  # a conflict: the other scheduler wrote meanwhile; read it again
                turns, version = await self._read()
                new, held, wait_for, changed = claim(turns, wanted, self.identity, self.wall_clock())
                if changed:
                    try:
                        await self._write(new, version)
                    except ApiError as exc:
                        if exc.conflict:
                            continue
                        raise
                self.held |= held
                if wait_for:
                    await self._catch_up(wait_for)
                return held
        except _ERRORS as exc:
            # Its pods wait and are tried again: said once a while, not at every attempt.
            if time.monotonic() - self._warned >= WARN_EVERY_SECONDS:
                self._warned = time.monotonic()
                _log.warning("could not take queue turns; their pods wait", queues=wanted, error=repr(exc))
        return set()

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
        mine = [queue for queue in queues if queue in self.held]
        if not mine:
            return
        self.held -= set(mine)
        try:
            for _ in range(5):
                turns, version = await self._read()
                new, changed = release(turns, mine, self.identity, self.watch_version())
                if not changed:
                    return
                try:
                    await self._write(new, version)
                    return
                except ApiError as exc:
                    if not exc.conflict:
                        raise
        except _ERRORS as exc:
            # Left to expire: the other scheduler takes them after ``LEASE_SECONDS``.
            _log.warning("could not give queue turns back", queues=mine, error=repr(exc))


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
    # Each Queue's bound read once per cycle: a backlog has thousands of pending pods in a few Queues.
    bounded = {name: cache.queue_capability(name) is not None for name in map(queue_name, state.queues)}
    if not any(bounded.values()):
        return {}
    ours = cache.scheduler_names
    capped: dict[str, list[str]] = {}
    for pod in state.pods:
        spec = spec_of(pod)
        if spec.get("nodeName") or spec.get("schedulerName") not in ours:
            continue
        queue = queue_of_pod(pod, cache.podgroup_queue)
        if bounded.get(queue, False):
            capped.setdefault(queue, []).append(f"{namespace_of(pod)}/{name_of(pod)}")
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
