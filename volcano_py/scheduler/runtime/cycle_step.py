"""One cycle of the batch scheduler, from the cache's snapshot to the binder and the report.

Phases (all synchronous: the session never waits on the API):

1. snapshot the cache (informer stores plus assumed binds and evictions in flight), take the turns at the
   capped Queues the agent scheduler shares (``queue_room.py``), and when the conf names an HTTP extender,
   ask it what the session will read (``extender.py``);
2. build the core's Snapshot and run the session with the current conf (in a worker thread, so the event
   loop keeps serving watches and binds meanwhile; the session itself never waits on anything);
3. hand the result to the binder, which records its promises in the cache before returning, and give the
   turns back once the watch shows the binds;
4. report: the shard's nodes in use, the Queues' recent usage, events for pods and PodGroups that cannot be
   scheduled and metrics (``cycle_report.py``), and tell the extender the session is over.

When a cycle runs, and everything around the cycles, is the process's (``runner.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import structlog

from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import EventRecorder
from volcano_py.log import get_logger
from volcano_py.scheduler.core import ClusterObjects
from volcano_py.scheduler.framework.decisions import Bind
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.cycle import ConfSource, Core, CycleOutcome
from volcano_py.scheduler.runtime.cycle_report import CycleReport
from volcano_py.scheduler.runtime.extender import ExtenderClient
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.process import end_turns
from volcano_py.scheduler.runtime.queue_room import QueueTurns, capped_pending, without_room
from volcano_py.scheduler.runtime.shard_status import ShardStatusWriter
from volcano_py.scheduler.runtime.usage_ledger import UsageLedger, half_life_of
from volcano_py.scheduler.solver.gpu_report import hypernode_gpus

_log = get_logger(__name__)

# The per-HyperNode GPU gauges re-read every pod; a dashboard needs them no fresher than this.
GPU_REPORT_SECONDS = 10.0


class CycleStep:
    """The batch scheduler's cycle (``run``), and what one cycle leaves the next: its count, the core's CPU
    time, whether a turn at a Queue was refused."""

    def __init__(
        self,
        *,
        client: KubeClient,
        core: Core,
        conf: ConfSource,
        cache: SchedulerCache,
        binder: Binder,
        recorder: EventRecorder,
        metrics: SchedulerMetrics,
        turns: QueueTurns | None,
        shard_status: ShardStatusWriter | None,
    ) -> None:
        self.client = client
        self.core = core
        self.conf = conf
        self.cache = cache
        self.binder = binder
        self.metrics = metrics
        self.turns = turns
        self.shard_status = shard_status
        self.extender = ExtenderClient()
        self.report = CycleReport(metrics, recorder)
        self.recent_usage = UsageLedger()
        self.count = 0
        self.cpu_seconds = 0.0  # the core's CPU seconds in the last cycle, which spaces early starts
        # Refused a turn: the next cycle runs even if nothing changes (the other scheduler gives it back).
        self.turn_refused = False
        self._gpu_report_at = float("-inf")

    async def run(self) -> CycleOutcome:
        self.count += 1
        started = time.perf_counter()
        with structlog.contextvars.bound_contextvars(cycle=self.count):
            state = self.cache.snapshot()
            capped, held = await self._take_turns(state)
            refused = capped.keys() - held
            self.turn_refused = bool(refused)
            if refused:
                state = without_room(state, refused, self.cache.queue_capability)
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

            outcome, self.cpu_seconds = await asyncio.to_thread(
                _cpu_timed, self.core.run, state, conf, now, answers, hand_over
            )
            self.binder.submit(outcome.result)
            if self.turns is not None:
                end_turns(self.turns, self.binder, held, capped, outcome.result.binds)
            # The shard's nodes this cycle could use, now that it has placed only there (Volcano writes it
            # after the session too): what lets the sharding controller hand a node to another shard.
            if self.shard_status is not None and self.binder.may_write("NodeShard status"):
                await self.shard_status.publish(state.nodeshards)
            due = self.recent_usage.observe(
                outcome.result.queue_updates, state.queues, time.time(), half_life_of(self.conf.conf)
            )
            if due and self.binder.may_write("queue usage"):
                await self.recent_usage.write(self.client, due, time.time())
            self.report.record(outcome)
            if consulted is not None:
                await self.extender.closed(consulted)
            await self._report_gpus(state)
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
                core_cpu_ms=round(self.cpu_seconds * 1000, 1),
                binds_unanswered=self.binder.binds_unanswered,
            )
        return outcome

    async def close(self) -> None:
        await self.extender.close()

    async def _take_turns(self, state: ClusterObjects) -> tuple[dict[str, list[str]], set[str]]:
        """The capped Queues this cycle has pending pods of ours in (with those pods), when the agent
        scheduler has pods in the cluster, and which of them this scheduler holds the turn at."""
        charges = self.cache.charges
        if self.turns is None or charges is None or not charges.partner_present:
            return {}, set()
        capped = capped_pending(state, self.cache)
        return capped, (await self.turns.begin(capped) if capped else set())

    async def _report_gpus(self, state: ClusterObjects) -> None:
        if time.monotonic() - self._gpu_report_at < GPU_REPORT_SECONDS:
            return
        self._gpu_report_at = time.monotonic()
        gpus = await asyncio.to_thread(hypernode_gpus, state.nodes, state.pods, state.hypernodes)
        self.metrics.set_hypernode_gpus(
            {name: (g.capacity, g.allocated, g.stranded) for name, g in gpus.items()}
        )


def _cpu_timed(fn: Callable[..., CycleOutcome], *args: Any) -> tuple[CycleOutcome, float]:
    began = time.thread_time()
    outcome = fn(*args)
    return outcome, time.thread_time() - began
