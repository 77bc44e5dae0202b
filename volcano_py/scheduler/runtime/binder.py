"""Carries a session's decisions to the API server, off the scheduling path.

``submit()`` is synchronous and returns at once: it records the promises in the cache (so the next snapshot
already sees the binds and evictions) and schedules the requests as tasks of the binder's own TaskGroup.
The binder owns how they run: its TaskGroup, the slots that bound them (``bind_concurrency`` binds and
evictions in flight over all gangs, ``status_concurrency`` lighter patches), and the leader's fence. What
each kind of write does lives with it:

* ``pod_binds``: a gang's binds, its pods' ResourceClaims with them, and their ``Scheduled`` Events;
* ``pod_writes``: evictions, nominated nodes and queue-allocation gate removals;
* ``status_writes``: PodGroup and Queue statuses, coalesced, written by a few writers, behind the binds.

Every write first asks ``may_write`` (the leader's fence, ``kube.leader``): a scheduler frozen past its lease
wakes with binds and evictions decided before the freeze still queued here, and must not send them after a
standby took over. A dropped bind or eviction is taken back from the cache, as a refused one is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import NORMAL, EventRecorder
from volcano_py.kube.leader import WriteStamp, through_fence
from volcano_py.scheduler.framework.decisions import Bind, SessionResult, binds_by_job
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.pod_binds import PodBinds
from volcano_py.scheduler.runtime.pod_writes import PodWrites
from volcano_py.scheduler.runtime.scheduled import SCHEDULED_EVENT_BURST, SCHEDULED_EVENT_QPS, EventBudget
from volcano_py.scheduler.runtime.status_writes import StatusWrites
from volcano_py.scheduler.runtime.writes import WriteContext


class Binder:
    def __init__(
        self,
        client: KubeClient,
        cache: SchedulerCache,
        recorder: EventRecorder,
        metrics: SchedulerMetrics,
        *,
        bind_concurrency: int = 64,
        status_concurrency: int = 16,
        status_flush_interval: float = 0.2,
        scheduled_event_qps: float = SCHEDULED_EVENT_QPS,
        scheduled_event_burst: int = SCHEDULED_EVENT_BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if bind_concurrency < 1 or status_concurrency < 1:
            raise ValueError("bind_concurrency and status_concurrency must be at least 1")
        self.client = client
        self.cache = cache
        self.recorder = recorder
        self.metrics = metrics
        self._bind_concurrency = bind_concurrency
        self._group: asyncio.TaskGroup | None = None
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        # The leader's fence; always true without leader election.
        self.may_write: Callable[[str], bool] = lambda _what: True
        # Told of each bind that was not made (refused, failed, or dropped at the fence), after the cache
        # forgot it: the agent scheduler puts the pod back in its queue.
        self.unbound: Callable[[Bind], None] = lambda _bind: None
        self.fenced = 0  # writes dropped by the fence
        ctx = WriteContext(client, cache, recorder, metrics, self._through_fence, self.spawn)
        bind_slots = asyncio.Semaphore(bind_concurrency)
        status_slots = asyncio.Semaphore(status_concurrency)
        events = EventBudget(scheduled_event_qps, scheduled_event_burst, clock)
        # ``unbound`` looked up at each call: its owner sets it after the binder is made.
        self.binds = PodBinds(ctx, bind_slots, events, lambda bind: self.unbound(bind))
        self.pod_writes = PodWrites(ctx, bind_slots, status_slots)
        self.statuses = StatusWrites(
            ctx,
            status_slots,
            writers=status_concurrency,
            binds_first=lambda: self.queue_full,
            clock=clock,
            flush_interval=status_flush_interval,
        )

    def _through_fence(self, what: str) -> WriteStamp | None:
        stamp = through_fence(self.may_write, what)
        if stamp is None:
            self.fenced += 1
        return stamp

    # --- lifecycle ------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Own every request task; returns only when cancelled (cancelling whatever is still in flight)."""
        async with asyncio.TaskGroup() as group:
            self._group = group
            group.create_task(self.statuses.flush_forever())
            try:
                await asyncio.Future()
            finally:
                self._group = None

    def spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        """Run a write among the binder's requests (waited for by ``wait_idle``)."""
        if self._group is None:
            coro.close()
            raise RuntimeError("Binder.run() must be running before decisions are submitted")
        self._in_flight += 1
        self._idle.clear()
        task = self._group.create_task(coro)
        task.add_done_callback(self._done)

    def _done(self, _task: asyncio.Task[object]) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._idle.set()

    @property
    def binds_unanswered(self) -> int:
        """Binds submitted whose answer has not come back yet (queued behind the slots, or in flight)."""
        return self.binds.unanswered

    @property
    def queue_full(self) -> bool:
        """More binds wait than ``bind_concurrency`` carries at once: what else would cost the API server or
        this process's CPU waits (PodGroup statuses here, the cache's mirror save)."""
        return self.binds.unanswered > self._bind_concurrency

    async def wait_idle(self) -> None:
        """Until every bind and eviction sent so far has an answer (tests and graceful shutdown)."""
        await self._idle.wait()

    # --- the session's decisions ----------------------------------------------------------------------------

    def submit(self, result: SessionResult) -> None:
        """Act on a session's decisions (its binds but those it handed over while it ran: see
        ``submit_binds``)."""
        self.submit_binds(result.binds_left())
        for evict in result.evictions:
            self.pod_writes.evict(evict)
        for pipelined in result.pipelined:
            self.pod_writes.nominate(pipelined)
        for event in result.podgroup_events:
            podgroup = self.cache.podgroup(f"{event.namespace}/{event.name}")
            if podgroup is not None:
                self.recorder.record(dict(podgroup), NORMAL, event.reason, event.message)
        for ungate in result.ungates:
            self.pod_writes.ungate(ungate)
        self.statuses.offer(result)

    def submit_binds(self, binds: Sequence[Bind]) -> None:
        """Assume and send binds, each gang's together; a running session hands its committed binds here
        in chunks (through the event loop), and ``submit`` the rest."""
        for job, group in binds_by_job(binds).items():
            self.statuses.binds_sent(job)
            self.binds.assume(group)
            self.spawn(self._bind_gang(job, group))

    async def _bind_gang(self, job: str, binds: Sequence[Bind]) -> None:
        try:
            await self.binds.bind_gang(job, binds)
        finally:
            self.statuses.binds_answered(job)

    async def flush_statuses(self) -> None:
        """Write the statuses queued now (those not held back); the binder does it on its own as they come."""
        await self.statuses.flush()
