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
import json
import os
import random
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiohttp

from benchmarks.chaoslib import cron, failover, flows, preemption
from benchmarks.chaoslib import invariants as inv
from benchmarks.chaoslib.failover import CONTROLLER_LEASE, SCHEDULER_LEASE, LeaseWatch
from benchmarks.chaoslib.processes import Component, LogLine
from benchmarks.chaoslib.proxy import FaultProxy
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
from volcano_py.api.flow import FLOW_FINISHED_PHASES
from volcano_py.cli.up import UP_CONF
from volcano_py.devcluster import DevCluster, credentials
from volcano_py.devcluster.ports import free_ports
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import EVENTS, NODES, PODGROUPS, PODS, PRIORITY_CLASSES, QUEUES, ResourceKind
from volcano_py.kube.leader import LeaseTiming

T = TypeVar("T")
JOBS = ResourceKind(c.BATCH_GROUP, c.BATCH_VERSION, c.JOB_PLURAL, c.JOB_KIND, namespaced=True)
CRONJOBS = ResourceKind(c.BATCH_GROUP, c.BATCH_VERSION, c.CRONJOB_PLURAL, c.CRONJOB_KIND, namespaced=True)
JOBFLOWS = ResourceKind(c.FLOW_GROUP, c.FLOW_VERSION, c.JOBFLOW_PLURAL, c.JOBFLOW_KIND, namespaced=True)
JOBTEMPLATES = ResourceKind(
    c.FLOW_GROUP, c.FLOW_VERSION, c.JOBTEMPLATE_PLURAL, c.JOBTEMPLATE_KIND, namespaced=True
)
FAULT_KINDS: tuple[str, ...] = (
    "scheduler-kill-cycle",
    "scheduler-kill-bind",
    "scheduler-kill-evict",
    "controller-kill-create",
    "controller-kill-cron",
    "controller-kill-flow",
    "apiserver-restart",
    "etcd-restart",
    "watch-cut",
    "webhook-down",
    "slow-api",
)
# With two schedulers and two controllers electing leaders (``ChaosConfig.ha``): the leader SIGKILLed or
# frozen past its lease, the standby taking over (see ``failover``).
HA_FAULT_KINDS: tuple[str, ...] = (
    "leader-kill-cycle",
    "leader-kill-bind",
    "leader-kill-evict",
    "leader-freeze",
    "controller-leader-kill",
    "controller-leader-freeze",
)
ALL_FAULT_KINDS = FAULT_KINDS + HA_FAULT_KINDS
# Faults that keep the CronJob controller from acting on a tick (it is gone, frozen, between leaders, or the
# API it writes through is away or refusing): a tick falling in one may be missed, and after it only the
# latest missed tick is run. Scheduler-only faults hold a run active longer, which Forbid explains.
CONTROLLER_AWAY: frozenset[str] = frozenset({
    "controller-kill-create", "controller-kill-cron", "controller-kill-flow", "controller-leader-kill",
    "controller-leader-freeze", "webhook-down", "apiserver-restart", "etcd-restart", "watch-cut", "slow-api",
})  # fmt: skip
_RETRIED = (aiohttp.ClientError, ConnectionError, TimeoutError, OSError)
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
WEBHOOK_CONFIGURATION = "volcano-py"  # the controller's default configuration name
OTHER_SCHEDULER = "chaos-other"  # pods of a scheduler nobody runs here; bound by nodeName directly


@dataclass(slots=True)
class ChaosConfig:
    work_dir: Path
    jobs: int = 40
    in_flight: int = 6  # workload Jobs submitted and not yet finished, at most
    rounds: int = 1  # each fault kind this many times
    faults: tuple[str, ...] = ()  # empty: every kind the mode runs (HA_FAULT_KINDS too with ``ha``)
    # Two schedulers and two controllers electing leaders through Leases with these durations, each restarted
    # under a new identity after a kill; without it, one of each and no election.
    ha: bool = False
    lease: LeaseTiming = field(default_factory=lambda: LeaseTiming(5, 4.0, 1.0))
    seed: int = 1
    max_gang: int = 64
    schedule_period: float = 0.5
    settle_seconds: float = 3.0  # between the two readings that find stuck gangs: several cycles
    quiet_seconds: float = 2.0  # before each fault
    outage_seconds: float = 4.0  # how long the webhook stays unreachable and the API stays slow
    recovery_timeout: float = 90.0
    finish_timeout: float = 300.0
    sentinels: int = (
        2  # high-priority 2-pod Jobs that run the whole time (their PodGroups' status is checked)
    )
    scheduler_conf: str = UP_CONF  # e.g. with shuffle and rescheduling, so their evictions meet the faults
    cron_runs: int = 4  # runs a killed controller's CronJob makes before the fault is over

    def __post_init__(self) -> None:
        if not self.faults:
            self.faults = ALL_FAULT_KINDS if self.ha else FAULT_KINDS
        unknown = sorted(set(self.faults) - set(ALL_FAULT_KINDS))
        if unknown:
            raise ValueError(f"unknown fault kinds {unknown}; known: {', '.join(ALL_FAULT_KINDS)}")
        need_ha = sorted(set(self.faults) & set(HA_FAULT_KINDS))
        if need_ha and not self.ha:
            raise ValueError(f"fault kinds {need_ha} need a standby: run with --ha")
        if self.rounds < 0 or self.jobs < 0 or self.in_flight < 1:
            raise ValueError("rounds and jobs must be >= 0 and in_flight >= 1")


@dataclass(slots=True)
class FaultRecord:
    kind: str
    at_s: float  # since the run began
    recovery_s: float | None  # fault start -> the probe's bind; None if it never bound
    landed: str  # what the fault hit (pods bound of the gang at a mid-bind kill, ...)
    violations: list[str] = field(default_factory=list)
    failover_s: float | None = None  # leader killed or frozen -> the standby's first write as leader


@dataclass(slots=True)
class Report:
    faults: list[FaultRecord] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    final_violations: list[str] = field(default_factory=list)
    jobs_submitted: int = 0
    jobs_expected: dict[str, str] = field(default_factory=dict)
    work_lost: int = 0
    submit_refusals: int = 0
    evictions: int = 0
    pods_bound: int = 0
    proxy: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)
    component_starts: dict[str, int] = field(default_factory=dict)
    component_crashes: dict[str, int] = field(default_factory=dict)
    lease: dict[str, float] = field(default_factory=dict)  # the election's durations, with ``ha``
    writes_judged: int = 0  # writes placed in a leader's term (``ha``)
    late_writes: int = 0  # through the fence, then frozen >= 1 s before they went out (``Write.late``)
    cron_runs: dict[str, int] = field(default_factory=dict)  # runs each fault's CronJob made
    lease_terms: int = 0

    def summary(self) -> dict[str, Any]:
        by_kind: dict[str, dict[str, Any]] = {}
        for kind in sorted({f.kind for f in self.faults}):
            records = [f for f in self.faults if f.kind == kind]
            times = sorted(f.recovery_s for f in records if f.recovery_s is not None)
            failovers = sorted(f.failover_s for f in records if f.failover_s is not None)
            by_kind[kind] = {
                "injected": len(records),
                "recovered": len(times),
                "recovery_p50_s": _percentile(times, 0.5),
                "recovery_p99_s": _percentile(times, 0.99),
                "recovery_max_s": times[-1] if times else None,
                **(
                    {"failover_p50_s": _percentile(failovers, 0.5), "failover_max_s": failovers[-1]}
                    if failovers
                    else {}
                ),
                "violations": sum(len(f.violations) for f in records),
                "landed": [f.landed for f in records],
            }
        return {
            "faults": by_kind,
            "faults_injected": len(self.faults),
            "invariant_violations": len(self.violations) + len(self.final_violations),
            "violations": self.violations + self.final_violations,
            "work_lost": self.work_lost,
            "jobs_submitted": self.jobs_submitted,
            "pods_bound": self.pods_bound,
            "evictions": self.evictions,
            "submit_refusals": self.submit_refusals,
            "proxy": self.proxy,
            **({"cron_runs": self.cron_runs} if self.cron_runs else {}),
            "component_starts": self.component_starts,
            "component_crashes": self.component_crashes,
            **(
                {
                    "lease": self.lease,
                    "lease_terms": self.lease_terms,
                    "writes_judged": self.writes_judged,
                    "late_writes": self.late_writes,
                }
                if self.lease
                else {}
            ),
            "wall_s": round(self.wall_s, 1),
            "load_average": [round(x, 2) for x in self.load_average],
        }

    def to_json(self) -> str:
        return json.dumps({"summary": self.summary(), "records": [asdict(f) for f in self.faults]}, indent=2)


async def _at_least(count: Awaitable[int], wanted: int) -> bool:
    return await count >= wanted


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    index = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return round(values[index], 2)


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
        self._seen: set[tuple[str, str]] = set()
        self._probes = 0
        self._began = time.monotonic()

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
            except _RETRIED:
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
            except _RETRIED:
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
        except (ApiError, *_RETRIED):
            return False

    async def _webhooks_installed(self) -> bool:
        try:
            await self.api.get(f"{ADMISSION}/validatingwebhookconfigurations/{WEBHOOK_CONFIGURATION}")
            return True
        except (ApiError, *_RETRIED):
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

    async def _track_finished(self) -> None:
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
            await self._track_finished()
            while queue and self._in_flight() < self.config.in_flight:
                await self.submit(queue.pop(0))
            await asyncio.sleep(0.5)

    # -- faults ---------------------------------------------------------------------------------------------

    async def _probe(self, started: float) -> float | None:
        """Submit a one-pod Job and return seconds from ``started`` until its pod is bound."""
        self._probes += 1
        plan = JobPlan(f"probe-{self._probes:03d}", 1, priority=HIGH_PRIORITY, seconds=1.0, gpus=0)
        await self.submit(plan)
        selector = f"{c.JOB_NAME_KEY}={plan.name}"
        deadline = started + self.config.recovery_timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(ApiError, *_RETRIED):
                pods = (await self.api.get(PODS.collection_path(self.namespace), labelSelector=selector))[
                    "items"
                ]
                if any((p.get("spec") or {}).get("nodeName") for p in pods):
                    return round(time.monotonic() - started, 2)
            await asyncio.sleep(0.1)
        return None

    async def _gang_bound(self, job: str) -> int:
        selector = f"{c.JOB_NAME_KEY}={job}"
        pods = await self._list(PODS, self.namespace, labelSelector=selector)
        return sum(1 for p in pods if (p.get("spec") or {}).get("nodeName"))

    async def _pods_of(self, job: str) -> int:
        return len(await self._list(PODS, self.namespace, labelSelector=f"{c.JOB_NAME_KEY}={job}"))

    def next_number(self) -> int:
        return self._probes + 1

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

    async def inject(self, kind: str) -> FaultRecord:
        if self.config.ha:
            await self.pick_leaders()
        assert self.scheduler is not None and self.controller is not None and self.proxy is not None
        at = round(time.monotonic() - self._began, 1)
        landed = ""
        violations: list[str] = []
        outcome = None
        cron_name: str | None = None
        if kind in HA_FAULT_KINDS:
            outcome = await failover.inject(self, kind)
            started, landed = outcome.started, outcome.landed
            violations += outcome.violations
        elif kind == "scheduler-kill-cycle":
            # Right after a cycle decided binds and handed them to the binder (its "cycle" line), or, if no
            # cycle binds anything meanwhile, at a random moment.
            fired = self.scheduler.kill_on(lambda line: line.get("event") == "cycle")
            await self.submit(
                JobPlan(f"cyclekill-{self._probes + 1:03d}", 4, priority=HIGH_PRIORITY, seconds=3.0)
            )
            if await asyncio.to_thread(fired.wait, 10.0):
                started = time.monotonic()
                self.scheduler.wait()
                landed = f"after a cycle of {self.scheduler.fired_line_field('binds')} binds"
            else:
                self.scheduler.disarm()
                await asyncio.sleep(self.rng.uniform(0, self.config.schedule_period))
                started = time.monotonic()
                self.scheduler.kill()
                landed = "a random moment (no cycle bound anything for 10s)"
            self.scheduler.start()
        elif kind == "scheduler-kill-bind":
            gang = JobPlan(f"bindkill-{self._probes + 1:03d}", 16, priority=HIGH_PRIORITY, seconds=3.0)
            prefix = f"{self.namespace}/{gang.name}-"

            def first_bind(line: LogLine) -> bool:
                return line.get("event") == "bound" and str(line.get("pod", "")).startswith(prefix)

            fired = self.scheduler.kill_on(first_bind)
            await self.submit(gang)
            if await asyncio.to_thread(fired.wait, self.config.recovery_timeout):
                started = time.monotonic()
                self.scheduler.wait()
                bound = await self._gang_bound(gang.name)
                landed = f"{bound} of {gang.size} bound at the kill"
            else:
                self.scheduler.disarm()
                started = time.monotonic()
                self.scheduler.kill()
                landed = "the gang was not bound in time; killed anyway"
            self.scheduler.start()
        elif kind == "scheduler-kill-evict":
            number = self.next_number()
            filled, nodes = await preemption.fill(self, number)
            gang = preemption.preemptor(number, nodes)
            fired = self.scheduler.kill_on(preemption.first_eviction_for(gang, self.namespace))
            await self.submit(gang)
            if await asyncio.to_thread(fired.wait, self.config.recovery_timeout):
                started = time.monotonic()
                self.scheduler.wait()
                evicted = preemption.evicted_for(self.scheduler, gang, self.namespace)
                landed = f"{evicted} evictions for {gang.name} answered at the kill ({filled})"
            else:
                self.scheduler.disarm()
                started = time.monotonic()
                self.scheduler.kill()
                landed = f"no eviction for {gang.name} in time ({filled}); killed anyway"
            self.scheduler.start()
        elif kind == "controller-kill-cron":
            name = cron_name = f"cron-{self.next_number():03d}"
            runs = [0]

            def second_run(line: LogLine) -> bool:
                if line.get("event") == "job created" and str(line.get("job", "")).startswith(
                    f"{self.namespace}/{name}-"
                ):
                    runs[0] += 1
                return runs[0] >= 2

            fired = self.controller.kill_on(second_run)
            await self._retry(
                lambda: self.api.create(CRONJOBS.collection_path(self.namespace), cron.cronjob_manifest(
                    name, self.namespace)),
                f"create CronJob {name}",
            )  # fmt: skip
            if await asyncio.to_thread(fired.wait, self.config.recovery_timeout):
                started = time.monotonic()
                self.controller.wait()
                landed = f"killed as {name} created its second run"
            else:
                self.controller.disarm()
                started = time.monotonic()
                self.controller.kill()
                landed = f"{name} made fewer than 2 runs in time; killed anyway"
            self.crons[name] = []
            self.controller.start()
        elif kind == "controller-kill-flow":
            flow = f"flow-{self.next_number():03d}"
            second = f"{self.namespace}/{flows.job_name(flow, flows.STEPS[1])}"
            fired = self.controller.kill_on(
                lambda line: line.get("event") == "job created" and line.get("job") == second
            )
            for body in flows.manifests(flow, self.namespace):
                kind_of = JOBFLOWS if body["kind"] == c.JOBFLOW_KIND else JOBTEMPLATES
                await self._retry(
                    lambda body=body, kind_of=kind_of: self.api.create(  # type: ignore[misc]
                        kind_of.collection_path(self.namespace), body
                    ),
                    f"create {body['kind']} {body['metadata']['name']}",
                )
            if await asyncio.to_thread(fired.wait, self.config.recovery_timeout):
                started = time.monotonic()
                self.controller.wait()
                landed = f"killed as {flow} created its step {flows.STEPS[1]}"
            else:
                self.controller.disarm()
                started = time.monotonic()
                self.controller.kill()
                landed = f"{flow} did not reach its step {flows.STEPS[1]} in time; killed anyway"
            self.flows.append(flow)
            self.controller.start()
        elif kind == "controller-kill-create":
            gang = JobPlan(f"createkill-{self._probes + 1:03d}", 16, priority=HIGH_PRIORITY, seconds=3.0)
            prefix = f"{self.namespace}/{gang.name}-"

            def first_create(line: LogLine) -> bool:
                return line.get("event") == "pod created" and str(line.get("pod", "")).startswith(prefix)

            fired = self.controller.kill_on(first_create)
            await self.submit(gang)
            if await asyncio.to_thread(fired.wait, self.config.recovery_timeout):
                started = time.monotonic()
                self.controller.wait()
                landed = f"{await self._pods_of(gang.name)} of {gang.size} pods created at the kill"
            else:
                self.controller.disarm()
                started = time.monotonic()
                self.controller.kill()
                landed = "no pod of the gang created in time; killed anyway"
            self.controller.start()
        elif kind == "apiserver-restart":
            started = time.monotonic()
            seconds = self.cluster.restart("kube-apiserver", hard=True)
            landed = f"API server gone {seconds:.1f}s"
        elif kind == "etcd-restart":
            started = time.monotonic()
            seconds = self.cluster.restart("etcd", hard=True, down_seconds=2.0)
            landed = f"etcd gone {seconds:.1f}s"
        elif kind == "watch-cut":
            started = time.monotonic()
            cut = await asyncio.to_thread(self.proxy.cut_watches)
            self.proxy.gone(4)
            await asyncio.sleep(1.0)
            cut += await asyncio.to_thread(self.proxy.cut_watches)
            landed = f"{cut} watches reset, the next 4 answered 410 Gone"
        elif kind == "webhook-down":
            started = time.monotonic()
            self.controller.kill()
            violations += await self._other_scheduler_unaffected()
            refused = await self._job_refused()
            landed = f"webhook down {self.config.outage_seconds:.0f}s; a Job create {refused}"
            await asyncio.sleep(max(0.0, self.config.outage_seconds - (time.monotonic() - started)))
            self.controller.start()
        elif kind == "slow-api":
            started = time.monotonic()
            self.proxy.misbehave(latency=0.2, error_rate=0.15)
            before = self.proxy.stats.injected_errors
            await asyncio.sleep(self.config.outage_seconds)
            self.proxy.misbehave()
            landed = f"{self.proxy.stats.injected_errors - before} answers 429/5xx, 200 ms added each"
        else:
            raise ValueError(f"unknown fault kind {kind!r}")
        recovery = await self._probe(started)
        if kind in CONTROLLER_AWAY:
            down = time.time() - (time.monotonic() - started)
            away = (down, down + (recovery if recovery is not None else self.config.recovery_timeout))
            for downtimes in self.crons.values():  # every CronJob alive then, not only this fault's
                downtimes.append(away)
        if cron_name is not None:
            landed += (
                f"; {await self._cron_runs_after_restart(cron_name, self.config.cron_runs)} runs by then"
            )
        # The probe's pod is created and bound by the new leaders, so the standby has written by now (its
        # log may lag the API by a moment).
        failover_s = await outcome.failover_s() if outcome is not None else None
        violations += await self.check_after_fault()
        record = FaultRecord(kind, at, recovery, landed, violations, failover_s)
        told = f"; failover {failover_s}s" if failover_s is not None else ""
        self.say(f"{kind}: recovered in {recovery}s{told} ({landed}); {len(violations)} violations")
        return record

    async def _other_scheduler_unaffected(self) -> list[str]:
        """With our webhook unreachable, a pod of another scheduler is still admitted and runs."""
        name = f"other-{self._probes + 1:03d}"
        node = sorted(n["metadata"]["name"] for n in await self._list(NODES))[0]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
               "spec": {"schedulerName": OTHER_SCHEDULER, "nodeName": node, "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
        try:
            await self.api.create(PODS.collection_path(self.namespace), pod)
        except ApiError as err:
            return [str(inv.Violation("other scheduler's pod refused", name, str(err)))]

        async def running() -> bool:
            got = await self.api.get(PODS.object_path(name, self.namespace))
            return (got.get("status") or {}).get("phase") == "Running"

        try:
            await self._wait(running, f"pod {name} Running", 30)
        except TimeoutError:
            return [str(inv.Violation("other scheduler's pod affected", name, "not Running within 30s"))]
        await self.api.delete(PODS.object_path(name, self.namespace))
        return []

    async def _job_refused(self) -> str:
        plan = JobPlan(f"refused-{self._probes + 1:03d}", 1, gpus=0)
        try:
            await self.api.create(JOBS.collection_path(self.namespace), job_manifest(plan, self.namespace))
        except (ApiError, *_RETRIED) as err:
            return f"refused ({str(err)[:80]})"
        self.plans[plan.name] = plan  # admitted without the webhook: it must still end as planned
        self.report.jobs_submitted += 1
        return "admitted"

    async def check_after_fault(self) -> list[str]:
        first = await self.read()
        await asyncio.sleep(self.config.settle_seconds)
        second = await self.read()
        found = [*inv.check(second), *inv.stuck(first, second)]
        new = [v for v in found if (v.invariant, v.subject) not in self._seen]
        self._seen.update((v.invariant, v.subject) for v in new)
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
            self.say(f"set up in {time.monotonic() - self._began:.1f}s")
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
                    record = await self.inject(kind)
                finally:
                    self._supervise(True)
                self.report.faults.append(record)
                self.report.violations += record.violations
            await workload
            await self.finish()
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

    async def _cron_runs_after_restart(self, name: str, runs: int = 4) -> int:
        """Let the CronJob fire past the restart (its runs are what is checked at the end)."""

        async def made() -> int:
            return len(cron.runs_of(await self._list(JOBS, self.namespace), name))

        with contextlib.suppress(TimeoutError):
            await self._wait(
                lambda: _at_least(made(), runs), f"{runs} runs of {name}", 6 * cron.EVERY_SECONDS
            )
        return await made()

    async def _flows_over(self) -> bool:
        listed = await self._list(JOBFLOWS, self.namespace)
        phases = {
            str(f["metadata"]["name"]): ((f.get("status") or {}).get("state") or {}).get("phase")
            for f in listed
        }
        return all(phases.get(flow) in FLOW_FINISHED_PHASES for flow in self.flows)

    async def _suspend_crons(self) -> None:
        """Stop the fault's CronJobs firing, so the run can end quiet."""
        for name in self.crons:
            await self._retry(
                lambda name=name: self.api.patch(  # type: ignore[misc]
                    CRONJOBS.object_path(name, self.namespace), {"spec": {"suspend": True}}
                ),
                f"suspend CronJob {name}",
            )

    async def finish(self) -> None:
        config = self.config
        await self._suspend_crons()
        expected = {name: str(plan.outcome.value) for name, plan in self.plans.items()}
        self.report.jobs_expected = expected
        self.say(f"waiting for {len(expected)} jobs to finish")

        async def all_final() -> bool:
            await self._track_finished()
            return all(n in self.finished for n, p in self.plans.items() if p.outcome != JobPhase.RUNNING)

        with contextlib.suppress(TimeoutError):
            await self._wait(all_final, "every job to finish", config.finish_timeout)
        with contextlib.suppress(TimeoutError):
            await self._wait(self._flows_over, "every JobFlow to end", config.finish_timeout)
        await asyncio.sleep(config.settle_seconds)  # the last status writes
        state = await self.read()
        final = inv.quiet(state, expected)
        final += inv.stuck(state, state)
        flows_of = {str(f["metadata"]["name"]): f for f in await self._list(JOBFLOWS, self.namespace)}
        created_lines = [
            line for c in self.controllers for _, lines in c.log_starts(b'"job created"') for line in lines
        ]
        for flow in self.flows:
            phase = str(
                (((flows_of.get(flow) or {}).get("status") or {}).get("state") or {}).get("phase") or ""
            )
            final += flows.flow_steps(flow, phase, state.jobs, created_lines, self.namespace)
        for name, downtimes in self.crons.items():
            runs = cron.runs_of(state.jobs, name)
            self.report.cron_runs[name] = len(runs)
            final += cron.cron_runs(runs, name, every=cron.EVERY_SECONDS, downtimes=downtimes)
        if config.ha:
            self.report.writes_judged, self.report.late_writes, by_non_leaders = (
                failover.writes_by_non_leaders(self)
            )
            self.report.lease_terms = sum(len(t) for t in self.leases.terms.values())
            final += by_non_leaders
        new = [v for v in final if (v.invariant, v.subject) not in self._seen]
        self.report.final_violations = [str(v) for v in new]
        lost = {v.subject for v in new if v.invariant in ("job lost", "wrong final phase", "work lost")}
        self.report.work_lost = len(lost)
        self.report.evictions = sum(1 for e in state.events if e.get("reason") == "Evict")
        self.report.pods_bound = sum(
            int(e.get("count") or 1) for e in state.events if e.get("reason") == "Scheduled"
        )

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
        self.report.wall_s = time.monotonic() - self._began
        self.report.load_average = os.getloadavg()


async def run_chaos(
    cluster: DevCluster, config: ChaosConfig, progress: Callable[[str], None] = lambda _: None
) -> Report:
    return await ChaosRun(cluster, config, progress).run()
