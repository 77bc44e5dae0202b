"""The batch scheduler process: mirror the cluster, and every period run one cycle and hand its decisions on.

One cycle (snapshot, session, binds, report) is ``cycle_step.py``; this module decides when one runs and
keeps the process around them: the cycles' pace (a period, a burst of arrivals, binds backlogged, nothing new
to look at), leader election (standbys keep their caches warm, so a takeover starts scheduling from a synced
mirror), the start-up (a resumed mirror or a fresh list read ahead, the default Queues), conf reload when
the file changes, and the metrics/health server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from volcano_py.api.shard import ShardingMode
from volcano_py.kube.client import NETWORK_ERRORS, ApiError, KubeClient
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.health import MetricsServer
from volcano_py.kube.leader import run_unless_stopped
from volcano_py.kube.mirror_file import MirrorFile
from volcano_py.log import get_logger
from volcano_py.scheduler.framework.pacing import BACKLOG_POLL_SECONDS, Pacing, backlogged
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.cycle import ConfSource, Core, CycleOutcome, default_core, metrics_source
from volcano_py.scheduler.runtime.cycle_step import CycleStep
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.node_metrics import NodeMetricsCollector
from volcano_py.scheduler.runtime.options import SchedulerOptions
from volcano_py.scheduler.runtime.process import (
    connected,
    default_identity,
    fenced_elector,
    lead,
    queue_turns,
    serving,
    sleep_or_stop,
    sleep_until_either,
)
from volcano_py.scheduler.runtime.shard_status import ShardStatusWriter
from volcano_py.scheduler.runtime.usage_ledger import UsageLedger

# The CLI and the tests import the options and the identity from here, beside the process.
__all__ = [
    "FIRST_ANSWER_SECONDS",
    "IDLE_RERUN_SECONDS",
    "Scheduler",
    "SchedulerOptions",
    "default_identity",
    "run_scheduler",
    "sleep_until_either",
]

_log = get_logger(__name__)

# Longest a scheduler with nothing new to look at waits before running a cycle anyway.
IDLE_RERUN_SECONDS = 10.0

# How long a resumed scheduler waits for the pods watch to say whether its mirror still holds before reading
# it: a busy cluster's watch answers at once; a quiet one's says nothing, and then the mirror is read anyway.
FIRST_ANSWER_SECONDS = 0.5


class Scheduler:
    """One scheduler process; ``run()`` until ``stop`` is set."""

    def __init__(self, options: SchedulerOptions, client: KubeClient, core: Core) -> None:
        self.options = options
        self.client = client
        self.core = core
        self.conf = ConfSource(options.scheduler_conf, core)
        self.metrics = SchedulerMetrics()
        sharded = options.sharding.mode is not ShardingMode.NONE
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
            sharding=sharded,
            partners=[name for name in options.partner_names if name not in options.scheduler_names],
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
        self.elector = fenced_elector(
            client,
            self.binder,
            elect=options.leader_elect,
            namespace=options.lease_namespace,
            name=options.lease_name,
            identity=options.identity,
            timing=options.lease_timing,
        )
        self.step = CycleStep(
            client=client,
            core=core,
            conf=self.conf,
            cache=self.cache,
            binder=self.binder,
            recorder=self.recorder,
            metrics=self.metrics,
            # Turns at capped Queues with the agent scheduler, when it has pods here.
            turns=(
                queue_turns(
                    client,
                    self.cache,
                    namespace=options.lease_namespace,
                    identity=f"{options.scheduler_names[0]}/{options.identity}",
                )
                if self.cache.charges is not None
                else None
            ),
            shard_status=ShardStatusWriter(client, options.sharding) if sharded else None,
        )
        self.server = MetricsServer(
            self.metrics,
            host=options.metrics_host,
            port=options.metrics_port,
            ready=self.ready,
            component="scheduler",
        )
        self.pacing = Pacing(options.schedule_period, options.burst_quiet)
        # Set once the core has read the cluster as first synced (see ``_read_ahead``).
        self._read = False
        # During each cycle, and from the start for a scheduler that elects no leader: its first cycle follows
        # the sync at once (an electing one's follows its election, maybe never).
        self._deciding = self.elector is None
        # Whether the last cycle left anything waiting (a conf acting on running pods always does): a cycle
        # that did not holds the next one back while its binds go out (see ``pacing``).
        self._left_waiting = True

    def ready(self) -> bool:
        return self.cache.synced and self._read and self.is_leader

    @property
    def is_leader(self) -> bool:
        return self.elector is None or self.elector.is_leader

    @property
    def cycles(self) -> int:
        return self.step.count

    @property
    def recent_usage(self) -> UsageLedger:
        return self.step.recent_usage

    async def run_cycle(self) -> CycleOutcome:
        self._deciding = True
        try:
            return await self.step.run()
        finally:
            self._deciding = False

    # --- when a cycle runs ---------------------------------------------------------------------------------

    async def _schedule_until(self, stop: asyncio.Event) -> None:
        last_generation = -1
        last_run = 0.0
        while not stop.is_set():
            started = time.monotonic()
            try:
                # The core is deterministic: with nothing changed since a cycle that decided nothing, the next
                # one would decide nothing again. Skip it, but not for long (time-based policies exist).
                quiet = (
                    not self.step.turn_refused
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
                self.step.cpu_seconds,
                cache.last_arrival,
                last_whole=cache.last_whole,
                backlogged=held,
                settled=settled,
            )
            if now >= wake:
                return
            if held and self.pacing.burst_quiet > 0:
                # The next start is due once the binds ahead of it have drained: look again shortly.
                await sleep_or_stop(stop, min(wake - now, BACKLOG_POLL_SECONDS))
            else:
                # A newer arrival may move the start: later (a burst goes on) or sooner (a gang is whole).
                cache.arrival.clear()
                await sleep_until_either(stop, cache.arrival, wake - now)

    # --- start-up ------------------------------------------------------------------------------------------

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
            except (ApiError, *NETWORK_ERRORS) as exc:
                _log.warning("creating the default queues failed; retrying", error=str(exc), retry_in=delay)
                await sleep_or_stop(stop, delay)
                delay = min(delay * 2, 10.0)

    # --- the process ---------------------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event, *, started: Callable[[], Awaitable[None]] | None = None) -> None:
        try:
            async with serving(
                self.server,
                self.cache.run,
                self.recorder.run,
                self.binder.run,
                self.conf.watch,
                self.node_metrics.run,
            ) as group:
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
                    await lead(self.elector, self.binder, stop, self._schedule_until)
                await self.binder.wait_idle()
                await self.cache.save_mirror()  # the next start resumes from here
        finally:
            await self.step.close()


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
    async with connected(options.kubeconfig) as client:
        await Scheduler(options, client, core).run(stop, started=started)
