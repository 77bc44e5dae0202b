"""The chaos run: a steady workload, faults injected one at a time, invariants read back from the API.

Phases: (1) set up -- priority classes, the scheduler conf (Volcano's tiers with preempt and reclaim), the
fault proxy, then the scheduler and the controller as child processes that reach the API through the proxy;
(2) submit the workload steadily in the background, a few jobs in flight; (3) for each fault, in a shuffled
order: inject it, submit a one-pod probe Job at once, measure the time to the probe's bind (recovery to the
next bind), restore, then read the API twice one settle apart and check the invariants; (4) once every Job is
submitted and finished, check everything again on the quiet cluster (final phases, work kept, PodGroup and
Queue status).

Recovery is measured from the moment the fault begins, so it includes any time the component or the API was
gone. ``DevCluster.restart`` blocks this loop while the API server or etcd is down, which is harmless: the
proxy runs in its own thread, and nothing here can reach the API then anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any, TypeVar

from benchmarks.chaoslib import failover, faults, final
from benchmarks.chaoslib import invariants as inv
from benchmarks.chaoslib.config import RETRIED, ChaosConfig
from benchmarks.chaoslib.failover import CONTROLLER_LEASE, SCHEDULER_LEASE, LeaseWatch
from benchmarks.chaoslib.processes import Component
from benchmarks.chaoslib.proxy import FaultProxy
from benchmarks.chaoslib.report import Report
from benchmarks.chaoslib.workload import (
    HIGH_PRIORITY,
    LOW_PRIORITY,
    PREEMPT_QUEUE,
    JobPlan,
    job_manifest,
    plan_jobs,
    priority_class,
    queue,
)
from volcano_py.api import constants as c
from volcano_py.api.batch import FINISHED_PHASES, JobPhase
from volcano_py.devcluster import DevCluster, credentials
from volcano_py.devcluster.ports import free_ports
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import (
    EVENTS,
    JOBS,
    NODES,
    PODGROUPS,
    PODS,
    PRIORITY_CLASSES,
    QUEUES,
    ResourceKind,
)

T = TypeVar("T")
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
WEBHOOK_CONFIGURATION = "volcano-py"  # the controller's default configuration name


class ChaosRun:
    def __init__(
        self, cluster: DevCluster, config: ChaosConfig, progress: Callable[[str], None] = lambda _: None
    ) -> None:
        self.cluster = cluster
        self.config = config
        self.say = progress
        self.rng = random.Random(config.seed)
        self.report = Report()
        self.namespace = ""
        self.client: KubeClient | None = None
        self.proxy: FaultProxy | None = None
        # The components faults aim at (with ``ha``: the current leaders, picked before each fault).
        self.scheduler: Component | None = None
        self.controller: Component | None = None
        self.schedulers: list[Component] = []
        self.controllers: list[Component] = []
        self.leases = LeaseWatch()
        # CronJobs a fault made: name -> the intervals their controller was away (kill -> the probe's bind).
        self.crons: dict[str, list[tuple[float, float]]] = {}
        self.flows: list[str] = []  # JobFlows a fault made
        self.plans: dict[str, JobPlan] = {}
        self.finished: set[str] = set()
        self.seen: set[tuple[str, str]] = set()
        self.probes = 0
        self.began = time.monotonic()

    # -- API helpers ----------------------------------------------------------------------------------------

    @property
    def api(self) -> KubeClient:
        assert self.client is not None
        return self.client

    async def _retry(self, call: Callable[[], Awaitable[T]], what: str, within: float = 120.0) -> T:
        """``call`` until it answers: the API may be restarting, slow, or its webhook away."""
        deadline = time.monotonic() + within
        while True:
            try:
                return await call()
            except ApiError as err:
                if (err.status < 500 and err.status != 429) or time.monotonic() > deadline:
                    raise
            except RETRIED:
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.3)

    async def _list(self, kind: ResourceKind, namespace: str | None = None, **query: str) -> list[Any]:
        path = kind.collection_path(namespace)
        listing = await self._retry(lambda: self.api.get(path, **query), f"list {kind.plural}")
        items: list[Any] = listing.get("items", [])
        return items

    async def read(self) -> inv.ApiState:
        ns = self.namespace
        return inv.ApiState(
            pods=await self._list(PODS, ns),
            podgroups=await self._list(PODGROUPS, ns),
            jobs=await self._list(JOBS, ns),
            queues=await self._list(QUEUES),
            nodes=await self._list(NODES),
            events=await self._list(EVENTS, ns),
        )

    async def submit(self, plan: JobPlan) -> None:
        """Create the Job, retrying while the API or the webhook is away (each refusal is counted)."""
        manifest = job_manifest(plan, self.namespace)
        path = JOBS.collection_path(self.namespace)
        deadline = time.monotonic() + self.config.recovery_timeout * 2
        while True:
            try:
                await self.api.create(path, manifest)
                break
            except ApiError as err:
                if err.conflict:
                    break  # created by an attempt whose answer was lost
                if (err.status < 500 and err.status != 429) or time.monotonic() > deadline:
                    raise
                self.report.submit_refusals += 1
            except RETRIED:
                if time.monotonic() > deadline:
                    raise
                self.report.submit_refusals += 1
            await asyncio.sleep(0.5)
        self.plans[plan.name] = plan
        self.report.jobs_submitted += 1

    # -- set-up ---------------------------------------------------------------------------------------------

    async def setup(self) -> None:
        config = self.config
        config.work_dir.mkdir(parents=True, exist_ok=True)
        self.client = KubeClient(await load_api_client(str(self.cluster.kubeconfig)))
        self.namespace = await asyncio.to_thread(self.cluster.create_namespace, f"chaos-{config.seed}")
        for name in (LOW_PRIORITY, HIGH_PRIORITY):
            with contextlib.suppress(ApiError):
                await self.api.create(PRIORITY_CLASSES.collection_path(), priority_class(name))
        with contextlib.suppress(ApiError):  # no webhook yet: created as the scheduler will read it
            await self.api.create(QUEUES.collection_path(), queue(PREEMPT_QUEUE))
        pki = self.cluster.layout.pki
        self.proxy = FaultProxy(
            self.cluster.server,
            ca_file=self.cluster.layout.serving_cert,
            cert_file=pki / "apiserver.crt",
            key_file=pki / "apiserver.key",
            seed=config.seed,
        ).start()
        kubeconfig = config.work_dir / "kubeconfig-via-proxy"
        kubeconfig.write_text(
            credentials.kubeconfig(self.proxy.url, self.cluster.token, self.cluster.layout.serving_cert)
        )
        conf = config.work_dir / "volcano-scheduler.conf"
        conf.write_text(config.scheduler_conf)
        python = [sys.executable, "-m", "volcano_py"]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        replicas = ("a", "b") if config.ha else ("",)
        for replica in replicas:
            scheduler_metrics, controller_metrics, webhook = free_ports(3)
            suffix = f"-{replica}" if replica else ""
            self.schedulers.append(Component(
                f"scheduler{suffix}",
                [*python, "--log-level", "debug", "scheduler", "--kubeconfig", str(kubeconfig),
                 "--scheduler-conf", str(conf), *self._election("chaos-scheduler"),
                 "--schedule-period", str(config.schedule_period),
                 # A few binds in flight, as with a gang much larger than the default 64: a kill can land
                 # between a gang's binds, not only after all of them were sent.
                 "--bind-concurrency", "4",
                 # The double-bind check reads every bound pod's own Scheduled Event.
                 "--scheduled-event-qps", "0",
                 "--metrics-host", "127.0.0.1", "--metrics-port", str(scheduler_metrics)],
                config.work_dir / f"scheduler{suffix}.log",
                env,
                elects=config.ha,
            ))  # fmt: skip
            self.controllers.append(Component(
                f"controller{suffix}",
                [*python, "--log-level", "debug", "controller", "--kubeconfig", str(kubeconfig),
                 *self._election("chaos-controller"),
                 "--create-concurrency", "4",  # as for --bind-concurrency above
                 "--metrics-host", "127.0.0.1", "--metrics-port", str(controller_metrics),
                 # Each replica serves admission on a port of its own while it leads, and points the
                 # webhook configurations at it when its term begins.
                 "--webhook-port", str(webhook), "--webhook-addr", "127.0.0.1",
                 "--webhook-cert-dir", str(config.work_dir / f"webhook{suffix}")],
                config.work_dir / f"controller{suffix}.log",
                env,
                elects=config.ha,
            ))  # fmt: skip
        self.scheduler, self.controller = self.schedulers[0], self.controllers[0]
        for scheduler in self.schedulers:
            scheduler.start()
        # The scheduler creates the default queues; the controller's webhooks then admit Queue writes.
        await self._wait(self._has_default_queue, "the scheduler's default queue", 90)
        for controller in self.controllers:
            controller.start()
        await self._wait(self._webhooks_installed, "the controller's webhook configurations", 90)
        if config.ha:
            self.report.lease = {
                "lease_duration_s": config.lease.lease_duration,
                "renew_deadline_s": config.lease.renew_deadline,
                "retry_period_s": config.lease.retry_period,
            }
            self.leases.start(self.api, self.namespace, (SCHEDULER_LEASE, CONTROLLER_LEASE))
        sentinels = [
            JobPlan(f"sentinel-{i}", 2, priority=HIGH_PRIORITY, outcome=JobPhase.RUNNING)
            for i in range(config.sentinels)
        ]
        for plan in sentinels:
            await self.submit(plan)

    def _election(self, lease: str) -> list[str]:
        if not self.config.ha:
            return ["--no-leader-elect"]
        timing = self.config.lease
        return ["--leader-elect", "--lease-namespace", self.namespace, "--lease-name", lease,
                f"--leader-elect-lease-duration={timing.lease_duration}s",
                f"--leader-elect-renew-deadline={timing.renew_deadline}s",
                f"--leader-elect-retry-period={timing.retry_period}s"]  # fmt: skip

    @property
    def components(self) -> list[Component]:
        return [*self.schedulers, *self.controllers]

    async def _has_default_queue(self) -> bool:
        try:
            await self.api.get(QUEUES.object_path(c.DEFAULT_QUEUE))
            return True
        except (ApiError, *RETRIED):
            return False

    async def _webhooks_installed(self) -> bool:
        try:
            await self.api.get(f"{ADMISSION}/validatingwebhookconfigurations/{WEBHOOK_CONFIGURATION}")
            return True
        except (ApiError, *RETRIED):
            return False

    async def _wait(self, check: Callable[[], Awaitable[Any]], what: str, within: float) -> Any:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            value = await check()
            if value:
                return value
            await asyncio.sleep(0.1)
        raise TimeoutError(f"timed out after {within:.0f}s waiting for {what}")

    # -- the workload ---------------------------------------------------------------------------------------

    async def track_finished(self) -> None:
        for job in await self._list(JOBS, self.namespace):
            phase = ((job.get("status") or {}).get("state") or {}).get("phase")
            if phase in FINISHED_PHASES:
                self.finished.add(job["metadata"]["name"])

    def _in_flight(self) -> int:
        return sum(
            1 for name, p in self.plans.items() if name not in self.finished and p.outcome != "Running"
        )

    async def submit_workload(self, plans: list[JobPlan]) -> None:
        """Keep ``in_flight`` workload Jobs unfinished until every plan is submitted."""
        queue = list(plans)
        while queue:
            await self.track_finished()
            while queue and self._in_flight() < self.config.in_flight:
                await self.submit(queue.pop(0))
            await asyncio.sleep(0.5)

    # -- faults ---------------------------------------------------------------------------------------------

    def next_number(self) -> int:
        return self.probes + 1

    async def pick_leaders(self) -> None:
        """Aim the next fault at the current leaders (live, not frozen, holding their leases)."""
        for lease, group in ((SCHEDULER_LEASE, self.schedulers), (CONTROLLER_LEASE, self.controllers)):

            async def leader(lease: str = lease, group: list[Component] = group) -> Component | None:
                return failover.leader_of(self, lease, group)

            found = await self._wait(leader, f"a live holder of {lease}", self.config.recovery_timeout)
            if lease == SCHEDULER_LEASE:
                self.scheduler = found
            else:
                self.controller = found

    async def check_after_fault(self) -> list[str]:
        first = await self.read()
        await asyncio.sleep(self.config.settle_seconds)
        second = await self.read()
        found = [*inv.check(second), *inv.stuck(first, second)]
        new = [v for v in found if (v.invariant, v.subject) not in self.seen]
        self.seen.update((v.invariant, v.subject) for v in new)
        return [str(v) for v in new]

    async def supervise(self) -> None:
        """Restart a process that exits by itself, as its Deployment would (each such exit is a finding)."""
        while True:
            for component in self.components:
                if component.revive():
                    self.say(f"{component.name} exited by itself; restarted (see {component.log_path})")
            await asyncio.sleep(1.0)

    # -- the run --------------------------------------------------------------------------------------------

    async def run(self) -> Report:
        config = self.config
        background: list[asyncio.Task[None]] = []
        try:
            await self.setup()  # inside: a set-up that fails half-way still stops what it started
            self.say(f"set up in {time.monotonic() - self.began:.1f}s")
            plans = plan_jobs(config.jobs, seed=config.seed, max_gang=config.max_gang)
            workload = asyncio.create_task(self.submit_workload(plans))
            background += [workload, asyncio.create_task(self.supervise())]
            schedule = [kind for kind in config.faults for _ in range(config.rounds)]
            self.rng.shuffle(schedule)
            for i, kind in enumerate(schedule, 1):
                await asyncio.sleep(config.quiet_seconds)
                self.say(f"fault {i}/{len(schedule)}: {kind}")
                self._supervise(False)
                try:
                    record = await faults.inject(self, kind)
                finally:
                    self._supervise(True)
                self.report.faults.append(record)
                self.report.violations += record.violations
            await workload
            await final.finish(self)
        finally:
            # The watchdog first: it would start again what the teardown stops.
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            await self.teardown()
        return self.report

    def _supervise(self, on: bool) -> None:
        for component in self.components:
            component.supervised = on

    async def teardown(self) -> None:
        await self.leases.stop()
        for component in [*self.controllers, *self.schedulers]:
            await asyncio.to_thread(component.stop)
            self.report.component_starts[component.name] = component.starts
            self.report.component_crashes[component.name] = component.crashes
        if self.proxy is not None:
            self.report.proxy = asdict(self.proxy.stats)
            self.proxy.stop()
        if self.client is not None:
            await self.client.close()
        self.report.wall_s = time.monotonic() - self.began
        self.report.load_average = os.getloadavg()


async def run_chaos(
    cluster: DevCluster, config: ChaosConfig, progress: Callable[[str], None] = lambda _: None
) -> Report:
    return await ChaosRun(cluster, config, progress).run()
