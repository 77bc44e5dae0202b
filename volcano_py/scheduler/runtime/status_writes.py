"""The binder's status writes: PodGroup status and Queue ``status.allocated``, coalesced, flushed in batches.

* Each is written only when it differs from what the cache holds (and from what is already on its way),
  coalesced per object. A PodGroup status on its way is promised in the cache, so the next cycles see it
  written (and do not admit the gang again). New counts in the same condition words are written at most
  once per retell window, and a gang whose pods are on their way is told short of them only if it stays so
  (see ``retell``).
* A status saying Running while fewer than ``minMember`` pods run (they are being bound and started), for a
  PodGroup already out of Pending, is held while the gang's binds are on their way and ``START_HOLD_SECONDS``
  after they answer (``START_HOLD_LIMIT`` at most): the status that says they run replaces it, one write
  instead of two.
* Binds come first: while more binds wait than the binder carries at once (a backlog), PodGroup statuses
  wait too, ``BINDS_FIRST_LIMIT`` at most. Each status write costs the API server about what a bind costs,
  and a backlog of one-pod jobs has one per bind; when the queue has drained, one write per PodGroup says
  both its steps (out of Pending, and its pods running). The price: in a backlog a PodGroup can show
  Pending while its pods already run, until the binds are through.
* A write does not wait for the ones handed over before it: each flush hands what is due to at most
  ``writers`` writers, which take a PodGroup going from Pending to Inqueue first, then the Queues, then
  the rest. A restarted scheduler at 5,000 nodes can have 25,000 running gangs' statuses to write
  (minutes of writes on a busy API server), many of them still shown Pending when the scheduler before
  it was killed before it wrote them; a Volcano Job's controller creates its pods only once it reads its
  PodGroup Inqueue, so that write waits for one write ahead of it, not for all of them. One write per
  object is on its way at a time: a newer status waits until the one on its way has answered.
* A Queue's allocation written is remembered until the watch shows the version it answered with: a session
  that meanwhile computes what the cache still shows must write again, or the late write stays on the Queue
  while nothing changes.
* What was told a PodGroup stands in for the cache only while the cache may not show it yet: a write that
  failed, or was dropped at the fence, told nothing (the next session's status goes out at once, not a retell
  window later), and once the watch shows the version a write answered with, the cache is the reference
  again (another writer may have replaced it since: a leader frozen past its lease, woken with a write sent).
* Each write asks the leader's fence right before it goes out, not only when it is handed over: a writer
  may take a status seconds later, after a freeze, when the standby leads and has written newer ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.api.bodies.podgroup import podgroup_shown_phase, podgroup_written_status
from volcano_py.api.bodies.queue import queue_written_status
from volcano_py.api.objects import uid_of
from volcano_py.api.scheduling import PodGroupPhase, min_member_of
from volcano_py.kube import patch
from volcano_py.kube.client import NETWORK_ERRORS, ApiError
from volcano_py.kube.kinds import PODGROUPS, QUEUES
from volcano_py.kube.store import resource_version, version_number
from volcano_py.kube.waiting import event_within
from volcano_py.log import get_logger
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.decisions import PodGroupUpdate, QueueUpdate, SessionResult
from volcano_py.scheduler.framework.podgroup_status import (
    allocated_patch,
    forming,
    only_counts_differ,
    only_forming_news,
    podgroup_status,
    same_podgroup_status,
)
from volcano_py.scheduler.framework.retell import FORMING_GANG_SECONDS, RETELL_SECONDS
from volcano_py.scheduler.runtime.writes import WriteContext

_log = get_logger(__name__)

# How long a status saying Running waits for the pods it counts to start once their binds have answered
# (see ``_starting``), and at most in all.
START_HOLD_SECONDS: Final = 5.0
START_HOLD_LIMIT: Final = 60.0
# How long a PodGroup status waits at most behind a bind queue that stays full (see the module's doc).
BINDS_FIRST_LIMIT: Final = 120.0


@dataclass(slots=True)
class _Told:
    """A status handed to the writers for a PodGroup (of ``uid``), at ``at`` (clock time); ``answered``: the
    resourceVersion its write answered with (None while it is on its way)."""

    uid: str
    status: dict[str, Any]
    at: float
    answered: int | None = None

    def shown_in(self, podgroup: dict[str, Any]) -> bool:
        """Whether ``podgroup`` (the cache's) is at the version the write answered with, or later."""
        if self.answered is None:
            return False
        return (version_number(resource_version(podgroup)) or 0) >= self.answered


def _shown_pending(podgroup: dict[str, Any] | None) -> bool:
    """Whether the API still shows ``podgroup`` Pending (a PodGroup with no status yet is)."""
    return podgroup_shown_phase(podgroup) == PodGroupPhase.PENDING.value


def _starting(status: dict[str, Any], podgroup: dict[str, Any]) -> bool:
    """A status saying Running while fewer pods than the gang's minimum run or are done: its pods are being
    bound and started, and the next status will count them. Never for a PodGroup the API still shows
    Pending: as in Volcano, a gang's pods never run while its PodGroup says Pending (Volcano's e2e checks
    it the moment a pod runs), so that first step out of Pending is written at once."""
    if status.get("phase") != PodGroupPhase.RUNNING.value:
        return False
    if _shown_pending(podgroup):
        return False
    done = int(status.get("running") or 0) + int(status.get("succeeded") or 0)
    return done < min_member_of(podgroup)


class StatusWrites:
    """Writes through ``slots``; ``binds_first``: whether the binder's bind queue is full (see the module's
    doc); ``clock`` times the holds and the retell window."""

    def __init__(
        self,
        ctx: WriteContext,
        slots: asyncio.Semaphore,
        *,
        writers: int,
        binds_first: Callable[[], bool],
        clock: Callable[[], float],
        flush_interval: float,
    ) -> None:
        self.ctx = ctx
        self._slots = slots
        self._writers = writers
        self._binds_first = binds_first
        self.clock = clock
        self.flush_interval = flush_interval
        self._pending_pg: dict[str, dict[str, Any]] = {}
        # When each pending status was first queued (clock time), for how long binds may go first.
        self._queued_at: dict[str, float] = {}
        # Pending statuses saying Running while the gang's pods start, held since then (clock time); the
        # gangs whose binds are on their way (by PodGroup key: how many), and when the last ones answered.
        self._held_since: dict[str, float] = {}
        self._binding: dict[str, int] = {}
        self._answered_at: dict[str, float] = {}
        self._sent_pg: dict[str, dict[str, Any]] = {}
        # What was last handed over for each PodGroup, for the retell window: the watch can lag behind a
        # write by seconds under load, so the cache alone does not know it was told.
        self._told: dict[str, _Told] = {}
        # Since when each gang has been offered as short of its pods (``forming``), while it is.
        self._short_since: dict[str, float] = {}
        self._pending_queue: dict[str, tuple[dict[str, Any], Resource]] = {}
        # Each Queue's last allocation written and the resourceVersion it answered with (None while on its
        # way), until the watch shows that version (see the module's doc).
        self._queue_written: dict[str, tuple[int | None, Resource]] = {}
        self._dirty = asyncio.Event()
        # Handed to the writers and not taken yet, in the order they take them (see ``_next_write``): a
        # status still here is replaced in its place by a newer one.
        self._due_first: dict[str, dict[str, Any]] = {}
        self._due_queues: dict[str, tuple[dict[str, Any], Resource]] = {}
        self._due_pg: dict[str, dict[str, Any]] = {}
        self._writer_tasks: set[asyncio.Task[None]] = set()

    # --- what the binder tells ------------------------------------------------------------------------------

    def offer(self, result: SessionResult) -> None:
        """Queue a session's PodGroup and Queue statuses (those that say something new)."""
        for update in result.podgroup_updates:
            self._queue_podgroup_status(update)
        for queue in result.queue_updates:
            self._queue_queue_status(queue)
        if result.podgroup_updates or result.queue_updates:
            self._dirty.set()

    def binds_sent(self, job: str) -> None:
        """A gang's binds (of PodGroup ``job``) are on their way: a status saying it runs waits for them."""
        self._binding[job] = self._binding.get(job, 0) + 1

    def binds_answered(self, job: str) -> None:
        left = self._binding.pop(job, 1) - 1
        if left:
            self._binding[job] = left
        else:
            self._answered_at[job] = self.clock()

    # --- queued, coalesced ----------------------------------------------------------------------------------

    def _queue_podgroup_status(self, update: PodGroupUpdate) -> None:
        cache = self.ctx.cache
        key = f"{update.namespace}/{update.name}"
        podgroup = cache.podgroup(key)
        if podgroup is None:
            return
        now = self.clock()
        if forming(update):
            since = self._short_since.setdefault(key, now)
        else:
            since = None
            self._short_since.pop(key, None)
        current = podgroup_written_status(podgroup)
        status = podgroup_status(update, current)
        if same_podgroup_status(status, current):
            self._pending_pg.pop(key, None)
            self._due_first.pop(key, None)
            self._due_pg.pop(key, None)
            self._queued_at.pop(key, None)
            self._held_since.pop(key, None)
            cache.withdraw_status(key)
            return
        on_its_way = (
            self._pending_pg.get(key)
            or self._due_first.get(key)
            or self._due_pg.get(key)
            or self._sent_pg.get(key)
            or cache.promised_status(key)
        )
        if same_podgroup_status(status, on_its_way):
            return  # already on its way, or written and the watch has not caught up yet
        told = self._told.get(key)
        if told is not None and (told.uid != uid_of(podgroup) or now - told.at >= RETELL_SECONDS):
            told = None  # another PodGroup of that name, or long ago
        if told is not None and (
            only_counts_differ(status, current)
            or (not told.shown_in(podgroup) and only_counts_differ(status, told.status))
        ):
            return  # new counts in the same words: the session offers it again next cycle
        if since is not None and now - since < FORMING_GANG_SECONDS and only_forming_news(status, current):
            return  # a gang whose pods are on their way: told if it stays short (see retell)
        self._pending_pg[key] = status
        self._queued_at.setdefault(key, now)
        if _starting(status, podgroup):
            self._held_since.setdefault(key, now)
        else:
            self._held_since.pop(key, None)
        cache.promise_status(key, status)

    def _queue_queue_status(self, update: QueueUpdate) -> None:
        metrics = self.ctx.metrics
        metrics.set_queue_resources("allocated", update.name, update.allocated)
        if update.deserved is not None:
            metrics.set_queue_resources("deserved", update.name, update.deserved)
        if update.capability is not None:
            metrics.set_queue_resources("capacity", update.name, update.capability)
        if update.request is not None:
            metrics.set_queue_resources("request", update.name, update.request)
        metrics.set_queue_share(update.name, update.allocated, update.deserved, update.weight)
        queue = self.ctx.cache.queue(update.name)
        if queue is None:
            return
        written = self._queue_written.get(update.name)
        shown = version_number(resource_version(queue)) or 0
        if written is not None and written[0] is not None and shown >= written[0]:
            del self._queue_written[update.name]  # the watch has shown it: the cache is the reference again
            written = None
        current = queue_written_status(queue)
        body = allocated_patch(update.allocated, current, None if written is None else written[1])
        if body is None:
            self._pending_queue.pop(update.name, None)
            self._due_queues.pop(update.name, None)
            return
        self._pending_queue[update.name] = (body, update.allocated)

    def _holds(self, key: str, now: float) -> bool:
        """Whether the pending status of ``key`` still waits: behind a full bind queue, or for its gang's pods
        to start."""
        if self._binds_first() and now - self._queued_at.get(key, now) < BINDS_FIRST_LIMIT:
            return True
        since = self._held_since.get(key)
        if since is None or now - since >= START_HOLD_LIMIT:
            return False
        if self._binding.get(key):
            return True  # binds on their way: a backlog's gangs wait their turn in the binder
        return now - self._answered_at.get(key, since) < START_HOLD_SECONDS

    def _all_held_behind_binds(self, now: float) -> bool:
        """Whether every pending status waits behind the full bind queue, and nothing else is to be written:
        a backlog's 50,000 statuses, each looked at every second, cost more than a second of CPU over its
        drain. The first queued is the oldest (``_queued_at`` keeps each key's first time, in order)."""
        if self._pending_queue or not self._pending_pg or not self._binds_first():
            return False
        oldest = next(iter(self._queued_at.values()), now)
        return now - oldest < BINDS_FIRST_LIMIT

    # --- flushed --------------------------------------------------------------------------------------------

    async def flush_forever(self) -> None:
        try:
            while True:
                if self._pending_pg or self._pending_queue:
                    await event_within(self._dirty, 1.0)  # a held status may be due without news
                else:
                    await self._dirty.wait()
                self._dirty.clear()
                self._hand_over()
                await asyncio.sleep(self.flush_interval)  # let the next cycles' updates coalesce
        finally:
            for task in self._writer_tasks:
                task.cancel()

    async def flush(self) -> None:
        """Hand over what is due now, and wait until the writers have written everything handed over."""
        self._hand_over()
        while self._writer_tasks:
            await asyncio.gather(*self._writer_tasks)

    def _hand_over(self) -> None:
        """Move the statuses due now (not held, none of the object's on its way) to the writers."""
        cache = self.ctx.cache
        now = self.clock()
        if self._all_held_behind_binds(now):
            return
        held = {k: s for k, s in self._pending_pg.items() if k in self._sent_pg or self._holds(k, now)}
        podgroups = {k: s for k, s in self._pending_pg.items() if k not in held} if held else self._pending_pg
        self._pending_pg = held
        self._queued_at = {k: t for k, t in self._queued_at.items() if k in held}
        self._held_since = {k: t for k, t in self._held_since.items() if k in held}
        self._answered_at = {k: t for k, t in self._answered_at.items() if now - t < START_HOLD_SECONDS}
        queues = {n: q for n, q in self._pending_queue.items() if not self._queue_on_its_way(n)}
        self._pending_queue = {n: q for n, q in self._pending_queue.items() if n not in queues}
        if (podgroups or queues) and self.ctx.fence("status writes") is None:
            self._drop_due()
            for key, status in podgroups.items():
                cache.withdraw_status(key, status)
            return  # the next leader writes status from its own cache
        self._told = {k: told for k, told in self._told.items() if now - told.at < RETELL_SECONDS}
        for key, status in podgroups.items():
            podgroup = cache.podgroup(key)
            self._told[key] = _Told(uid_of(podgroup or {}), status, now)
            if key in self._due_first or self._admits(key, status):
                self._due_pg.pop(key, None)  # one write per object: this one, and first
                self._due_first[key] = status
            else:
                self._due_pg[key] = status
        self._short_since = {k: t for k, t in self._short_since.items() if cache.podgroup(k) is not None}
        self._due_queues.update(queues)
        due = len(self._due_first) + len(self._due_queues) + len(self._due_pg)
        for _ in range(min(self._writers - len(self._writer_tasks), due)):
            task = asyncio.create_task(self._writer())
            self._writer_tasks.add(task)
            task.add_done_callback(self._writer_done)

    def _drop_due(self) -> None:
        """Leadership lost: what was handed over and not taken yet is not written (nor promised)."""
        for key, status in (*self._due_first.items(), *self._due_pg.items()):
            self._untold(key, status)
        self._due_first.clear()
        self._due_pg.clear()
        self._due_queues.clear()

    def _untold(self, key: str, status: dict[str, Any]) -> None:
        """``status`` was not written (refused, failed, dropped at the fence): neither promised nor told."""
        self.ctx.cache.withdraw_status(key, status)
        told = self._told.get(key)
        if told is not None and told.status is status:
            del self._told[key]

    def _fenced(self, what: str) -> bool:
        """Whether the fence drops a write taken now; then nothing else handed over goes out either."""
        if self.ctx.fence(what) is not None:
            return False
        self._drop_due()
        return True

    def _queue_on_its_way(self, name: str) -> bool:
        written = self._queue_written.get(name)
        return written is not None and written[0] is None

    def _next_write(self) -> Coroutine[Any, Any, None] | None:
        # A PodGroup admitted first (see ``_admits``), then the Queues, whose allocation the capacity plugins
        # read, then the rest.
        if self._due_first:
            key = next(iter(self._due_first))
            return self._write_podgroup(key, self._due_first.pop(key))
        if self._due_queues:
            name = next(iter(self._due_queues))
            body, allocated = self._due_queues.pop(name)
            return self._write_queue(name, body, allocated)
        if self._due_pg:
            key = next(iter(self._due_pg))
            return self._write_podgroup(key, self._due_pg.pop(key))
        return None

    async def _writer(self) -> None:
        while (write := self._next_write()) is not None:
            await write

    def _writer_done(self, task: asyncio.Task[None]) -> None:
        self._writer_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("status writer failed", error=repr(task.exception()))
            self._dirty.set()  # what it left is handed to a new writer

    def _admits(self, key: str, status: dict[str, Any]) -> bool:
        """Whether ``status`` takes a PodGroup the API shows Pending to Inqueue: its Volcano Job's controller
        waits to read that before it creates the pods. A Pending one going to Running has its pods already
        (a restarted scheduler's running gangs whose status the one before it never wrote)."""
        return status.get("phase") == PodGroupPhase.INQUEUE.value and _shown_pending(
            self.ctx.cache.podgroup(key)
        )

    async def _write_podgroup(self, key: str, status: dict[str, Any]) -> None:
        namespace, name = key.split("/", 1)
        self._sent_pg[key] = status
        _log.debug(
            "PodGroup status write",
            podgroup=key,
            phase=status["phase"],
            running=status["running"],
            conditions=["{type}={status}:{reason}".format_map(c) for c in status["conditions"]],
        )
        async with self._slots:
            try:
                if self._fenced(f"PodGroup status {key}"):
                    self._untold(key, status)
                    return
                # Volcano's PodGroup CRD has no status subresource: status is written on the object itself.
                answer = await patch.patch_status(
                    self.ctx.client, PODGROUPS, name, namespace, status, subresource=False
                )
                self.ctx.cache.status_written(key, status)
                told = self._told.get(key)
                if told is not None and told.status is status:
                    # 0 when the answer's version is not a number: the cache is the reference at once.
                    told.answered = version_number(resource_version(answer)) or 0
            except (ApiError, *NETWORK_ERRORS) as exc:
                self._untold(key, status)
                if not (isinstance(exc, ApiError) and exc.not_found):
                    _log.warning(
                        "PodGroup status write failed; retried next cycle", podgroup=key, error=str(exc)
                    )
            finally:
                self._sent_pg.pop(key, None)

    async def _write_queue(self, name: str, body: dict[str, Any], allocated: Resource) -> None:
        self._queue_written[name] = (None, allocated)
        async with self._slots:
            if self._fenced(f"Queue status {name}"):
                self._queue_written.pop(name, None)
                return
            try:
                answer = await patch.patch_status(self.ctx.client, QUEUES, name, None, body)
            except (ApiError, *NETWORK_ERRORS) as exc:
                self._queue_written.pop(name, None)  # what the cache shows is all there is
                if not (isinstance(exc, ApiError) and exc.not_found):
                    _log.warning("Queue status write failed; retried next cycle", queue=name, error=repr(exc))
            else:
                # 0 when the answer's version is not a number: the cache is the reference again at once.
                self._queue_written[name] = (version_number(resource_version(answer)) or 0, allocated)
