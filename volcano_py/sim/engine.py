"""The event loop: admit arrivals, finish pods, run one session per period, apply its decisions.

Sessions run only at period boundaries where something can change (an arrival, a finished pod, or the
previous session having changed state); idle stretches are skipped, so a 150-day trace costs one session per
busy period, not one per simulated second.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from volcano_py.api import constants as k
from volcano_py.resources import CPU, GPU, MEMORY
from volcano_py.scheduler.core import (
    Records,
    SchedulerConf,
    StrandedGpus,
    build_snapshot,
    gangs_left_partly_evicted,
    run_session,
    stranded_cards,
)

from .cluster import DIMS, NAMESPACE, SimCluster, timestamp
from .workload import SHARED_CARD_MIB, Workload, device_amount

Progress = Callable[[str], None]


def stderr_progress(line: str) -> None:
    sys.stderr.write(f"\r{line}")
    sys.stderr.flush()


@dataclass(slots=True)
class Sample:
    at: float
    allocated_gpus: int  # milli-GPUs
    stranded_gpus: int  # milli-GPUs
    pending_jobs: int
    # Free milli-GPUs of partly used cards (with shared GPUs, per card; else the remainder of each node's
    # fractional use), whether or not something waits for them.
    partial_free_gpus: int = 0


@dataclass(slots=True)
class SimResult:
    workload: str
    total_gpus: int  # milli-GPUs
    samples: list[Sample] = field(default_factory=list)
    queueing_delay: list[float] = field(default_factory=list)
    # The same for jobs of more than one pod (gangs), and per pod moved by an eviction, the seconds until its
    # replacement was bound again.
    gang_delay: list[float] = field(default_factory=list)
    moved_wait: list[float] = field(default_factory=list)
    completion_time: list[float] = field(default_factory=list)
    gangs_placed: int = 0
    gangs_in_one_rack: int = 0
    has_racks: bool = False
    evictions: int = 0
    # GPUs x seconds the evicted pods had run: the work a job that does not checkpoint loses.
    evicted_gpu_seconds: float = 0.0
    sessions: int = 0
    session_seconds: float = 0.0
    unfinished_jobs: int = 0
    end_time: float = 0.0


class Simulator:
    def __init__(
        self,
        workload: Workload,
        conf: SchedulerConf,
        *,
        period: float = 1.0,
        horizon: float | None = None,
        progress: Progress | None = None,
    ) -> None:
        if period <= 0:
            raise ValueError(f"period must be > 0 seconds, got {period}")
        self.workload = workload
        self.conf = conf
        self.period = period
        self.horizon = horizon
        self.progress = progress
        self.cluster = SimCluster(workload)
        # When periodic plugins last acted (rescheduling's interval, tdm's evict period), session to session.
        self.timers: dict[str, float] = {}
        # What the last session's snapshot read, brought up to date by what changed since (the cluster
        # replaces an object's dict when it changes, as the API's watch does).
        self.records = Records()
        # uid of a pod made again after an eviction -> when its predecessor was evicted.
        self._moved_at: dict[str, float] = {}

    def _align(self, t: float) -> float:
        return math.ceil(t / self.period - 1e-9) * self.period

    def run(self) -> SimResult:
        cluster, jobs = self.cluster, self.workload.jobs
        result = SimResult(
            workload=self.workload.name,
            total_gpus=(
                int((cluster.card_used >= 0).sum()) * 1000
                if cluster.shared
                else int(cluster.allocatable[:, DIMS.index(GPU)].sum())
            ),
            has_racks=bool(self.workload.hypernodes),
        )
        next_job, now, changed = 0, self._align(jobs[0].arrival) if jobs else 0.0, True
        started = time.perf_counter()
        while True:
            while next_job < len(jobs) and jobs[next_job].arrival <= now:
                cluster.admit(jobs[next_job], jobs[next_job].arrival)
                next_job += 1
            for state in cluster.finish_due(now):
                result.completion_time.append(now - state.job.arrival)
            changed = self._session(now, result) or changed
            result.samples.append(self._sample(now))
            if self.progress and result.sessions % 50 == 0:
                self.progress(
                    f"sim t={now:,.0f}s sessions={result.sessions} arrived={next_job}/{len(jobs)} "
                    f"done={len(result.completion_time)} running-jobs={len(cluster.jobs)}"
                )
            upcoming = [
                t
                for t in (
                    jobs[next_job].arrival if next_job < len(jobs) else None,
                    cluster.next_finish(),
                    now + self.period if changed else None,
                )
                if t is not None
            ]
            if not upcoming or (self.horizon is not None and now >= self.horizon):
                break
            now = max(self._align(min(upcoming)), now + self.period)
            changed = False
        result.end_time = now
        result.unfinished_jobs = len(cluster.jobs) + (len(jobs) - next_job)
        result.session_seconds = time.perf_counter() - started
        if self.progress:
            self.progress("\n")
        return result

    def _session(self, now: float, result: SimResult) -> bool:
        cluster = self.cluster
        if not cluster.jobs:
            return False
        objects = cluster.objects()
        snapshot, _dropped = build_snapshot(objects, (k.SCHEDULER_NAME,), self.records)
        decided = run_session(snapshot, self.conf, timestamp(now), timers=self.timers)
        self.timers = dict(decided.timers)
        result.sessions += 1
        broken = gangs_left_partly_evicted(objects.pods, objects.podgroups, decided)
        if broken:
            raise RuntimeError(f"session at t={now:g}s left gangs partly evicted: {'; '.join(broken)}")
        for update in decided.podgroup_updates:
            cluster.write_status(update, now)
        for evict in decided.evictions:
            key = next((k for k, s in cluster.jobs.items() if evict.uid in s.pods), None)
            if key is not None:
                state = cluster.jobs[key]
                end = state.finish_at.get(evict.uid)
                if end is not None:
                    ran = now - (end - state.job.duration)
                    result.evicted_gpu_seconds += ran * state.job.request.amount(GPU) / 1000
                self._moved_at[cluster.evict(key, evict.uid, now)] = now
                result.evictions += 1
        for pipelined in decided.pipelined:
            cluster.nominate(pipelined.job, pipelined.uid, pipelined.node)
        for job_key, binds in decided.binds_by_job().items():
            state = cluster.jobs[job_key]
            for bind in binds:
                cluster.bind(job_key, bind.uid, bind.node, now, bind.annotations)
                moved_at = self._moved_at.pop(bind.uid, None)
                if moved_at is not None:
                    result.moved_wait.append(now - moved_at)
            bound = len(state.finish_at) + state.succeeded
            if state.ready_at is None and bound >= state.job.min_available:
                state.ready_at = now
                result.queueing_delay.append(now - state.job.arrival)
                if state.job.replicas > 1:
                    result.gang_delay.append(now - state.job.arrival)
                if state.job.replicas > 1:
                    result.gangs_placed += 1
                    result.gangs_in_one_rack += int(len(state.racks) == 1)
        return bool(decided.binds or decided.evictions or decided.podgroup_updates)

    def _sample(self, now: float) -> Sample:
        if self.cluster.shared:
            return self._sample_cards(now)
        cluster = self.cluster
        free = cluster.allocatable - cluster.used
        in_use = np.any(cluster.used > 0, axis=1)
        waiting = [s.job.request for s in cluster.jobs.values() if s.ready_at is None]
        # Stranded while work waits: free GPUs on partly used nodes that none of the waiting pod shapes can
        # use. With nothing waiting, free GPUs are idle, not stranded.
        measure = StrandedGpus(list(DIMS), list(dict.fromkeys(waiting))) if waiting else None
        stranded = measure.of_rows(free, in_use)[0] if measure else np.zeros(1, dtype=np.int64)
        pending = len(waiting)
        gpu_used = cluster.used[:, DIMS.index(GPU)]
        return Sample(
            at=now,
            allocated_gpus=int(gpu_used.sum()),
            stranded_gpus=int(stranded.sum()),
            pending_jobs=pending,
            partial_free_gpus=int((-gpu_used % 1000).sum()),
        )

    def _sample_cards(self, now: float) -> Sample:
        """The same measures per card, from the cards the scheduler chose (Volcano's GPU sharing)."""
        cluster = self.cluster
        free = (cluster.allocatable - cluster.used)[:, [DIMS.index(CPU), DIMS.index(MEMORY)]]
        in_use = np.any(cluster.used > 0, axis=1) | np.any(cluster.card_used > 0, axis=1)
        waiting = [s.job.request for s in cluster.jobs.values() if s.ready_at is None]
        shapes = [
            (
                r.amount(CPU),
                r.amount(MEMORY),
                -(-device_amount(r, k.GPU_MEMORY_RESOURCE) * 1000 // SHARED_CARD_MIB),
                device_amount(r, k.GPU_NUMBER_RESOURCE),
            )
            for r in dict.fromkeys(waiting)
        ]
        stranded, partial = stranded_cards(cluster.card_used, free, in_use, shapes)
        return Sample(
            at=now,
            allocated_gpus=int(np.clip(cluster.card_used, 0, None).sum()),
            stranded_gpus=int(stranded.sum()) if waiting else 0,
            pending_jobs=len(waiting),
            partial_free_gpus=int(partial.sum()),
        )


__all__ = ["NAMESPACE", "SimResult", "Simulator", "stderr_progress"]
