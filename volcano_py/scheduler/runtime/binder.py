"""Carries a session's decisions to the API server, off the scheduling path.

``submit()`` is synchronous and returns at once: it records the promises in the cache (so the next snapshot
already sees the binds and evictions) and schedules the requests as tasks of the binder's own TaskGroup.

* Binds go through ``pods/binding``, a gang's all at once (a pod's ResourceClaims allocated and reserved for
  it first, as kube-scheduler does, and taken back when its bind fails), with at most ``bind_concurrency``
  in flight over all gangs. A bound pod gets its ``Scheduled`` Event within a budget per second; a gang's
  pods bound beyond it are told in one Event on their PodGroup (see ``scheduled``). A refused bind rolls back
  the assumption, marks the pod ``PodScheduled=False`` with reason ``SchedulerError`` and records
  ``FailedScheduling``; the pod is pending again in the next cycle.
* Evictions first set the ``DisruptionTarget`` condition (so the pod's owner can tell preemption from a
  crash), then delete with the pod's uid as a precondition.
* A pod whose queue admitted it past Volcano's queue-allocation gate has that gate removed (a strategic
  merge patch deleting just it), best effort: one that fails is decided again by a later cycle.
* PodGroup status and Queue ``status.allocated`` are written only when they differ from what the cache holds
  (and from what is already on its way), coalesced per object and flushed in batches. A PodGroup status on
  its way is promised in the cache, so the next cycles see it written (and do not admit the gang again). A
  status saying Running while fewer than ``minMember`` pods run (they are being bound and started), for a
  PodGroup already out of Pending, is held while the gang's binds are on their way and ``START_HOLD_SECONDS``
  after they answer (``START_HOLD_LIMIT`` at most): the status that says they run replaces it, one write
  instead of two.
* Binds come first: while more binds wait than ``bind_concurrency`` carries at once (a backlog), PodGroup
  statuses wait too, ``BINDS_FIRST_LIMIT`` at most. Each status write costs the API server about what a
  bind costs, and a backlog of one-pod jobs has one per bind; when the queue has drained, one write per
  PodGroup says both its steps (out of Pending, and its pods running). The price: in a backlog a PodGroup
  can show Pending while its pods already run, until the binds are through.

Every write first asks ``may_write`` (the leader's fence, ``kube.leader``): a scheduler frozen past its lease
wakes with binds and evictions decided before the freeze still queued here, and must not send them after a
standby took over. A dropped bind or eviction is taken back from the cache, as a refused one is.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final

import aiohttp

from volcano_py.api import constants as c
from volcano_py.api.scheduling import PodGroupPhase, min_member_of
from volcano_py.kube import binding, claims, patch
from volcano_py.kube.claims import ClaimError
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.events import NORMAL, WARNING, EventRecorder
from volcano_py.kube.kinds import PODGROUPS, QUEUES
from volcano_py.kube.leader import WriteStamp, through_fence
from volcano_py.kube.store import resource_version, version_number
from volcano_py.log import get_logger
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.decisions import (
    EVICTING_ACTIONS,
    Bind,
    ClaimWrite,
    Evict,
    Pipeline,
    PodGroupUpdate,
    QueueUpdate,
    SessionResult,
    Ungate,
    binds_by_job,
)
from volcano_py.scheduler.framework.podgroup_status import (
    allocated_patch,
    forming,
    only_counts_differ,
    only_forming_news,
    podgroup_status,
    same_podgroup_status,
)
from volcano_py.scheduler.framework.retell import FORMING_GANG_SECONDS, RETELL_SECONDS
from volcano_py.scheduler.framework.task import timestamp
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.scheduled import (
    SCHEDULED_EVENT_BURST,
    SCHEDULED_EVENT_QPS,
    EventBudget,
    summary,
)

_log = get_logger(__name__)

NETWORK_ERRORS: Final = (aiohttp.ClientError, TimeoutError, ConnectionError)


def _pod_ref(namespace: str, name: str, uid: str) -> dict[str, Any]:
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": namespace, "uid": uid}}


# How long a status saying Running waits for the pods it counts to start once their binds have answered
# (see ``_starting``), and at most in all.
START_HOLD_SECONDS: Final = 5.0
START_HOLD_LIMIT: Final = 60.0
# How long a PodGroup status waits at most behind a bind queue that stays full (see the module's doc).
BINDS_FIRST_LIMIT: Final = 120.0


def _shown_pending(podgroup: dict[str, Any] | None) -> bool:
    """Whether the API still shows ``podgroup`` Pending (a PodGroup with no status yet is)."""
    phase = ((podgroup or {}).get("status") or {}).get("phase") or PodGroupPhase.PENDING.value
    return bool(phase == PodGroupPhase.PENDING.value)


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
        self.status_flush_interval = status_flush_interval
        self.clock = clock
        self.scheduled_events = EventBudget(scheduled_event_qps, scheduled_event_burst, clock)
        self._bind_slots = asyncio.Semaphore(bind_concurrency)
        self._bind_concurrency = bind_concurrency
        self._status_slots = asyncio.Semaphore(status_concurrency)
        self._group: asyncio.TaskGroup | None = None
        self._pending_pg: dict[str, dict[str, Any]] = {}
        # When each pending status was first queued (clock time), for how long binds may go first.
        self._queued_at: dict[str, float] = {}
        # Pending statuses saying Running while the gang's pods start, held since then (clock time); the
        # gangs whose binds are on their way (by PodGroup key: how many), and when the last ones answered.
        self._held_since: dict[str, float] = {}
        self._binding: dict[str, int] = {}
        self._answered_at: dict[str, float] = {}
        self._sent_pg: dict[str, dict[str, Any]] = {}
        # What was last written to each PodGroup (its uid, the status, when), for the retell window: the
        # watch can lag behind a write by seconds under load, so the cache alone does not know it was told.
        self._told: dict[str, tuple[str, dict[str, Any], float]] = {}
        # Since when each gang has been offered as short of its pods (``forming``), while it is.
        self._short_since: dict[str, float] = {}
        self._pending_queue: dict[str, tuple[dict[str, Any], Resource]] = {}
        # Each Queue's last allocation written and the resourceVersion it answered with (None while on its
        # way), until the watch shows that version: a session that meanwhile computes what the cache still
        # shows must write again, or the late write stays on the Queue while nothing changes.
        self._queue_written: dict[str, tuple[int | None, Resource]] = {}
        # Pods whose gate removal is on its way: a cycle that runs before the watch shows it decides it again.
        self._ungating: set[str] = set()
        self._status_dirty = asyncio.Event()
        self._in_flight = 0
        self._binds_unanswered = 0
        self._idle = asyncio.Event()
        self._idle.set()
        # The leader's fence; always true without leader election.
        self.may_write: Callable[[str], bool] = lambda _what: True
        # Told of each bind that was not made (refused, failed, or dropped at the fence), after the cache
        # forgot it: the agent scheduler puts the pod back in its queue.
        self.unbound: Callable[[Bind], None] = lambda _bind: None
        self.fenced = 0  # writes dropped by the fence

    def _through_fence(self, what: str) -> WriteStamp | None:
        stamp = through_fence(self.may_write, what)
        if stamp is None:
            self.fenced += 1
        return stamp

    def _fenced(self, what: str) -> bool:
        return self._through_fence(what) is None

    # --- lifecycle ------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Own every request task; returns only when cancelled (cancelling whatever is still in flight)."""
        async with asyncio.TaskGroup() as group:
            self._group = group
            group.create_task(self._flush_statuses_forever())
            try:
                await asyncio.Future()
            finally:
                self._group = None

    def spawn(self, coro: Any) -> None:
        """Run a write of the caller's among the binder's requests (waited for by ``wait_idle``)."""
        self._spawn(coro)

    def _spawn(self, coro: Any) -> None:
        if self._group is None:
            coro.close()
            raise RuntimeError("Binder.run() must be running before decisions are submitted")
        self._in_flight += 1
        self._idle.clear()
        task = self._group.create_task(coro)
        task.add_done_callback(self._done)

    def _done(self, _task: asyncio.Task[None]) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._idle.set()

    @property
    def binds_unanswered(self) -> int:
        """Binds submitted whose answer has not come back yet (queued behind the slots, or in flight)."""
        return self._binds_unanswered

    @property
    def queue_full(self) -> bool:
        """More binds wait than ``bind_concurrency`` carries at once: what else would cost the API server or
        this process's CPU waits (PodGroup statuses here, the cache's mirror save)."""
        return self._binds_unanswered > self._bind_concurrency

    async def wait_idle(self) -> None:
        """Until every bind and eviction sent so far has an answer (tests and graceful shutdown)."""
        await self._idle.wait()

    # --- the session's decisions -----------------------------------------------------------------------

    def submit(self, result: SessionResult) -> None:
        """Act on a session's decisions (its binds but those it handed over while it ran: see
        ``submit_binds``)."""
        self.submit_binds(result.binds_left())
        for evict in result.evictions:
            self.cache.mark_evicting(f"{evict.namespace}/{evict.name}", evict.uid)
            self._spawn(self._evict(evict))
        for pipelined in result.pipelined:
            pod = self.cache.pod(f"{pipelined.namespace}/{pipelined.name}")
            # Written once per node: the session repeats the nomination every cycle until the pod binds.
            if pod is not None and (pod.get("status") or {}).get("nominatedNodeName") != pipelined.node:
                self._spawn(self._nominate(pipelined))
        for event in result.podgroup_events:
            podgroup = self.cache.podgroup(f"{event.namespace}/{event.name}")
            if podgroup is not None:
                self.recorder.record(dict(podgroup), NORMAL, event.reason, event.message)
        for ungate in result.ungates:
            key = f"{ungate.namespace}/{ungate.name}"
            if key not in self._ungating:
                self._ungating.add(key)
                self._spawn(self._ungate(ungate, key))
        for update in result.podgroup_updates:
            self._queue_podgroup_status(update)
        for queue in result.queue_updates:
            self._queue_queue_status(queue)
        if result.podgroup_updates or result.queue_updates:
            self._status_dirty.set()

    def submit_binds(self, binds: Sequence[Bind]) -> None:
        """Assume and send binds, each gang's together; a running session hands its committed binds here
        in chunks (through the event loop), and ``submit`` the rest."""
        for job, group in binds_by_job(binds).items():
            self._binding[job] = self._binding.get(job, 0) + 1
            for bind in group:
                self.cache.assume(f"{bind.namespace}/{bind.name}", bind.uid, bind.node, bind.annotations)
                if bind.claims:
                    self.cache.assume_claims(bind.name, bind.uid, bind.claims)
            self._spawn(self._bind_gang(job, group))

    async def _bind_gang(self, job: str, binds: list[Bind]) -> None:
        # The nodes of the pods bound beyond the Event budget; a pod without a PodGroup gets its own anyway.
        untold: list[str] | None = [] if self.cache.podgroup(job) is not None else None
        try:
            if len(binds) == 1:  # a one-pod job, most of a backlog: no gathering future per bind
                results = [await self._counted(self._bind_one(binds[0], untold))]
            else:
                results = await asyncio.gather(*(self._counted(self._bind_one(b, untold)) for b in binds))
        finally:
            left = self._binding.pop(job, 1) - 1
            if left:
                self._binding[job] = left
            else:
                self._answered_at[job] = self.clock()
        failed = results.count(False)
        if failed:
            _log.warning("gang partly unbound", job=job, bound=len(binds) - failed, failed=failed)
        # Looked up again: the PodGroup may have gone while its pods were bound.
        if untold and (podgroup := self.cache.podgroup(job)) is not None:
            # A summary of one pod is that pod's own Event under another name (a backlog of one-pod jobs
            # would write one per pod): the budget that refused the one refuses the other.
            if len(untold) == 1 and not self.scheduled_events.take():
                self.metrics.scheduled_events_skipped.inc()
                return
            message = summary(untold, self.scheduled_events.qps)
            self.recorder.record(dict(podgroup), NORMAL, "Scheduled", message)

    async def _counted(self, bind: Coroutine[Any, Any, bool]) -> bool:
        self._binds_unanswered += 1
        try:
            return await bind
        finally:
            self._binds_unanswered -= 1

    async def _bind_one(self, bind: Bind, untold: list[str] | None = None) -> bool:
        key = f"{bind.namespace}/{bind.name}"
        started = time.monotonic()
        async with self._bind_slots:
            written: list[tuple[ClaimWrite, bool]] = []
            binding_sent = False
            stamp = self._through_fence(f"bind {key}")
            if stamp is None:
                self.cache.forget(key)
                self.cache.forget_claims(bind.uid)
                self.unbound(bind)
                return False
            try:
                # As kube-scheduler's PreBind: the kubelet prepares only claims reserved for the pod.
                for write in bind.claims:
                    wrote = await claims.reserve_claim(
                        self.client,
                        write.namespace,
                        write.name,
                        write.uid,
                        write.allocation,
                        bind.name,
                        bind.uid,
                    )
                    written.append((write, wrote))
                binding_sent = True
                await binding.bind_pod(
                    self.client, bind.namespace, bind.name, bind.uid, bind.node, bind.annotations
                )
            except (ApiError, ClaimError, *NETWORK_ERRORS) as exc:
                self._operation("bind", "error", started)
                # A pod already bound (by a previous leader) runs with its claims: they stay reserved for it.
                already_bound = binding_sent and isinstance(exc, ApiError) and exc.conflict
                if not already_bound:
                    await self._undo_claims(bind, written)
                await self._bind_failed(bind, key, exc, stamp)
                return False
        self._operation("bind", "success", started)
        self.metrics.bound_pods.inc()
        # Per pod, so at debug only: a gang's progress, which the chaos suite times its mid-bind kills from;
        # ``checked``/``sent`` (WriteStamp) place the write in a leader's term.
        _log.debug("bound", pod=key, node=bind.node, **stamp.fields())
        pod = self.cache.pod(key)
        created = timestamp(str((pod or {}).get("metadata", {}).get("creationTimestamp", "")))
        if created:
            self.metrics.task_scheduling_latency.observe(max(0.0, time.time() - created) * 1000)
        if not self.scheduled_events.take() and untold is not None:
            untold.append(bind.node)  # told on its PodGroup once the gang's binds have answered
            return True
        self.recorder.record(
            pod or _pod_ref(bind.namespace, bind.name, bind.uid),
            NORMAL,
            "Scheduled",
            f"Successfully assigned {key} to {bind.node}",
        )
        return True

    async def _undo_claims(self, bind: Bind, written: list[tuple[ClaimWrite, bool]]) -> None:
        """Take back the reservations (and the allocations this bind made) of a pod that was not bound."""
        for write, wrote in reversed(written):
            try:
                await claims.unreserve_claim(
                    self.client, write.namespace, write.name, write.uid, bind.uid, deallocate=wrote
                )
            except (ApiError, ClaimError, *NETWORK_ERRORS) as exc:
                # The resourceclaim controller removes a reservation of a pod that is gone; one of a pending
                # pod stays until the pod is placed again, with the same devices.
                _log.warning("could not take back a claim's reservation", claim=write.key, error=repr(exc))

    async def _bind_failed(self, bind: Bind, key: str, exc: Exception, stamp: WriteStamp) -> None:
        self.cache.forget(key)
        self.cache.forget_claims(bind.uid)
        self.unbound(bind)
        self.metrics.bind_failures.inc()
        self.metrics.schedule_attempts.labels("error").inc()
        message = f"failed to bind {key} to {bind.node}: {exc}"
        _log.warning(
            "bind failed; pod returns to the queue",
            pod=key,
            node=bind.node,
            error=repr(exc),
            **stamp.fields(),
        )
        if isinstance(exc, ApiError) and (exc.not_found or exc.conflict):
            # Gone, or already bound (e.g. by a previous leader whose bind the watch had not shown yet):
            # nothing to mark, and the watch will show where it runs.
            return
        try:
            await patch.set_pod_condition(
                self.client,
                bind.namespace,
                bind.name,
                patch.condition("PodScheduled", "False", "SchedulerError", message),
            )
        except (ApiError, *NETWORK_ERRORS) as mark_exc:
            _log.warning("could not mark the pod unscheduled", pod=key, error=repr(mark_exc))
        pod = self.cache.pod(key) or _pod_ref(bind.namespace, bind.name, bind.uid)
        self.recorder.record(pod, WARNING, "FailedScheduling", message)

    async def _nominate(self, pipelined: Pipeline) -> None:
        key = f"{pipelined.namespace}/{pipelined.name}"
        async with self._status_slots:
            if self._fenced(f"nominate {key}"):
                return
            try:
                await patch.set_nominated_node(
                    self.client, pipelined.namespace, pipelined.name, pipelined.node
                )
            except (ApiError, *NETWORK_ERRORS) as exc:
                if not (isinstance(exc, ApiError) and exc.not_found):
                    _log.warning("nominating a node failed", pod=key, node=pipelined.node, error=repr(exc))

    async def _ungate(self, ungate: Ungate, key: str) -> None:
        started = time.monotonic()
        try:
            async with self._status_slots:
                if self._fenced(f"ungate {key}"):
                    return
                await patch.remove_scheduling_gate(
                    self.client, ungate.namespace, ungate.name, c.QUEUE_ALLOCATION_GATE_KEY
                )
        except (ApiError, *NETWORK_ERRORS) as exc:
            self._operation("ungate", "error", started)
            if not (isinstance(exc, ApiError) and exc.not_found):
                _log.warning("removing the queue-allocation gate failed", pod=key, error=repr(exc))
            return
        finally:
            self._ungating.discard(key)
        self._operation("ungate", "success", started)
        _log.info("queue-allocation gate removed", pod=key, job=ungate.job)

    async def _evict(self, evict: Evict) -> None:
        key = f"{evict.namespace}/{evict.name}"
        started = time.monotonic()
        message = evict.reason + (f" (preempted for {evict.preemptor})" if evict.preemptor else "")
        if evict.detail:
            message = f"{message}: {evict.detail}"
        # The core's evictions name their action (preempt, reclaim, shuffle, consolidate); any other
        # reason is reclaim's.
        action = (
            evict.reason
            if evict.reason in EVICTING_ACTIONS
            else ("preempt" if evict.preemptor else "reclaim")
        )
        async with self._bind_slots:
            stamp = self._through_fence(f"evict {key}")
            if stamp is None:
                self.cache.unmark_evicting(key)
                return
            try:
                await patch.set_pod_condition(
                    self.client,
                    evict.namespace,
                    evict.name,
                    patch.condition("DisruptionTarget", "True", "PreemptionByScheduler", message),
                )
                await patch.delete_pod(self.client, evict.namespace, evict.name, evict.uid)
            except (ApiError, *NETWORK_ERRORS) as exc:
                self._operation("evict", "error", started)
                self.cache.unmark_evicting(key)
                if not (isinstance(exc, ApiError) and exc.not_found):
                    _log.warning("eviction failed", pod=key, error=repr(exc), **stamp.fields())
                return
        self._operation("evict", "success", started)
        _log.debug("evicted", pod=key, action=action, preemptor=evict.preemptor, **stamp.fields())
        self.metrics.evictions.labels(action).inc()
        # By the time the delete answers, the pod's controller may have made a new pod under the same name:
        # the Event names the pod evicted, never its successor.
        cached = self.cache.pod(key)
        same = cached is not None and cached.get("metadata", {}).get("uid") == evict.uid
        pod = cached if same and cached is not None else _pod_ref(evict.namespace, evict.name, evict.uid)
        self.recorder.record(pod, NORMAL, "Evict", f"Pod {key} evicted: {message}")

    def _operation(self, operation: str, result: str, started: float) -> None:
        elapsed_ms = (time.monotonic() - started) * 1000
        self.metrics.task_operation_latency.labels(operation, result).observe(elapsed_ms)

    # --- status, coalesced -------------------------------------------------------------------------------

    def _queue_podgroup_status(self, update: PodGroupUpdate) -> None:
        key = f"{update.namespace}/{update.name}"
        podgroup = self.cache.podgroup(key)
        if podgroup is None:
            return
        now = self.clock()
        if forming(update):
            since = self._short_since.setdefault(key, now)
        else:
            since = None
            self._short_since.pop(key, None)
        current = podgroup.get("status")
        status = podgroup_status(update, current)
        if same_podgroup_status(status, current):
            self._pending_pg.pop(key, None)
            self._queued_at.pop(key, None)
            self._held_since.pop(key, None)
            self.cache.withdraw_status(key)
            return
        on_its_way = self._pending_pg.get(key) or self._sent_pg.get(key) or self.cache.promised_status(key)
        if same_podgroup_status(status, on_its_way):
            return  # already on its way, or written and the watch has not caught up yet
        told = self._told.get(key)
        uid = (podgroup.get("metadata") or {}).get("uid") or ""
        if told is not None and (told[0] != uid or now - told[2] >= RETELL_SECONDS):
            told = None  # another PodGroup of that name, or long ago
        if told is not None and (only_counts_differ(status, current) or only_counts_differ(status, told[1])):
            return  # new counts in the same words: the session offers it again next cycle
        if since is not None and now - since < FORMING_GANG_SECONDS and only_forming_news(status, current):
            return  # a gang whose pods are on their way: told if it stays short (see retell)
        self._pending_pg[key] = status
        self._queued_at.setdefault(key, now)
        if _starting(status, podgroup):
            self._held_since.setdefault(key, now)
        else:
            self._held_since.pop(key, None)
        self.cache.promise_status(key, status)

    def _queue_queue_status(self, update: QueueUpdate) -> None:
        self.metrics.set_queue_resources("allocated", update.name, update.allocated)
        if update.deserved is not None:
            self.metrics.set_queue_resources("deserved", update.name, update.deserved)
        if update.capability is not None:
            self.metrics.set_queue_resources("capacity", update.name, update.capability)
        if update.request is not None:
            self.metrics.set_queue_resources("request", update.name, update.request)
        self.metrics.set_queue_share(update.name, update.allocated, update.deserved, update.weight)
        queue = self.cache.queue(update.name)
        if queue is None:
            return
        written = self._queue_written.get(update.name)
        shown = version_number(resource_version(queue)) or 0
        if written is not None and written[0] is not None and shown >= written[0]:
            del self._queue_written[update.name]  # the watch has shown it: the cache is the reference again
            written = None
        body = allocated_patch(update.allocated, queue.get("status"), None if written is None else written[1])
        if body is None:
            self._pending_queue.pop(update.name, None)
            return
        self._pending_queue[update.name] = (body, update.allocated)

    def _holds(self, key: str, now: float) -> bool:
        """Whether the pending status of ``key`` still waits: behind a full bind queue, or for its gang's pods
        to start."""
        if self.queue_full and now - self._queued_at.get(key, now) < BINDS_FIRST_LIMIT:
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
        if self._pending_queue or not self._pending_pg or not self.queue_full:
            return False
        oldest = next(iter(self._queued_at.values()), now)
        return now - oldest < BINDS_FIRST_LIMIT

    async def _flush_statuses_forever(self) -> None:
        while True:
            if self._pending_pg:
                with contextlib.suppress(TimeoutError):  # a held status may be due without news
                    await asyncio.wait_for(self._status_dirty.wait(), timeout=1.0)
            else:
                await self._status_dirty.wait()
            self._status_dirty.clear()
            await self.flush_statuses()
            await asyncio.sleep(self.status_flush_interval)  # let the next cycles' updates coalesce

    async def flush_statuses(self) -> None:
        now = self.clock()
        if self._all_held_behind_binds(now):
            return
        held = {k: s for k, s in self._pending_pg.items() if self._holds(k, now)}
        podgroups = {k: s for k, s in self._pending_pg.items() if k not in held} if held else self._pending_pg
        self._pending_pg = held
        self._queued_at = {k: t for k, t in self._queued_at.items() if k in held}
        self._held_since = {k: t for k, t in self._held_since.items() if k in held}
        self._answered_at = {k: t for k, t in self._answered_at.items() if now - t < START_HOLD_SECONDS}
        queues, self._pending_queue = self._pending_queue, {}
        if (podgroups or queues) and self._fenced("status writes"):
            for key, status in podgroups.items():
                self.cache.withdraw_status(key, status)
            return  # the next leader writes status from its own cache
        self._told = {k: told for k, told in self._told.items() if now - told[2] < RETELL_SECONDS}
        for key, status in podgroups.items():
            podgroup = self.cache.podgroup(key)
            self._told[key] = (((podgroup or {}).get("metadata") or {}).get("uid") or "", status, now)
        self._short_since = {k: t for k, t in self._short_since.items() if self.cache.podgroup(k) is not None}
        # The slots are taken in this order: a PodGroup leaving Pending first, since its Volcano Job's
        # controller creates the pods only once it reads that (a restarted scheduler may also have
        # thousands of running gangs' counts to write, each costing the API server as much).
        leaving = {key: None for key, status in podgroups.items() if self._leaves_pending(key, status)}
        order = [*leaving, *(key for key in podgroups if key not in leaving)] if leaving else podgroups
        writes = [self._write_podgroup(key, podgroups[key]) for key in order]
        writes += [self._write_queue(name, body, allocated) for name, (body, allocated) in queues.items()]
        await asyncio.gather(*writes)

    def _leaves_pending(self, key: str, status: dict[str, Any]) -> bool:
        return status.get("phase") != PodGroupPhase.PENDING.value and _shown_pending(self.cache.podgroup(key))

    async def _write_podgroup(self, key: str, status: dict[str, Any]) -> None:
        namespace, name = key.split("/", 1)
        self._sent_pg[key] = status
        _log.debug(
            "PodGroup status write",
            podgroup=key,
            phase=status["phase"],
            running=status["running"],
            conditions=[f"{x['type']}={x['status']}:{x['reason']}" for x in status["conditions"]],
        )
        async with self._status_slots:
            try:
                # Volcano's PodGroup CRD has no status subresource: status is written on the object itself.
                await patch.patch_status(self.client, PODGROUPS, name, namespace, status, subresource=False)
                self.cache.status_written(key, status)
            except (ApiError, *NETWORK_ERRORS) as exc:
                self.cache.withdraw_status(key, status)
                if not (isinstance(exc, ApiError) and exc.not_found):
                    _log.warning(
                        "PodGroup status write failed; retried next cycle", podgroup=key, error=str(exc)
                    )
            finally:
                self._sent_pg.pop(key, None)

    async def _write_queue(self, name: str, body: dict[str, Any], allocated: Resource) -> None:
        self._queue_written[name] = (None, allocated)
        async with self._status_slots:
            try:
                answer = await patch.patch_status(self.client, QUEUES, name, None, body)
            except (ApiError, *NETWORK_ERRORS) as exc:
                self._queue_written.pop(name, None)  # what the cache shows is all there is
                if not (isinstance(exc, ApiError) and exc.not_found):
                    _log.warning("Queue status write failed; retried next cycle", queue=name, error=repr(exc))
            else:
                # 0 when the answer's version is not a number: the cache is the reference again at once.
                self._queue_written[name] = (version_number(resource_version(answer)) or 0, allocated)
