"""The scheduler process: mirror the cluster, and every period run one session and hand its decisions on.

Phases of one cycle (all synchronous: the session never waits on the API):

1. snapshot the cache (informer stores plus assumed binds and evictions in flight), and when the conf
   names an HTTP extender, ask it what the session will read (``runtime/extender.py``);
2. build the core's Snapshot and run the session with the current conf (in a worker thread, so the event
   loop keeps serving watches and binds meanwhile; the session itself never waits on anything);
3. hand the result to the binder, which records its promises in the cache before returning;
4. report: events for pods and PodGroups that cannot be scheduled, and metrics (and tell the extender the
   session is over).

Around the cycles: leader election (standbys keep their caches warm, so a takeover starts scheduling from a
synced mirror), conf reload when the file changes, and the metrics/health server.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import structlog

from volcano_py.api import constants as c
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.api.shard import ShardingMode
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.events import WARNING, EventRecorder
from volcano_py.kube.health import MetricsServer
from volcano_py.kube.kinds import object_identity
from volcano_py.kube.leader import LeaderElector, LeaseTiming, run_unless_stopped, run_while_leading
from volcano_py.kube.mirror_file import MirrorFile
from volcano_py.log import get_logger
from volcano_py.scheduler.core import NO_SHARDING, ClusterObjects, Sharding
from volcano_py.scheduler.framework.decisions import Bind
from volcano_py.scheduler.framework.pacing import (
    BACKLOG_POLL_SECONDS,
    BURST_QUIET_SECONDS,
    Pacing,
    backlogged,
)
from volcano_py.scheduler.framework.retell import RETELL_SECONDS, words
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.cycle import ConfSource, Core, CycleOutcome, default_core, metrics_source
from volcano_py.scheduler.runtime.extender import ExtenderClient
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.node_metrics import NodeMetricsCollector
from volcano_py.scheduler.runtime.queue_room import QueueRoom, QueueTurns, capped_pending, without_room
from volcano_py.scheduler.runtime.scheduled import SCHEDULED_EVENT_BURST, SCHEDULED_EVENT_QPS, EventBudget
from volcano_py.scheduler.runtime.shard_status import ShardStatusWriter
from volcano_py.scheduler.runtime.usage_ledger import UsageLedger, half_life_of
from volcano_py.scheduler.solver.gpu_report import hypernode_gpus

_log = get_logger(__name__)

# Longest a scheduler with nothing new to look at waits before running a cycle anyway.
IDLE_RERUN_SECONDS = 10.0

# How long a resumed scheduler waits for the pods watch to say whether its mirror still holds before reading
# it: a busy cluster's watch answers at once; a quiet one's says nothing, and then the mirror is read anyway.
FIRST_ANSWER_SECONDS = 0.5

# The per-HyperNode GPU gauges re-read every pod; a dashboard needs them no fresher than this.
GPU_REPORT_SECONDS = 10.0


def default_identity() -> str:
    return f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    """Everything ``volcano-py scheduler`` takes on its command line, for running it in-process too."""

    kubeconfig: str | None = None
    scheduler_conf: str | None = None
    scheduler_names: tuple[str, ...] = (c.SCHEDULER_NAME,)
    schedule_period: float = 1.0
    metrics_host: str = "0.0.0.0"
    metrics_port: int = 8080
    leader_elect: bool = True
    lease_namespace: str = "volcano-system"
    lease_name: str = "vc-scheduler"
    identity: str = field(default_factory=default_identity)
    lease_timing: LeaseTiming = field(default_factory=LeaseTiming)
    bind_concurrency: int = 64
    burst_quiet: float = BURST_QUIET_SECONDS
    scheduled_event_qps: float = SCHEDULED_EVENT_QPS
    scheduled_event_burst: int = SCHEDULED_EVENT_BURST
    # Volcano's --feature-gates (SchedulingGatesQueueAdmission: ungate pods their queue admits).
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES
    # Where the cluster's mirror is saved for the next start to resume from (None: every start lists).
    mirror_dir: str | None = None
    # --scheduler-sharding-mode and --scheduler-sharding-name (``runtime/shard_status.py``).
    sharding: Sharding = NO_SHARDING
    # The schedulers whose pods this one counts in their Queues (``runtime/queue_charges.py``): the agent
    # scheduler's, so the two keep a Queue's capability between them.
    partner_names: tuple[str, ...] = (c.AGENT_SCHEDULER_NAME,)

    def __post_init__(self) -> None:
        Pacing(self.schedule_period, self.burst_quiet)  # checks both
        EventBudget(self.scheduled_event_qps, self.scheduled_event_burst, time.monotonic)  # checks both
        if not self.scheduler_names or not all(self.scheduler_names):
            raise ValueError("--scheduler-name must be a non-empty name such as 'volcano'")
        if not 0 <= self.metrics_port <= 65535:
            raise ValueError(
                f"--metrics-port must be within 0..65535 (0 picks a free port), got {self.metrics_port}"
            )
        if self.bind_concurrency < 1:
            raise ValueError(f"--bind-concurrency must be at least 1, got {self.bind_concurrency}")


class _Once:
    """Remembers what was already said about an object, so a waiting pod gets one Event per reason.

    A message that differs from the one told only in its numbers is told again at most once per
    ``retell_seconds``, and a warning with ``after`` waits that long before it is told first (see
    ``retell``); a message with other words is told at once.
    """

    def __init__(self, retell_seconds: float = RETELL_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.retell_seconds = retell_seconds
        self.clock = clock
        self._said: dict[tuple[str, str], tuple[str, str, float]] = {}
        self._since: dict[tuple[str, str], float] = {}  # first warned, for those not told yet

    def first(self, obj: Mapping[str, Any], reason: str, message: str, after: float = 0.0) -> bool:
        key = (object_identity(obj), reason)
        told = self._said.get(key)
        if told is not None and told[0] == message:
            return False
        shape, now = words(message), self.clock()
        if told is not None and told[1] == shape and now - told[2] < self.retell_seconds:
            return False
        if told is None and after > 0 and now - self._since.setdefault(key, now) < after:
            return False
        self._said[key] = (message, shape, now)
        self._since.pop(key, None)
        return True

    def keep_only(self, keys: set[tuple[str, str]]) -> None:
        self._said = {k: v for k, v in self._said.items() if k in keys}
        self._since = {k: v for k, v in self._since.items() if k in keys}


class Scheduler:
    """One scheduler process; ``run()`` until ``stop`` is set."""

    def __init__(self, options: SchedulerOptions, client: KubeClient, core: Core) -> None:
        self.options = options
        self.client = client
        self.core = core
        self.conf = ConfSource(options.scheduler_conf, core)
        self.extender = ExtenderClient()
        self.metrics = SchedulerMetrics()
        self.cache = SchedulerCache(
            client,
            scheduler_names=options.scheduler_names,
            mirror=(
                MirrorFile.for_process(
                    options.mirror_dir, "scheduler", client.server, *options.scheduler_names
                )
                if options.mirror_dir
                else None
            ),
            sharding=options.sharding.mode is not ShardingMode.NONE,
            partners=[name for name in options.partner_names if name not in options.scheduler_names],
        )
        self.shard_status = (
            ShardStatusWriter(client, options.sharding)
            if options.sharding.mode is not ShardingMode.NONE
            else None
        )
        self.recorder = EventRecorder(client, component="volcano")
        # Node load for the usage plugin, from the metrics source of the conf in force (none: nothing asked).
        self.node_metrics = NodeMetricsCollector(
            lambda: metrics_source(self.conf.conf), self.cache.node_names, self.cache.set_node_usage
        )
        self.binder = Binder(
            client,
            self.cache,
            self.recorder,
            self.metrics,
            bind_concurrency=options.bind_concurrency,
            scheduled_event_qps=options.scheduled_event_qps,
            scheduled_event_burst=options.scheduled_event_burst,
        )
        # The mirror is saved between decisions and while the binds keep up: at 50,000 pods encoding it takes
        # a second of CPU, which the first cycle after a start (and a backlog's binds) would wait for.
        self.cache.save_waits = lambda: self.binder.queue_full or self._deciding
        self.elector = (
            LeaderElector(
                client,
                namespace=options.lease_namespace,
                name=options.lease_name,
                identity=options.identity,
                timing=options.lease_timing,
            )
            if options.leader_elect
            else None
        )
        if self.elector is not None:
            self.binder.may_write = self.elector.may_write
        # Turns at capped Queues with the agent scheduler (``queue_room.py``), when it has pods here.
        self.turns = (
            QueueTurns(
                QueueRoom(
                    client,
                    namespace=options.lease_namespace,
                    identity=f"{options.scheduler_names[0]}/{options.identity}",
                    watch_version=self.cache.watch_version,
                ),
                lambda key: self.cache.assumed_node(key) is None,
            )
            if self.cache.charges is not None
            else None
        )
        self.server = MetricsServer(
            self.metrics,
            host=options.metrics_host,
            port=options.metrics_port,
            ready=self.ready,
            component="scheduler",
        )
        self.cycles = 0
        self.pacing = Pacing(options.schedule_period, options.burst_quiet)
        self._cycle_cpu = 0.0  # the core's CPU seconds in the last cycle, which spaces early starts
        self._said = _Once()
        self._unschedulable_jobs: set[str] = set()
        self._gpu_report_at = float("-inf")
        self.recent_usage = UsageLedger()
        # Set once the core has read the cluster as first synced (see ``_read_ahead``).
        self._read = False
        # During each cycle, and from the start for a scheduler that elects no leader: its first cycle follows
        # the sync at once (an electing one's follows its election, maybe never).
        self._deciding = self.elector is None
        # Whether the last cycle left anything waiting (a conf acting on running pods always does): a cycle
        # that did not holds the next one back while its binds go out (see ``pacing``).
        self._left_waiting = True
        self._turn_refused = False

    def ready(self) -> bool:
        return self.cache.synced and self._read and (self.elector is None or self.elector.is_leader)

    @property
    def is_leader(self) -> bool:
        return self.elector is None or self.elector.is_leader

    # --- one cycle -----------------------------------------------------------------------------------------

    async def run_cycle(self) -> CycleOutcome:
        self._deciding = True
        try:
            return await self._run_cycle()
        finally:
            self._deciding = False

    async def _run_cycle(self) -> CycleOutcome:
        self.cycles += 1
        started = time.perf_counter()
        with structlog.contextvars.bound_contextvars(cycle=self.cycles):
            state = self.cache.snapshot()
            capped, held = await self._take_turns(state)
            # Refused a turn: the next cycle runs even if nothing changes (the other scheduler gives it back).
            self._turn_refused = bool(capped.keys() - held)
            if capped.keys() - held:
                state = without_room(state, capped.keys() - held, self.cache.queue_capability)
            conf, now = self.conf.conf, datetime.now(UTC)
            # The session makes no calls: an HTTP extender is asked its questions first, here.
            consulted = None
            if self.core.extender(conf) is not None:
                consulted = await asyncio.to_thread(self.core.consult, state, conf, now)
            answers = await self.extender.ask(consulted) if consulted is not None else None
            # The session is synchronous and never touches the API; it runs in a worker thread only so that
            # a long one (thousands of jobs) does not freeze the watches, binds and events of the event loop.
            # The cache is not read by it: the snapshot's lists are its own, and the informers replace
            # objects rather than mutate them.
            # Its committed binds come back through the loop as it goes, so a session placing a backlog
            # binds from its first gangs on rather than after its last.
            loop = asyncio.get_running_loop()

            def hand_over(binds: Sequence[Bind]) -> None:
                loop.call_soon_threadsafe(self.binder.submit_binds, binds)

            outcome, cpu_seconds = await asyncio.to_thread(
                _cpu_timed, self.core.run, state, conf, now, answers, hand_over
            )
            self._cycle_cpu = cpu_seconds
            self.binder.submit(outcome.result)
            if held and self.turns is not None:
                bound = {f"{b.namespace}/{b.name}" for b in outcome.result.binds}
                mine = [key for queue in held for key in capped[queue] if key in bound]
                self.binder.spawn(self.turns.end(held, mine))
            # The shard's nodes this cycle could use, now that it has placed only there (Volcano writes it
            # after the session too): what lets the sharding controller hand a node to another shard.
            if self.shard_status is not None and self.binder.may_write("NodeShard status"):
                await self.shard_status.publish(state.nodeshards)
            due = self.recent_usage.observe(
                outcome.result.queue_updates, state.queues, time.time(), half_life_of(self.conf.conf)
            )
            if due and self.binder.may_write("queue usage"):
                await self.recent_usage.write(self.client, due, time.time())
            self._report(outcome)
            if consulted is not None:
                await self.extender.closed(consulted)
            if time.monotonic() - self._gpu_report_at >= GPU_REPORT_SECONDS:
                self._gpu_report_at = time.monotonic()
                gpus = await asyncio.to_thread(hypernode_gpus, state.nodes, state.pods, state.hypernodes)
                self.metrics.set_hypernode_gpus(
                    {name: (g.capacity, g.allocated, g.stranded) for name, g in gpus.items()}
                )
            elapsed_ms = (time.perf_counter() - started) * 1000
            self.metrics.e2e_scheduling_latency.observe(elapsed_ms)
            # A cycle that decided something is news; the others are told at debug, for profiling by log.
            decided = bool(outcome.result.binds or outcome.result.evictions)
            (_log.info if decided else _log.debug)(
                "cycle",
                binds=len(outcome.result.binds),
                evictions=len(outcome.result.evictions),
                unschedulable_jobs=len(outcome.unscheduled_tasks),
                # Recalled by the core's memo (no session ran): see ``quiet``.
                recalled=outcome.quiet,
                ms=round(elapsed_ms, 1),
                # The core's own CPU: on a loaded machine the wall time above is mostly waiting.
                core_cpu_ms=round(cpu_seconds * 1000, 1),
                binds_unanswered=self.binder.binds_unanswered,
            )
        return outcome

    async def _take_turns(self, state: ClusterObjects) -> tuple[dict[str, list[str]], set[str]]:
        """The capped Queues this cycle has pending pods of ours in (with those pods), when the agent
        scheduler has pods in the cluster, and which of them this scheduler holds the turn at."""
        charges = self.cache.charges
        if self.turns is None or charges is None or not charges.partner_present:
            return {}, set()
        capped = capped_pending(state, self.cache)
        return capped, (await self.turns.begin(capped) if capped else set())

    def _report(self, outcome: CycleOutcome) -> None:
        for name, seconds in outcome.result.timings.items():
            # The core times plugin set-up and tear-down as a whole ("open"/"close") and each action by name.
            if name in ("open", "close"):
                point = "OnSessionOpen" if name == "open" else "OnSessionClose"
                self.metrics.plugin_scheduling_latency.labels("all", point).observe(seconds * 1000)
            elif name.startswith("plugin:"):
                _, plugin, point = [*name.split(":", 2), "OnSessionOpen"][:3]
                self.metrics.plugin_scheduling_latency.labels(plugin, point).observe(seconds * 1000)
            else:
                self.metrics.action_scheduling_latency.labels(name).observe(seconds * 1000)
        if not outcome.quiet:
            # A recalled outcome has nothing new to tell, and must not reset what waits to be told.
            said: set[tuple[str, str]] = set()
            for warning in outcome.warnings:
                said.add((object_identity(warning.obj), warning.reason))
                if self._said.first(warning.obj, warning.reason, warning.message, warning.after):
                    self.recorder.record(dict(warning.obj), WARNING, warning.reason, warning.message)
            self._said.keep_only(said)  # a pod that recovers and fails again is told again
        jobs = set(outcome.unscheduled_tasks)
        for job in self._unschedulable_jobs - jobs:
            self.metrics.unschedule_task_count.remove(job)
        for job, count in outcome.unscheduled_tasks.items():
            self.metrics.unschedule_task_count.labels(job).set(count)
        self._unschedulable_jobs = jobs
        self.metrics.unschedule_job_count.set(len(jobs))
        if outcome.result.binds:
            self.metrics.schedule_attempts.labels("scheduled").inc(len(outcome.result.binds))
        # Volcano counts one preemption attempt per preemptor and reports the victims of the last session.
        preemptions = [e for e in outcome.result.evictions if e.preemptor]
        self.metrics.preemption_victims.set(len(preemptions))
        preemptors = {e.preemptor for e in preemptions}
        if preemptors:
            self.metrics.preemption_attempts.inc(len(preemptors))
        unscheduled = sum(outcome.unscheduled_tasks.values())
        if unscheduled and not outcome.quiet:  # no attempt was made
            self.metrics.schedule_attempts.labels("unschedulable").inc(unscheduled)

    # --- the process --------------------------------------------------------------------------------------

    async def _schedule_until(self, stop: asyncio.Event) -> None:
        last_generation = -1
        last_run = 0.0
        while not stop.is_set():
            started = time.monotonic()
            try:
                # The core is deterministic: with nothing changed since a cycle that decided nothing, the next
                # one would decide nothing again. Skip it, but not for long (time-based policies exist).
                quiet = (
                    not self._turn_refused
                    and self.cache.generation == last_generation
                    and started - last_run < IDLE_RERUN_SECONDS
                    and not self.core.needs_every_period(self.conf.conf)
                )
                if not quiet:
                    last_generation = self.cache.generation
                    last_run = started
                    outcome = await self.run_cycle()
                    if outcome.result.binds or outcome.result.evictions:
                        last_generation = -1
                    self._left_waiting = outcome.waiting or self.core.needs_every_period(self.conf.conf)
            except Exception:
                # A bug or one malformed object must not end the process: log it and try next period.
                self._left_waiting = True
                _log.exception("scheduling cycle failed", cycle=self.cycles)
            await self._wait_next_cycle(stop, started)

    async def _wait_next_cycle(self, stop: asyncio.Event, began: float) -> None:
        """Until the period is up, or earlier once a burst of new pods is over (see ``pacing``)."""
        cache = self.cache
        while not stop.is_set():
            now = time.monotonic()
            held = backlogged(self.binder.binds_unanswered, self.options.bind_concurrency)
            settled = not self._left_waiting and cache.last_news <= began
            wake = self.pacing.next_start(
                began,
                self._cycle_cpu,
                cache.last_arrival,
                last_whole=cache.last_whole,
                backlogged=held,
                settled=settled,
            )
            if now >= wake:
                return
            if held and self.pacing.burst_quiet > 0:
                # The next start is due once the binds ahead of it have drained: look again shortly.
                await _sleep_or_stop(stop, min(wake - now, BACKLOG_POLL_SECONDS))
            else:
                # A newer arrival may move the start: later (a burst goes on) or sooner (a gang is whole).
                cache.arrival.clear()
                await sleep_until_either(stop, cache.arrival, wake - now)

    async def _lead(self, stop: asyncio.Event) -> None:
        if self.elector is None:
            await self._schedule_until(stop)
            return
        await run_while_leading(
            self.elector, stop, self._schedule_until, before_release=self.binder.wait_idle
        )

    async def _warm(self) -> None:
        """A resumed mirror is read by the core while the watches catch it up, which mostly waits on the API
        server: the first cycle then reads only what the watches brought."""
        await self.cache.loaded.wait()
        if not self.cache.resumed or self.cache.synced:
            return
        # A mirror saved longer ago than the API server keeps watch history is void (410) and relisted:
        # reading it would be wasted, and would slow that list down. The pods watch says so at once.
        await self.cache.first_answer("pods", FIRST_ANSWER_SECONDS)
        if self.cache.mirror_expired():
            return
        await self._read_ahead("the resumed mirror")
        if self.cache.mirror_expired():
            self._read = False  # what was read is being replaced: read the listed cluster once synced

    async def _read_ahead(self, what: str) -> None:
        """Have the core read the cluster before the first cycle. A fresh list is read once synced, before
        the process says it is ready: at 50,000 pods the first read takes seconds, and pods that arrive
        meanwhile would otherwise wait for it in the first cycle."""
        began = time.perf_counter()
        try:
            await asyncio.to_thread(self.core.warm, self.cache.snapshot())
        except Exception:
            # Only a head start: the first cycle reads the cluster anyway, and says what it cannot.
            _log.exception("reading the cluster ahead failed", what=what)
            return
        finally:
            self._read = True
        _log.info("read the cluster ahead", what=what, seconds=round(time.perf_counter() - began, 2))

    async def _ensure_default_queues(self, stop: asyncio.Event) -> None:
        """Create ``root``/``default``, retrying: an admission webhook that is restarting must not kill us."""
        delay = 0.5
        while not stop.is_set():
            try:
                await self.cache.ensure_default_queues()
                return
            except (ApiError, aiohttp.ClientError, TimeoutError) as exc:
                _log.warning("creating the default queues failed; retrying", error=str(exc), retry_in=delay)
                await _sleep_or_stop(stop, delay)
                delay = min(delay * 2, 10.0)

    async def run(self, stop: asyncio.Event, *, started: Callable[[], Awaitable[None]] | None = None) -> None:
        await self.server.start()
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(self.cache.run()),
                    group.create_task(self.recorder.run()),
                    group.create_task(self.binder.run()),
                    group.create_task(self.conf.watch()),
                    group.create_task(self.node_metrics.run()),
                ]
                warming = group.create_task(self._warm())
                await run_unless_stopped(self.cache.wait_synced(), stop)
                await warming  # the core is not run twice at once
                if not stop.is_set() and not self._read:
                    await self._read_ahead("the listed cluster")
                if not stop.is_set():
                    await self._ensure_default_queues(stop)
                    _log.info(
                        "scheduler started",
                        names=list(self.options.scheduler_names),
                        identity=self.options.identity,
                        leader_elect=self.elector is not None,
                    )
                    if started is not None:
                        await started()
                    await self._lead(stop)
                await self.binder.wait_idle()
                await self.cache.save_mirror()  # the next start resumes from here
                for task in tasks:
                    task.cancel()
        finally:
            await self.extender.close()
            await self.server.stop()


def _cpu_timed(fn: Callable[..., CycleOutcome], *args: Any) -> tuple[CycleOutcome, float]:
    began = time.thread_time()
    outcome = fn(*args)
    return outcome, time.thread_time() - began


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        return


async def sleep_until_either(stop: asyncio.Event, other: asyncio.Event, seconds: float) -> None:
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(other.wait())]
    try:
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


async def run_scheduler(
    options: SchedulerOptions,
    stop: asyncio.Event,
    *,
    core: Core | None = None,
    started: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Run a scheduler in this event loop until ``stop`` is set (tests, ``volcano-py up``, the CLI).

    Without ``core``, the default core has no forecast to give a blocked fifo head's shadow, so fifo queues
    are held strictly: the processes pass ``cli.scheduler.scheduler_core``, which has it."""
    if core is None:
        core = default_core(options.scheduler_names, options.feature_gates, sharding=options.sharding)
    client = KubeClient(await load_api_client(options.kubeconfig))
    try:
        await Scheduler(options, client, core).run(stop, started=started)
    finally:
        await client.close()
