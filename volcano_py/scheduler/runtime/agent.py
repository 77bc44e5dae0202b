"""The agent scheduler process: latency-bound pods placed as they arrive, beside the batch scheduler.

Volcano's design (``docs/design/agent-scheduler.md`` in its repository), on this package's parts:

* **the cache** is the batch scheduler's (``SchedulerCache``): one mirror of nodes, pods, queues and shards;
  its watchers feed the scheduling queue (``agent_feed.py`` over ``scheduler/agent/queue.py``): a pod that
  waits for this scheduler is active at once; one no node could take waits until an event that can help
  and its backoff;
* **workers** (``--scheduler-worker-count``) each take the active pods there are (up to ``batch_limit``),
  best first, and run one session of the agent conf over a view of the cluster in which the pods the other
  workers hold are hidden. The session is the batch scheduler's own (``core.run_session`` through a
  ``DefaultCore`` of the agent registry): the same predicates, node scoring and queue plugins decide, so the
  two schedulers cannot judge a node differently. Each worker keeps its own parsed records (Volcano: a
  framework per worker), so views are brought up to date by what changed;
* **how workers run in parallel**: asyncio tasks on one event loop. A session of a few pods (a millisecond or
  two) runs on the loop itself; a larger batch runs in a thread (as the batch scheduler's sessions do), so
  while one worker decides, the loop serves the watches, the binds in flight and the other workers' view
  building. The sessions share one interpreter, so on CPU they take turns: more workers overlap deciding
  with the I/O around it, not two decisions with each other (measured in ``benchmarks/bench_agent.py``);
* **the optimistic binder**: a placement on a node a pod landed on since the worker's view was taken is
  refused and its pod retried first (``scheduler/agent/races.py``); the others are assumed in the cache and
  bound through ``pods/binding`` by the batch scheduler's ``Binder``;
* a pod no node could take is told so on its ``PodScheduled`` condition and by an Event, once per distinct
  message (``agent_unschedulable.py``);
* a pod of a Queue with a capability is placed only while this scheduler holds the Queue's turn, which the
  batch scheduler takes too (``queue_room.py``);
* sharding as the batch scheduler's (``--scheduler-sharding-mode``/``--scheduler-sharding-name``, NodeShard
  ``agent-scheduler`` by default): its ``nodesInUse`` is written after a session when no other is running;
* leader election on the Lease named after the scheduler, writes fenced by it (``process.py``, as the batch
  scheduler's).

Its command line is ``AgentOptions`` (``options.py``).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Final

from volcano_py.api.queue_charge import queue_of_pod
from volcano_py.api.shard import ShardingMode
from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.health import MetricsServer
from volcano_py.kube.kinds import object_identity
from volcano_py.kube.leader import run_unless_stopped
from volcano_py.log import get_logger
from volcano_py.scheduler.agent import pods as agent_pods
from volcano_py.scheduler.agent.conf import agent_registry
from volcano_py.scheduler.framework.decisions import Bind
from volcano_py.scheduler.runtime.agent_feed import AgentFeed
from volcano_py.scheduler.runtime.agent_unschedulable import UnschedulableTeller
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.cycle import ConfSource, CycleOutcome, DefaultCore
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.options import BATCH_LIMIT, AgentOptions
from volcano_py.scheduler.runtime.process import (
    connected,
    end_turns,
    fenced_elector,
    lead,
    queue_turns,
    serving,
    sleep_until_either,
)
from volcano_py.scheduler.runtime.shard_status import ShardStatusWriter

# The CLI and the tests import the options from here, beside the process.
__all__ = ["BATCH_LIMIT", "AgentOptions", "AgentScheduler", "run_agent_scheduler"]

_log = get_logger(__name__)

# How long an idle worker sleeps at most before looking at the backoff and the unschedulable pool again.
IDLE_SECONDS: Final = 1.0
# Sessions of at most this many pods run on the event loop rather than in a thread.
INLINE_PODS: Final = 8
# How long a pod waits before it is tried again when the other scheduler holds its Queue's turn.
TURN_WAIT_SECONDS: Final = 0.05
# How often the pods unschedulable for too long are moved out of the pool (it walks them all).
EXPIRE_EVERY_SECONDS: Final = 5.0


class AgentScheduler:
    """One agent scheduler process; ``run()`` until ``stop`` is set."""

    def __init__(self, options: AgentOptions, client: KubeClient) -> None:
        self.options = options
        self.client = client
        self.name = options.scheduler_name
        sharded = options.sharding.mode is not ShardingMode.NONE
        self.conf = ConfSource(options.scheduler_conf, options)
        self.metrics = SchedulerMetrics()
        self.cache = SchedulerCache(
            client,
            scheduler_names=(self.name,),
            sharding=sharded,
            # Its own bound pods count in their Queues as the partners' do: a session's jobs are only the pods
            # it places (``agent_pods.shown_as``).
            partners=[*(name for name in options.partner_names if name != self.name), self.name],
            shown_as=functools.partial(agent_pods.shown_as, self.name),
        )
        self.recorder = EventRecorder(client, component=self.name)
        self.binder = Binder(
            client, self.cache, self.recorder, self.metrics, bind_concurrency=options.bind_concurrency
        )
        self.teller = UnschedulableTeller(client, self.recorder, self.binder)
        self.feed = AgentFeed(self.name, self.cache, gone=self.teller.forget)
        self.cache.watchers.append(self.feed.on_change)
        self.binder.unbound = self.feed.unbound
        self.shard_status = ShardStatusWriter(client, options.sharding) if sharded else None
        self.elector = fenced_elector(
            client,
            self.binder,
            elect=options.leader_elect,
            namespace=options.lease_namespace,
            name=options.lease_name or self.name,
            identity=options.identity,
            timing=options.lease_timing,
        )
        self.turns = queue_turns(
            client, self.cache, namespace=options.lease_namespace, identity=f"{self.name}/{options.identity}"
        )
        self.server = MetricsServer(
            self.metrics,
            host=options.metrics_host,
            port=options.metrics_port,
            ready=self.ready,
            component=self.name,
        )
        self._cores = [
            DefaultCore(
                (self.name,),
                registry=agent_registry(),
                features=options.feature_gates,
                sharding=options.sharding,
            )
            for _ in range(options.worker_count)
        ]
        self._deciding = 0  # sessions running now
        self._expired_at = time.monotonic()
        self.attempts = 0

    def ready(self) -> bool:
        return self.cache.synced and (self.elector is None or self.elector.is_leader)

    # --- one worker --------------------------------------------------------------------------------------

    async def _work(self, index: int, stop: asyncio.Event) -> None:
        core = self._cores[index]
        queue = self.feed.queue
        while not stop.is_set():
            now = time.monotonic()
            if now - self._expired_at >= EXPIRE_EVERY_SECONDS:
                self._expired_at = now
                queue.expire(now)
            keys = queue.pop(self.options.batch_limit, now)
            if not keys:
                await self._idle(stop)
                continue
            try:
                await self.attempt(core, keys)
            except Exception:
                # A bug or a malformed object must not lose the pods: they back off and are tried again.
                _log.exception("agent scheduling attempt failed", pods=len(keys))
                for key in keys:
                    queue.retry(key, time.monotonic())

    async def _idle(self, stop: asyncio.Event) -> None:
        self.feed.work.clear()
        if self.feed.queue.has_active():
            return
        ready = self.feed.queue.next_ready()
        wait = IDLE_SECONDS if ready is None else min(IDLE_SECONDS, max(0.0, ready - time.monotonic()))
        await sleep_until_either(stop, self.feed.work, wait)

    def _capped_queues(self, keys: set[str]) -> dict[str, list[str]]:
        """The Queues with a capability among the pods of ``keys``, with their pods."""
        found: dict[str, list[str]] = {}
        for key in keys:
            pod = self.feed.waiting.get(key)
            if pod is not None:
                queue = queue_of_pod(pod, self.cache.podgroup_queue)
                if self.cache.queue_capability(queue) is not None:
                    found.setdefault(queue, []).append(key)
        return found

    async def attempt(self, core: DefaultCore, keys: list[str]) -> CycleOutcome | None:
        """Place the pods of ``keys`` (taken from the queue) in one session; each is bound, retried first
        (a race lost), or left unschedulable with the session's reason."""
        self.attempts += 1
        feed = self.feed
        taken = set(keys)
        queues = self._capped_queues(taken)
        held: set[str] = set()
        if queues:
            # Pods of a Queue with a capability are placed only while this scheduler holds its turn there.
            held = await self.turns.begin(queues)
            now = time.monotonic()
            for queue in set(queues) - held:
                for key in queues[queue]:
                    taken.discard(key)
                    feed.queue.defer(key, now, TURN_WAIT_SECONDS)
            if not taken:
                return None
        mark = feed.versions.mark()
        state = self.cache.snapshot(placing=taken, podgroups=False)
        conf = self.conf.conf
        self._deciding += 1
        try:
            if len(taken) <= INLINE_PODS:
                # A few pods take a session of a millisecond or two: a thread would cost more than it saves
                # (the event loop waits for the interpreter's lock while the session holds it, by switch
                # intervals of 5 ms: at 5,000 nodes two workers in threads had thrice the median of one on
                # the loop), so they are decided on the loop itself; workers overlap the larger batches.
                outcome = core.run(state, conf, datetime.now(UTC))
            else:
                outcome = await asyncio.to_thread(core.run, state, conf, datetime.now(UTC))
        finally:
            self._deciding -= 1
        settled: set[str] = set()
        binds: list[Bind] = []
        for bind in outcome.result.binds:
            key = f"{bind.namespace}/{bind.name}"
            if key not in taken:
                continue
            settled.add(key)
            if key not in feed.waiting:
                continue  # deleted or bound meanwhile
            if feed.versions.raced(bind.node, mark):
                feed.queue.conflicted(key)
                feed.work.set()
                continue
            feed.versions.landed(bind.node)
            feed.queue.scheduled(key)
            binds.append(bind)
        if binds:
            self.binder.submit_binds(binds)
            self.metrics.schedule_attempts.labels("scheduled").inc(len(binds))
        end_turns(self.turns, self.binder, held, queues, binds)
        reasons = {
            object_identity(w.obj): w.message for w in outcome.warnings if w.reason == "FailedScheduling"
        }
        now = time.monotonic()
        for key in taken - settled:
            pod = feed.waiting.get(key)
            if pod is None or self.cache.assumed_node(key) is not None:
                continue
            feed.queue.unschedulable(key, now)
            self.metrics.schedule_attempts.labels("unschedulable").inc()
            self.teller.tell(key, pod, reasons.get(object_identity(pod)) or "no node can take the pod")
        if not self._deciding:
            await self._publish_shard()
        return outcome

    # --- the process -------------------------------------------------------------------------------------

    async def _publish_shard(self) -> None:
        """The shard's nodes this scheduler uses, written when no worker is deciding on an older view (as
        Volcano's shard coordinator): what lets the sharding controller hand a node over."""
        if self.shard_status is not None and self.binder.may_write("NodeShard status"):
            self.feed.shard_changed.clear()
            await self.shard_status.publish(self.cache.nodeshards())

    async def _keep_shard_status(self, stop: asyncio.Event) -> None:
        """A shard change is answered even when no pod comes to be placed."""
        while not stop.is_set():
            await sleep_until_either(stop, self.feed.shard_changed, IDLE_SECONDS)
            if self.feed.shard_changed.is_set() and not self._deciding:
                await self._publish_shard()

    async def _schedule_until(self, stop: asyncio.Event) -> None:
        async with asyncio.TaskGroup() as group:
            if self.shard_status is not None:
                group.create_task(self._keep_shard_status(stop))
            for index in range(self.options.worker_count):
                group.create_task(self._work(index, stop))

    async def run(self, stop: asyncio.Event, *, started: Callable[[], Awaitable[None]] | None = None) -> None:
        """``started``: awaited once the caches are synced (the process freezes its heap there)."""
        async with serving(self.server, self.cache.run, self.recorder.run, self.binder.run, self.conf.watch):
            if await run_unless_stopped(self.cache.wait_synced(), stop):
                _log.info(
                    "agent scheduler started",
                    name=self.name,
                    workers=self.options.worker_count,
                    sharding=self.options.sharding.mode.value,
                    identity=self.options.identity,
                )
                if started is not None:
                    await started()
                await lead(self.elector, self.binder, stop, self._schedule_until)
            await self.binder.wait_idle()


async def run_agent_scheduler(
    options: AgentOptions, stop: asyncio.Event, *, started: Callable[[], Awaitable[None]] | None = None
) -> None:
    """Run an agent scheduler in this event loop until ``stop`` is set (tests, ``volcano-py up``, the CLI)."""
    async with connected(options.kubeconfig) as client:
        await AgentScheduler(options, client).run(stop, started=started)
