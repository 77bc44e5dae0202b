"""The agent scheduler's scheduling queue: kube-scheduler's shape (Volcano's agent scheduler takes it too).

A pending pod is in exactly one of three places, or taken by a worker:

* **active**: ready to be tried now, highest priority first, then first come; a pod that lost a race for a
  node's room (``conflicted``) goes ahead of all of them, as Volcano's urgent retry does;
* **backoff**: a pod that failed before and that a cluster event may have helped waits out its backoff
  (``INITIAL_BACKOFF`` doubling per failed attempt up to ``MAX_BACKOFF``) before it is active again;
* **unschedulable**: a pod the last attempt could not place waits for an event that can help (``wake``):
  a node added or changed, a pod gone or finished, the shard changed. One that no event wakes is tried again
  after ``MAX_UNSCHEDULABLE`` anyway, as kube-scheduler does, so a missed event cannot strand it.

Pure: the caller passes the clock reading (``now``, monotonic seconds) into every call.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

INITIAL_BACKOFF: Final = 1.0
MAX_BACKOFF: Final = 10.0
MAX_UNSCHEDULABLE: Final = 300.0


class Place(Enum):
    ACTIVE = "active"
    BACKOFF = "backoff"
    UNSCHEDULABLE = "unschedulable"
    TAKEN = "taken"  # popped by a worker, its attempt not yet answered


@dataclass(slots=True)
class _Entry:
    key: str
    priority: int
    arrived: int  # order of first arrival: first come, first tried among equals
    place: Place = Place.ACTIVE
    attempts: int = 0  # failed attempts, for the backoff
    urgent: bool = False
    failed_at: float = 0.0
    # Bumped whenever the entry moves, so stale heap items are skipped.
    version: int = 0


@dataclass
class SchedulingQueue:
    initial_backoff: float = INITIAL_BACKOFF
    max_backoff: float = MAX_BACKOFF
    max_unschedulable: float = MAX_UNSCHEDULABLE
    _entries: dict[str, _Entry] = field(default_factory=dict)
    _active: list[tuple[int, int, int, str, int]] = field(default_factory=list)
    _backoff: list[tuple[float, int, str, int]] = field(default_factory=list)
    _order: itertools.count[int] = field(default_factory=itertools.count)

    # --- what comes in -----------------------------------------------------------------------------------

    def add(self, key: str, priority: int = 0) -> bool:
        """A pending pod seen for the first time (or its priority changed); True when it is new."""
        entry = self._entries.get(key)
        if entry is not None:
            if entry.priority != priority:
                entry.priority = priority
                if entry.place is Place.ACTIVE:
                    self._push_active(entry)
            return False
        entry = self._entries[key] = _Entry(key, priority, next(self._order))
        self._push_active(entry)
        return True

    def remove(self, key: str) -> None:
        """The pod is bound, deleted, or no longer ours."""
        self._entries.pop(key, None)  # heap items of it are skipped as stale

    # --- what a worker takes and reports -----------------------------------------------------------------

    def pop(self, limit: int, now: float) -> list[str]:
        """Up to ``limit`` active pods, best first; they are ``TAKEN`` until ``scheduled``, ``unschedulable``,
        ``conflicted`` or ``remove`` says how their attempt went."""
        self.flush(now)
        taken: list[str] = []
        while self._active and len(taken) < limit:
            *_, key, version = heapq.heappop(self._active)
            entry = self._live(key, version, Place.ACTIVE)
            if entry is None:
                continue
            entry.place = Place.TAKEN
            entry.urgent = False
            entry.version += 1
            taken.append(key)
        return taken

    def scheduled(self, key: str) -> None:
        """Its bind was sent: it leaves the queue (a refused bind ``add``s it again)."""
        self.remove(key)

    def unschedulable(self, key: str, now: float) -> None:
        """The attempt found no node: wait for an event that can help."""
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.attempts += 1
        entry.failed_at = now
        entry.place = Place.UNSCHEDULABLE
        entry.version += 1

    def conflicted(self, key: str) -> None:
        """Its node's room was taken by a placement decided on a newer view: retry it first, at once."""
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.urgent = True
        self._push_active(entry)

    def retry(self, key: str, now: float) -> None:
        """Its bind failed for a reason other than a race (the API refused it): back off, then try again."""
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.attempts += 1
        entry.failed_at = now
        self._push_backoff(entry)

    def defer(self, key: str, now: float, seconds: float) -> None:
        """Try it again in ``seconds`` (its Queue's turn is the other scheduler's): no failed attempt."""
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.place = Place.BACKOFF
        entry.version += 1
        heapq.heappush(self._backoff, (now + seconds, entry.arrived, entry.key, entry.version))

    # --- events ------------------------------------------------------------------------------------------

    def wake(self, now: float) -> int:
        """A cluster event that can help the unschedulable pods: each goes to backoff, or active when its
        backoff is already over. Returns how many moved."""
        moved = 0
        for entry in self._entries.values():
            if entry.place is Place.UNSCHEDULABLE:
                self._push_backoff(entry)
                moved += 1
        self.flush(now)
        return moved

    def expire(self, now: float) -> int:
        """Move the pods unschedulable for ``max_unschedulable`` to backoff (called now and then: it walks
        them all). Returns how many moved."""
        stale = [
            e
            for e in self._entries.values()
            if e.place is Place.UNSCHEDULABLE and now - e.failed_at >= self.max_unschedulable
        ]
        for entry in stale:
            self._push_backoff(entry)
        self.flush(now)
        return len(stale)

    def flush(self, now: float) -> None:
        """Move the pods whose backoff is over to active."""
        while self._backoff and self._backoff[0][0] <= now:
            _, _, key, version = heapq.heappop(self._backoff)
            entry = self._live(key, version, Place.BACKOFF)
            if entry is not None:
                self._push_active(entry)

    # --- reading -----------------------------------------------------------------------------------------

    def backoff_of(self, attempts: int) -> float:
        if attempts <= 0:
            return 0.0
        return float(min(self.initial_backoff * 2 ** (attempts - 1), self.max_backoff))

    def next_ready(self) -> float | None:
        """When the first backed-off pod becomes active (None: none waits in backoff)."""
        while self._backoff:
            ready, _, key, version = self._backoff[0]
            if self._live(key, version, Place.BACKOFF) is not None:
                return ready
            heapq.heappop(self._backoff)
        return None

    def place_of(self, key: str) -> Place | None:
        entry = self._entries.get(key)
        return entry.place if entry is not None else None

    def has_active(self) -> bool:
        while self._active:
            *_, key, version = self._active[0]
            if self._live(key, version, Place.ACTIVE) is not None:
                return True
            heapq.heappop(self._active)
        return False

    def __len__(self) -> int:
        return len(self._entries)

    # --- heaps -------------------------------------------------------------------------------------------

    def _live(self, key: str, version: int, place: Place) -> _Entry | None:
        """The entry a heap item stands for, unless it moved since (the item is then stale)."""
        entry = self._entries.get(key)
        return entry if entry is not None and entry.version == version and entry.place is place else None

    def _push_active(self, entry: _Entry) -> None:
        entry.place = Place.ACTIVE
        entry.version += 1
        item = (0 if entry.urgent else 1, -entry.priority, entry.arrived, entry.key, entry.version)
        heapq.heappush(self._active, item)

    def _push_backoff(self, entry: _Entry) -> None:
        entry.place = Place.BACKOFF
        entry.version += 1
        ready = entry.failed_at + self.backoff_of(entry.attempts)
        heapq.heappush(self._backoff, (ready, entry.arrived, entry.key, entry.version))
