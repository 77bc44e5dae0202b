"""The agent scheduler process: latency-bound pods placed as they arrive, beside the batch scheduler.

Volcano's design (``docs/design/agent-scheduler.md`` in its repository), on this package's parts:

* **the cache** is the batch scheduler's (``SchedulerCache``): one mirror of nodes, pods, queues and shards;
  its watchers feed the scheduling queue (``scheduler/agent/queue.py``): a pod that waits for this scheduler
  is active at once; one no node could take waits until an event that can help (a node added or changed, a
  pod gone or finished, a shard or queue changed) and its backoff;
* **workers** (``--scheduler-worker-count``) each take the active pods there are (up to ``batch_limit``),
  best first, and run one session of the agent conf over a view of the cluster in which the pods the other
  workers hold are hidden. The session is the batch scheduler's own (``core.run_session`` through a
  ``DefaultCore`` of the agent registry): the same predicates, node scoring and queue plugins decide, so the
  two schedulers cannot judge a node differently. Each worker keeps its own parsed records (Volcano: a
  framework per worker), so views are brought up to date by what changed;
* **how workers run in parallel**: asyncio tasks on one event loop; each session runs in a thread (as the
  batch scheduler's does), so while one worker decides, the loop serves the watches, the binds in flight and
  the other workers' view building. The sessions share one interpreter, so on CPU they take turns: more
  workers overlap deciding with the I/O around it, not two decisions with each other (measured in
  ``benchmarks/bench_agent.py``);
* **the optimistic binder**: a placement on a node a pod landed on since the worker's view was taken is
  refused and its pod retried first (``scheduler/agent/races.py``); the others are assumed in the cache and
  bound through ``pods/binding`` by the batch scheduler's ``Binder``;
* a pod no node could take gets ``PodScheduled=False`` with reason ``Unschedulable`` and the session's
  explanation, and a ``FailedScheduling`` Event, once per distinct message;
* sharding as the batch scheduler's (``--scheduler-sharding-mode``/``--scheduler-sharding-name``, NodeShard
  ``agent-scheduler`` by default): its ``nodesInUse`` is written after a session when no other is running;
* leader election on the Lease named after the scheduler, writes fenced by it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from volcano_py.api import constants as c
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.api.queue_charge import queue_of_pod
from volcano_py.api.shard import ShardingMode
from volcano_py.kube import patch
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.events import WARNING, EventRecorder
from volcano_py.kube.health import MetricsServer
from volcano_py.kube.kinds import NODES, NODESHARDS, PODS, QUEUES, ResourceKind, object_identity
from volcano_py.kube.leader import LeaderElector, LeaseTiming, run_unless_stopped, run_while_leading
from volcano_py.kube.store import Delta, EventType
from volcano_py.log import get_logger
from volcano_py.scheduler.agent import pods as agent_pods
from volcano_py.scheduler.agent.conf import agent_registry, load_agent_conf
from volcano_py.scheduler.agent.queue import SchedulingQueue
from volcano_py.scheduler.agent.races import BindVersions
from volcano_py.scheduler.core import Sharding
from volcano_py.scheduler.framework.conf import SchedulerConf
from volcano_py.scheduler.framework.decisions import Bind
from volcano_py.scheduler.runtime.binder import NETWORK_ERRORS, Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.cycle import ConfSource, CycleOutcome, DefaultCore
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.queue_room import QueueRoom, QueueTurns
from volcano_py.scheduler.runtime.runner import default_identity, sleep_until_either
from volcano_py.scheduler.runtime.shard_status import ShardStatusWriter

_log = get_logger(__name__)

Obj = Mapping[str, Any]

# How long an idle worker sleeps at most before looking at the backoff and the unschedulable pool again.
IDLE_SECONDS: Final = 1.0
# Active pods one session takes at most: a burst is decided in a few sessions, not one per pod.
BATCH_LIMIT: Final = 64
# With one worker, sessions of at most this many pods run on the event loop rather than in a thread.
INLINE_PODS: Final = 8
# How long a pod waits before it is tried again when the other scheduler holds its Queue's turn.
TURN_WAIT_SECONDS: Final = 0.05
# How often the pods unschedulable for too long are moved out of the pool (it walks them all).
EXPIRE_EVERY_SECONDS: Final = 5.0


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """Everything ``volcano-py agent-scheduler`` takes on its command line (Volcano's flags where they
    apply), for running it in-process too."""

    kubeconfig: str | None = None
    scheduler_conf: str | None = None
    scheduler_name: str = c.AGENT_SCHEDULER_NAME
    worker_count: int = 1
    batch_limit: int = BATCH_LIMIT
    percentage_of_nodes: int | None = None
    min_percentage_of_nodes: int | None = None
    min_nodes: int | None = None
    metrics_host: str = "0.0.0.0"
    metrics_port: int = 8080
    leader_elect: bool = True
    lease_namespace: str = c.VOLCANO_SYSTEM_NAMESPACE
    lease_name: str = ""  # "": the scheduler's name, as Volcano names the agent scheduler's lock
    identity: str = field(default_factory=default_identity)
    lease_timing: LeaseTiming = field(default_factory=LeaseTiming)
    bind_concurrency: int = 64
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES
    sharding: Sharding = field(default_factory=lambda: Sharding(ShardingMode.NONE, c.AGENT_SCHEDULER_NAME))
    # The schedulers whose pods count in the Queues beside this one's (``runtime/queue_charges.py``).
    partner_names: tuple[str, ...] = (c.SCHEDULER_NAME,)

    def __post_init__(self) -> None:
        if not self.scheduler_name:
            raise ValueError("--scheduler-name must be a non-empty name such as 'agent-scheduler'")
        if self.worker_count < 1:
            raise ValueError(
                "scheduler-worker-count must be greater than 0; "
                f"--scheduler-worker-count is {self.worker_count}"
            )
        if self.batch_limit < 1:
            raise ValueError(f"--batch-limit must be at least 1, got {self.batch_limit}")
        if self.bind_concurrency < 1:
            raise ValueError(f"--bind-concurrency must be at least 1, got {self.bind_concurrency}")
        if not 0 <= self.metrics_port <= 65535:
            raise ValueError(f"--metrics-port must be within 0..65535, got {self.metrics_port}")

    def load_conf(self, text: str | None) -> SchedulerConf:
        return load_agent_conf(
            text,
            percentage_of_nodes=self.percentage_of_nodes,
            min_percentage_of_nodes=self.min_percentage_of_nodes,
            min_nodes=self.min_nodes,
        )


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
            # it places (``_view_hiding``).
            partners=[*(name for name in options.partner_names if name != self.name), self.name],
        )
        self.cache.watchers.append(self._on_change)
        self.recorder = EventRecorder(client, component=self.name)
        self.binder = Binder(
            client, self.cache, self.recorder, self.metrics, bind_concurrency=options.bind_concurrency
        )
        self.binder.unbound = self._unbound
        self.shard_status = ShardStatusWriter(client, options.sharding) if sharded else None
        self.elector = (
            LeaderElector(
                client,
                namespace=options.lease_namespace,
                name=options.lease_name or self.name,
                identity=options.identity,
                timing=options.lease_timing,
            )
            if options.leader_elect
            else None
        )
        if self.elector is not None:
            self.binder.may_write = self.elector.may_write
        room = QueueRoom(
            client,
            namespace=options.lease_namespace,
            identity=f"{self.name}/{options.identity}",
            watch_version=self.cache.watch_version,
        )
        self.turns = QueueTurns(room, lambda key: self.cache.assumed_node(key) is None)
        self.server = MetricsServer(
            self.metrics,
            host=options.metrics_host,
            port=options.metrics_port,
            ready=self.ready,
            component=self.name,
        )
        self.queue = SchedulingQueue()
        self.versions = BindVersions()
        # The pods that wait for this scheduler, by key (their newest version); and every pod of its own as a
        # session sees those it does not place (a pod of no scheduler: bound ones held on their nodes, pending
        # ones left alone), one view per version so a worker's records read each once.
        self.waiting: dict[str, Obj] = {}
        self._hidden: dict[str, dict[str, Any]] = {}
        self._cores = [
            DefaultCore(
                (self.name,),
                registry=agent_registry(),
                features=options.feature_gates,
                sharding=options.sharding,
            )
            for _ in range(options.worker_count)
        ]
        self.work = asyncio.Event()  # set when a pod becomes active
        self._shard_changed = asyncio.Event()  # a NodeShard changed since the status was last written
        self._told: dict[str, str] = {}  # pod key -> the Unschedulable message last written on it
        self._deciding = 0  # sessions running now
        self._expired_at = time.monotonic()
        self.attempts = 0

    def ready(self) -> bool:
        return self.cache.synced and (self.elector is None or self.elector.is_leader)

    # --- the queue's feed --------------------------------------------------------------------------------

    def _on_change(self, kind: ResourceKind, delta: Delta) -> None:
        now = time.monotonic()
        new = None if delta.type is EventType.DELETED else delta.new
        if kind is PODS:
            key = delta.key
            if agent_pods.waits(new, self.name):
                assert new is not None
                self.waiting[key] = new
                # A pod whose bind is on its way is not queued again by a change the watch brings meanwhile
                # (its condition written, say); a bind that fails puts it back (``_unbound``).
                if self.cache.assumed_node(key) is None and self.queue.add(key, agent_pods.priority_of(new)):
                    self.work.set()
            elif key in self.waiting:
                del self.waiting[key]
                self._told.pop(key, None)
                self.queue.remove(key)
            if new is not None and (new.get("spec") or {}).get("schedulerName") == self.name:
                self._hidden[key] = agent_pods.hidden(new)
            else:
                self._hidden.pop(key, None)
            node = agent_pods.landed(delta.old, new)
            # A bind of ours was counted when it was assumed; any other is news to every worker's view.
            if node and self.cache.assumed_node(key) != node:
                self.versions.landed(node)
            if agent_pods.frees_room(delta.old, new):
                self._wake(now)
        elif kind is NODES:
            if new is None:
                self.versions.forget(delta.key)
            elif agent_pods.node_changed(delta.old, new):
                self._wake(now)
        elif kind is NODESHARDS or kind is QUEUES:
            if kind is NODESHARDS:
                self._shard_changed.set()
            self._wake(now)

    def _wake(self, now: float) -> None:
        if self.queue.wake(now):
            self.work.set()

    def _unbound(self, bind: Bind) -> None:
        key = f"{bind.namespace}/{bind.name}"
        pod = self.waiting.get(key) or self.cache.pod(key)
        if pod is None or not agent_pods.waits(pod, self.name):
            return  # gone, or bound after all: the watch says so
        self.waiting[key] = pod
        self.queue.add(key, agent_pods.priority_of(pod))
        self.queue.retry(key, time.monotonic())

    # --- one worker --------------------------------------------------------------------------------------

    async def _work(self, index: int, stop: asyncio.Event) -> None:
        core = self._cores[index]
        while not stop.is_set():
            now = time.monotonic()
            if now - self._expired_at >= EXPIRE_EVERY_SECONDS:
                self._expired_at = now
                self.queue.expire(now)
            keys = self.queue.pop(self.options.batch_limit, now)
            if not keys:
                await self._idle(stop)
                continue
            try:
                await self.attempt(core, keys)
            except Exception:
                # A bug or a malformed object must not lose the pods: they back off and are tried again.
                _log.exception("agent scheduling attempt failed", pods=len(keys))
                for key in keys:
                    self.queue.retry(key, time.monotonic())

    async def _idle(self, stop: asyncio.Event) -> None:
        self.work.clear()
        if self.queue.has_active():
            return
        ready = self.queue.next_ready()
        wait = IDLE_SECONDS if ready is None else min(IDLE_SECONDS, max(0.0, ready - time.monotonic()))
        await sleep_until_either(stop, self.work, wait)

    def _view_hiding(self, taken: set[str]) -> dict[str, dict[str, Any]]:
        """Every pod of ours as another scheduler's but those this attempt places. Its bound pods then count
        on their nodes and, through the queue charges, in their Queues, rather than as a job each: a session
        costs what it places, not what this scheduler ever placed."""
        hidden = dict(self._hidden)
        for key in taken:
            hidden.pop(key, None)
        return hidden

    def _capped_queues(self, keys: set[str]) -> dict[str, list[str]]:
        """The Queues with a capability among the pods of ``keys``, with their pods."""
        found: dict[str, list[str]] = {}
        for key in keys:
            pod = self.waiting.get(key)
            if pod is not None:
                queue = queue_of_pod(pod, self.cache.podgroup_queue)
                if self.cache.queue_capability(queue) is not None:
                    found.setdefault(queue, []).append(key)
        return found

    async def attempt(self, core: DefaultCore, keys: list[str]) -> CycleOutcome | None:
        """Place the pods of ``keys`` (taken from the queue) in one session; each is bound, retried first
        (a race lost), or left unschedulable with the session's reason."""
        self.attempts += 1
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
                    self.queue.defer(key, now, TURN_WAIT_SECONDS)
            if not taken:
                return None
        mark = self.versions.mark()
        state = self.cache.snapshot(hidden=self._view_hiding(taken), podgroups=False)
        conf = self.conf.conf
        self._deciding += 1
        try:
            if self.options.worker_count == 1 and len(taken) <= INLINE_PODS:
                # A few pods take a session of a millisecond or two: a thread would cost more than it saves
                # (the event loop waits for the interpreter's lock while the session holds it, by switch
                # intervals of 5 ms), so one worker decides them on the loop itself.
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
            if key not in self.waiting:
                continue  # deleted or bound meanwhile
            if self.versions.raced(bind.node, mark):
                self.queue.conflicted(key)
                self.work.set()
                continue
            self.versions.landed(bind.node)
            self.queue.scheduled(key)
            binds.append(bind)
        if binds:
            self.binder.submit_binds(binds)
            self.metrics.schedule_attempts.labels("scheduled").inc(len(binds))
        if held:
            bound_keys = [f"{b.namespace}/{b.name}" for b in binds]
            self.binder.spawn(self.turns.end(held, [k for q in held for k in queues[q] if k in bound_keys]))
        reasons = {
            object_identity(w.obj): w.message for w in outcome.warnings if w.reason == "FailedScheduling"
        }
        now = time.monotonic()
        for key in taken - settled:
            pod = self.waiting.get(key)
            if pod is None or self.cache.assumed_node(key) is not None:
                continue
            self.queue.unschedulable(key, now)
            self.metrics.schedule_attempts.labels("unschedulable").inc()
            message = reasons.get(object_identity(pod)) or "no node can take the pod"
            if self._told.get(key) != message:
                self._told[key] = message
                self.binder.spawn(self._tell_unschedulable(pod, message))
        if not self._deciding:
            await self._publish_shard()
        return outcome

    async def _tell_unschedulable(self, pod: Obj, message: str) -> None:
        meta = pod.get("metadata") or {}
        if self.binder.may_write(f"pod condition {meta.get('namespace')}/{meta.get('name')}") is False:
            return
        try:
            await patch.set_pod_condition(
                self.client,
                str(meta.get("namespace")),
                str(meta.get("name")),
                patch.condition("PodScheduled", "False", "Unschedulable", message),
            )
        except (ApiError, *NETWORK_ERRORS) as exc:
            _log.warning("could not mark the pod unschedulable", pod=object_identity(pod), error=repr(exc))
            return
        self.recorder.record(dict(pod), WARNING, "FailedScheduling", message)

    # --- the process -------------------------------------------------------------------------------------

    async def _publish_shard(self) -> None:
        """The shard's nodes this scheduler uses, written when no worker is deciding on an older view (as
        Volcano's shard coordinator): what lets the sharding controller hand a node over."""
        if self.shard_status is not None and self.binder.may_write("NodeShard status"):
            self._shard_changed.clear()
            await self.shard_status.publish(self.cache.nodeshards())

    async def _keep_shard_status(self, stop: asyncio.Event) -> None:
        """A shard change is answered even when no pod comes to be placed."""
        while not stop.is_set():
            await sleep_until_either(stop, self._shard_changed, IDLE_SECONDS)
            if self._shard_changed.is_set() and not self._deciding:
                await self._publish_shard()

    async def _schedule_until(self, stop: asyncio.Event) -> None:
        async with asyncio.TaskGroup() as group:
            if self.shard_status is not None:
                group.create_task(self._keep_shard_status(stop))
            for index in range(self.options.worker_count):
                group.create_task(self._work(index, stop))

    async def _lead(self, stop: asyncio.Event) -> None:
        if self.elector is None:
            await self._schedule_until(stop)
            return
        await run_while_leading(
            self.elector, stop, self._schedule_until, before_release=self.binder.wait_idle
        )

    async def run(self, stop: asyncio.Event, *, started: Callable[[], Awaitable[None]] | None = None) -> None:
        """``started``: awaited once the caches are synced (the process freezes its heap there)."""
        await self.server.start()
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(self.cache.run()),
                    group.create_task(self.recorder.run()),
                    group.create_task(self.binder.run()),
                    group.create_task(self.conf.watch()),
                ]
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
                    await self._lead(stop)
                await self.binder.wait_idle()
                for task in tasks:
                    task.cancel()
        finally:
            await self.server.stop()


async def run_agent_scheduler(
    options: AgentOptions, stop: asyncio.Event, *, started: Callable[[], Awaitable[None]] | None = None
) -> None:
    """Run an agent scheduler in this event loop until ``stop`` is set (tests, ``volcano-py up``, the CLI)."""
    client = KubeClient(await load_api_client(options.kubeconfig))
    try:
        await AgentScheduler(options, client).run(stop, started=started)
    finally:
        await client.close()
