"""The dashboard's mirror of the cluster: watches, a generation number, and what is derived from them.

Informers (the scheduler's own list+watch code) keep every kind the pages show. Each change bumps
``generation`` and wakes the server-sent-event streams. Derived state is computed lazily, once per
generation: the ``Cluster`` rows, and in a worker thread the queues' deserved shares (from one session of
the scheduler's conf over the current objects, as the scheduler itself computes them), the forecast (each
waiting job's position and estimated start, ``volcano_py.forecast``) and the what-if answers the job pages
ask for. Binds per second are counted from the pod watch (a pod of ours gaining a
node); the scheduling cycle time comes from the scheduler's ``/metrics`` when its URL is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import aiohttp

from volcano_py.api import constants as c
from volcano_py.api.bodies.pod import pod_node_name, pod_scheduler_name
from volcano_py.api.common import format_time
from volcano_py.forecast import Bounds, Forecast, forecast
from volcano_py.kube.client import NETWORK_ERRORS, KubeClient
from volcano_py.kube.informer import Informer
from volcano_py.kube.kinds import (
    DEVICE_CLASSES,
    EVENTS,
    HYPERNODES,
    JOBS,
    LEASES,
    NODES,
    NODESHARDS,
    NUMATOPOLOGIES,
    PODDISRUPTIONBUDGETS,
    PODGROUPS,
    PODS,
    PRIORITY_CLASSES,
    QUEUES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    RESOURCEQUOTAS,
    ResourceKind,
)
from volcano_py.kube.store import Delta, EventType
from volcano_py.kube.waiting import within
from volcano_py.log import get_logger
from volcano_py.resources import Resource
from volcano_py.scheduler.core import SchedulerConf, Snapshot
from volcano_py.whatif import Budget, WhatIf, what_would_make_it_run
from volcano_py.whatif.jobpods import missing_pods

from . import node_views, views

_log = get_logger(__name__)
Obj = dict[str, Any]
# The component the scheduler's EventRecorder writes its events as (scheduler/runtime/runner.py).
SCHEDULER_COMPONENT = "volcano"
# A what-if answer is reused this long (live updates re-render the job page on every change).
WHATIF_TTL = 15.0
# A forecast is recomputed at least this often, changes or not: running pods age, and modelled runtimes
# with them.
FORECAST_MAX_AGE = 60.0
T = TypeVar("T")


def _stamp(now: datetime) -> str:
    return format_time(now)


@dataclass(frozen=True, slots=True)
class Derived:
    generation: int
    cluster: views.Cluster
    snapshot: Snapshot
    cells: list[node_views.NodeCell]


class DashboardState:
    def __init__(
        self,
        client: KubeClient,
        conf: SchedulerConf,
        *,
        conf_source: str,
        lease_namespace: str = "volcano-system",
        lease_name: str = "vc-scheduler",
        metrics_url: str | None = None,
        whatif_seconds: float = 10.0,
        forecast_seconds: float = 10.0,
        scheduler_names: tuple[str, ...] = (c.SCHEDULER_NAME,),
    ) -> None:
        self.client = client
        self.conf = conf
        self.conf_source = conf_source
        self.metrics_url = metrics_url
        self.whatif_budget = Budget(seconds=whatif_seconds)
        self.scheduler_names = scheduler_names
        self.generation = 0
        self.changed = asyncio.Condition()
        self.binds: deque[float] = deque()
        self.cycle_ms: float | None = None
        self.deserved: dict[str, Resource] = {}
        self.forecast: Forecast | None = None
        self.forecast_bounds = Bounds(seconds=forecast_seconds)
        self._derived: Derived | None = None
        self._whatif: dict[str, tuple[float, WhatIf]] = {}
        self._running: dict[str, asyncio.Future[WhatIf]] = {}
        self.informers: dict[str, Informer] = {
            "nodes": self._informer(NODES),
            "pods": self._informer(PODS, self._on_pod),
            "podgroups": self._informer(PODGROUPS),
            "queues": self._informer(QUEUES),
            "jobs": self._informer(JOBS, optional=True),
            "priorityclasses": self._informer(PRIORITY_CLASSES),
            "hypernodes": self._informer(HYPERNODES, optional=True),
            # Read by the scheduler's pdb, resourcequota and numa-aware plugins: the what-if needs them to
            # answer as the scheduler decides.
            "poddisruptionbudgets": self._informer(PODDISRUPTIONBUDGETS),
            "resourcequotas": self._informer(RESOURCEQUOTAS),
            "numatopologies": self._informer(NUMATOPOLOGIES, optional=True),
            "deviceclasses": self._informer(DEVICE_CLASSES, optional=True),
            "resourceslices": self._informer(RESOURCE_SLICES, optional=True),
            "resourceclaims": self._informer(RESOURCE_CLAIMS, optional=True),
            # Which scheduler owns which node, on the GPU grid (absent CRD: no sharding, no owners).
            "nodeshards": self._informer(NODESHARDS, optional=True),
            "lease": self._informer(
                LEASES, namespace=lease_namespace, field_selector=f"metadata.name={lease_name}"
            ),
            # Only the scheduler's warnings (by source.component, as kube/events.py writes it).
            "warnings": self._informer(EVENTS, field_selector=f"type=Warning,source={SCHEDULER_COMPONENT}"),
        }

    def _informer(self, kind: ResourceKind, extra: Any = None, **options: Any) -> Informer:
        def handle(delta: Delta) -> None:
            self.generation += 1
            if extra is not None:
                extra(delta)

        return Informer(self.client, kind, handle, **options)

    def _on_pod(self, delta: Delta) -> None:
        if delta.type is not EventType.MODIFIED or delta.old is None or delta.new is None:
            return
        bound_now = pod_node_name(delta.new) and not pod_node_name(delta.old)
        if bound_now and pod_scheduler_name(delta.new) in self.scheduler_names:
            self.binds.append(time.monotonic())

    # --- running ----------------------------------------------------------------------------------------

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            for informer in self.informers.values():
                group.create_task(informer.run())
            group.create_task(self._notify())
            group.create_task(self._keep_fresh("deserved shares", self._shares, self._store_shares))
            group.create_task(
                self._keep_fresh(
                    "the forecast", self._forecast, self._store_forecast, max_age=FORECAST_MAX_AGE
                )
            )
            if self.metrics_url:
                group.create_task(self._scrape())

    async def wait_synced(self) -> None:
        await asyncio.gather(*(i.synced.wait() for i in self.informers.values()))

    async def _notify(self, interval: float = 0.2) -> None:
        """Wake the event streams when the generation moved (at most every ``interval`` seconds)."""
        seen = self.generation
        while True:
            await asyncio.sleep(interval)
            if self.generation != seen:
                seen = self.generation
                async with self.changed:
                    self.changed.notify_all()

    async def wait_change(self, after: int, *, wait: float) -> int:
        """The generation once it differs from ``after`` (or the same after ``wait`` seconds)."""
        if self.generation != after:
            return self.generation
        async with self.changed:
            with contextlib.suppress(TimeoutError):
                await within(self.changed.wait(), wait)
        return self.generation

    async def _keep_fresh(
        self,
        what: str,
        compute: Callable[[views.Cluster], T],
        store: Callable[[T], bool],
        *,
        interval: float = 5.0,
        max_age: float | None = None,
    ) -> None:
        """Recompute ``compute`` over the mirror after each change (and every ``max_age`` seconds): at most
        every ``interval`` seconds, and never more than a tenth of the time (it runs sessions, which compete
        with page renders for the CPU). ``store`` keeps the value and says whether the pages show anything
        new, which the streams are then told."""
        pause, seen, last = interval, -1, 0.0
        while True:
            await asyncio.sleep(pause)
            stale = max_age is not None and time.monotonic() - last >= max_age
            if self.generation == seen and not stale:
                continue
            generation = self.generation
            derived = self.derived()
            began = time.monotonic()
            try:
                value = await asyncio.to_thread(compute, derived.cluster)
            except Exception:
                _log.exception(f"{what} could not be computed")
                continue
            last = time.monotonic()
            pause = max(interval, 10 * (last - began))
            seen = generation
            if store(value):
                self.generation += 1
                if self.generation == generation + 1:
                    seen = self.generation  # nothing else changed meanwhile

    def _store_shares(self, shares: dict[str, Resource]) -> bool:
        changed = shares != self.deserved
        self.deserved = shares
        return changed  # the queue bars show them

    def _forecast(self, cluster: views.Cluster) -> Forecast:
        return forecast(
            cluster,
            self.conf,
            datetime.now(UTC),
            jobs=cluster.jobs,
            scheduler_names=self.scheduler_names,
            bounds=self.forecast_bounds,
        )

    def _store_forecast(self, answer: Forecast) -> bool:
        before, self.forecast = self.forecast, answer
        return before is None or before.etas != answer.etas

    def _shares(self, cluster: views.Cluster) -> dict[str, Resource]:
        result = views.session_of(cluster, self.conf, _stamp(datetime.now(UTC)))
        return {u.name: u.deserved for u in result.queue_updates if u.deserved is not None}

    async def _scrape(self, interval: float = 5.0) -> None:
        """Mean cycle time over each scrape interval, from Volcano's e2e latency histogram."""
        assert self.metrics_url
        last: tuple[float, float] | None = None
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
            while True:
                try:
                    async with session.get(self.metrics_url) as response:
                        text = await response.text()
                    now = _latency_totals(text)
                    if now is not None and last is not None and now[1] > last[1]:
                        self.cycle_ms = (now[0] - last[0]) / (now[1] - last[1])
                    last = now or last
                except NETWORK_ERRORS as exc:
                    _log.debug("scheduler metrics unreachable", url=self.metrics_url, error=str(exc))
                await asyncio.sleep(interval)

    # --- what the pages read ----------------------------------------------------------------------------

    def values(self, name: str) -> list[Obj]:
        return self.informers[name].store.values()

    def derived(self) -> Derived:
        if self._derived is not None and self._derived.generation == self.generation:
            return self._derived
        generation = self.generation
        cluster = views.Cluster(
            nodes=self.values("nodes"),
            pods=self.values("pods"),
            podgroups=self.values("podgroups"),
            queues=self.values("queues"),
            jobs=self.values("jobs"),
            hypernodes=self.values("hypernodes"),
            priority_classes=self.values("priorityclasses"),
            pdbs=self.values("poddisruptionbudgets"),
            resource_quotas=self.values("resourcequotas"),
            numatopologies=self.values("numatopologies"),
            device_classes=self.values("deviceclasses"),
            resource_slices=self.values("resourceslices"),
            resource_claims=self.values("resourceclaims"),
            nodeshards=self.values("nodeshards"),
            scheduler_names=self.scheduler_names,
        )
        snapshot = views.snapshot_of(cluster)
        cells = node_views.node_cells(snapshot, cluster.nodeshards)
        self._derived = Derived(generation, cluster, snapshot, cells)
        return self._derived

    def health(self, now: datetime) -> views.Health:
        cutoff = time.monotonic() - 60.0
        while self.binds and self.binds[0] < cutoff:
            self.binds.popleft()
        leases = self.values("lease")
        leader, age = views.leader_of(leases[0] if leases else None, now)
        return views.Health(
            leader=leader,
            lease_age=age,
            binds_per_second=len(self.binds) / 60.0,
            cycle_ms=self.cycle_ms,
            errors=views.warning_rows(self.values("warnings"), now),
        )

    def what_if(self, podgroup_key: str, job: Obj | None) -> asyncio.Future[WhatIf]:
        """The what-if for one PodGroup: reused for ``WHATIF_TTL``, else computed once in a worker thread
        however many pages ask for it meanwhile."""
        cached = self._whatif.get(podgroup_key)
        if cached is not None and time.monotonic() - cached[0] < WHATIF_TTL:
            done: asyncio.Future[WhatIf] = asyncio.get_running_loop().create_future()
            done.set_result(cached[1])
            return done
        running = self._running.get(podgroup_key)
        if running is None or running.done():
            running = asyncio.ensure_future(self._what_if(podgroup_key, job))
            self._running[podgroup_key] = running
        return asyncio.shield(running)

    async def _what_if(self, podgroup_key: str, job: Obj | None) -> WhatIf:
        objects = self.derived().cluster
        now = _stamp(datetime.now(UTC))
        extra = missing_pods(job, podgroup_key, objects.pods, created=now)
        answer = await asyncio.to_thread(
            what_would_make_it_run,
            objects,
            podgroup_key,
            self.conf,
            now=now,
            extra_pods=extra,
            scheduler_names=self.scheduler_names,
            budget=self.whatif_budget,
        )
        self._whatif[podgroup_key] = (time.monotonic(), answer)
        self._running.pop(podgroup_key, None)
        return answer


def _latency_totals(text: str) -> tuple[float, float] | None:
    """(sum, count) of ``volcano_e2e_scheduling_latency_milliseconds`` in Prometheus text."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        for suffix in ("_sum", "_count"):
            name = f"volcano_e2e_scheduling_latency_milliseconds{suffix}"
            if line.startswith(name + " ") or line.startswith(name + "{"):
                with contextlib.suppress(ValueError):
                    found[suffix] = float(line.rsplit(" ", 1)[1])
    if "_sum" in found and "_count" in found:
        return found["_sum"], found["_count"]
    return None
