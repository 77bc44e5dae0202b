"""The faults a chaos run injects without a standby, one function per kind (``FAULTS``), and the round each
fault makes (``inject``): hit, then submit a one-pod probe Job and time its bind, then check the invariants.

Each kind aims at the moment it means to test where it can (a scheduler killed right after a cycle, between a
gang's binds, as an eviction is answered; a controller as it creates a gang's pods, a CronJob's second run, a
JobFlow's second step), watching the component's log for that line, and falls back to a kill at once when
the moment does not come in time. The faults that need a standby are ``failover``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from benchmarks.chaoslib import cron, failover, flows, preemption
from benchmarks.chaoslib import invariants as inv
from benchmarks.chaoslib.config import CONTROLLER_AWAY, HA_FAULT_KINDS, RETRIED
from benchmarks.chaoslib.processes import Component, LogLine
from benchmarks.chaoslib.report import FaultRecord
from benchmarks.chaoslib.workload import HIGH_PRIORITY, JobPlan, job_manifest
from volcano_py.api import constants as c
from volcano_py.kube.client import ApiError
from volcano_py.kube.kinds import CRONJOBS, JOBFLOWS, JOBS, JOBTEMPLATES, NODES, PODS

if TYPE_CHECKING:
    from benchmarks.chaoslib.driver import ChaosRun

OTHER_SCHEDULER = "chaos-other"  # pods of a scheduler nobody runs here; bound by nodeName directly


@dataclass(slots=True)
class Hit:
    started: float  # time.monotonic() when the fault began
    landed: str  # what it hit
    violations: list[str] = field(default_factory=list)
    cron: str | None = None  # the CronJob it made, whose runs after the restart are counted


async def inject(run: ChaosRun, kind: str) -> FaultRecord:
    if run.config.ha:
        await run.pick_leaders()
    assert run.scheduler is not None and run.controller is not None and run.proxy is not None
    at = round(time.monotonic() - run.began, 1)
    outcome = None
    if kind in HA_FAULT_KINDS:
        outcome = await failover.inject(run, kind)
        hit = Hit(outcome.started, outcome.landed, list(outcome.violations))
    elif kind in FAULTS:
        hit = await FAULTS[kind](run)
    else:
        raise ValueError(f"unknown fault kind {kind!r}")
    started, landed, violations = hit.started, hit.landed, hit.violations
    recovery = await probe(run, started)
    if kind in CONTROLLER_AWAY:
        down = time.time() - (time.monotonic() - started)
        away = (down, down + (recovery if recovery is not None else run.config.recovery_timeout))
        for downtimes in run.crons.values():  # every CronJob alive then, not only this fault's
            downtimes.append(away)
    if hit.cron is not None:
        landed += f"; {await cron_runs_after_restart(run, hit.cron, run.config.cron_runs)} runs by then"
    # The probe's pod is created and bound by the new leaders, so the standby has written by now (its
    # log may lag the API by a moment).
    failover_s = await outcome.failover_s() if outcome is not None else None
    violations += await run.check_after_fault()
    record = FaultRecord(kind, at, recovery, landed, violations, failover_s)
    told = f"; failover {failover_s}s" if failover_s is not None else ""
    run.say(f"{kind}: recovered in {recovery}s{told} ({landed}); {len(violations)} violations")
    return record


async def probe(run: ChaosRun, started: float) -> float | None:
    """Submit a one-pod Job and return seconds from ``started`` until its pod is bound."""
    run.probes += 1
    plan = JobPlan(f"probe-{run.probes:03d}", 1, priority=HIGH_PRIORITY, seconds=1.0, gpus=0)
    await run.submit(plan)
    selector = f"{c.JOB_NAME_KEY}={plan.name}"
    deadline = started + run.config.recovery_timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(ApiError, *RETRIED):
            pods = (await run.api.get(PODS.collection_path(run.namespace), labelSelector=selector))["items"]
            if any((p.get("spec") or {}).get("nodeName") for p in pods):
                return round(time.monotonic() - started, 2)
        await asyncio.sleep(0.1)
    return None


async def _gang_bound(run: ChaosRun, job: str) -> int:
    selector = f"{c.JOB_NAME_KEY}={job}"
    pods = await run._list(PODS, run.namespace, labelSelector=selector)
    return sum(1 for p in pods if (p.get("spec") or {}).get("nodeName"))


async def _pods_of(run: ChaosRun, job: str) -> int:
    return len(await run._list(PODS, run.namespace, labelSelector=f"{c.JOB_NAME_KEY}={job}"))


async def _at_least(count: Awaitable[int], wanted: int) -> bool:
    return await count >= wanted


async def cron_runs_after_restart(run: ChaosRun, name: str, runs: int = 4) -> int:
    """Let the CronJob fire past the restart (its runs are what is checked at the end)."""

    async def made() -> int:
        return len(cron.runs_of(await run._list(JOBS, run.namespace), name))

    with contextlib.suppress(TimeoutError):
        await run._wait(lambda: _at_least(made(), runs), f"{runs} runs of {name}", 6 * cron.EVERY_SECONDS)
    return await made()


async def _killed(
    component: Component, fired: threading.Event, within: float, pause: Callable[[], float] | None = None
) -> tuple[float, bool]:
    """Kill ``component`` on its armed log line (``fired``), or at once (after ``pause()`` seconds, if given)
    when the line does not come within ``within`` seconds: when it died, and whether on the line."""
    if await asyncio.to_thread(fired.wait, within):
        started = time.monotonic()
        component.wait()
        return started, True
    component.disarm()
    if pause is not None:
        await asyncio.sleep(pause())
    started = time.monotonic()
    component.kill()
    return started, False


# -- the scheduler killed ------------------------------------------------------------------------------------


async def scheduler_kill_cycle(run: ChaosRun) -> Hit:
    # Right after a cycle decided binds and handed them to the binder (its "cycle" line), or, if no
    # cycle binds anything meanwhile, at a random moment.
    scheduler = run.scheduler
    assert scheduler is not None
    fired = scheduler.kill_on(lambda line: line.get("event") == "cycle")
    await run.submit(JobPlan(f"cyclekill-{run.probes + 1:03d}", 4, priority=HIGH_PRIORITY, seconds=3.0))
    started, on_line = await _killed(
        scheduler, fired, 10.0, lambda: run.rng.uniform(0, run.config.schedule_period)
    )
    if on_line:
        landed = f"after a cycle of {scheduler.fired_line_field('binds')} binds"
    else:
        landed = "a random moment (no cycle bound anything for 10s)"
    scheduler.start()
    return Hit(started, landed)


async def _kill_at_gangs_first(
    run: ChaosRun, component: Component, word: str, event: str
) -> tuple[JobPlan, float, bool]:
    """Submit a 16-pod gang and kill ``component`` on its first ``event`` line for one of the gang's pods:
    the gang, when the component died, and whether on that line."""
    gang = JobPlan(f"{word}-{run.probes + 1:03d}", 16, priority=HIGH_PRIORITY, seconds=3.0)
    prefix = f"{run.namespace}/{gang.name}-"

    def first(line: LogLine) -> bool:
        return line.get("event") == event and str(line.get("pod", "")).startswith(prefix)

    fired = component.kill_on(first)
    await run.submit(gang)
    started, on_line = await _killed(component, fired, run.config.recovery_timeout)
    return gang, started, on_line


async def scheduler_kill_bind(run: ChaosRun) -> Hit:
    scheduler = run.scheduler
    assert scheduler is not None
    gang, started, on_line = await _kill_at_gangs_first(run, scheduler, "bindkill", "bound")
    if on_line:
        bound = await _gang_bound(run, gang.name)
        landed = f"{bound} of {gang.size} bound at the kill"
    else:
        landed = "the gang was not bound in time; killed anyway"
    scheduler.start()
    return Hit(started, landed)


async def scheduler_kill_evict(run: ChaosRun) -> Hit:
    scheduler = run.scheduler
    assert scheduler is not None
    number = run.next_number()
    filled, nodes = await preemption.fill(run, number)
    gang = preemption.preemptor(number, nodes)
    fired = scheduler.kill_on(preemption.first_eviction_for(gang, run.namespace))
    await run.submit(gang)
    started, on_line = await _killed(scheduler, fired, run.config.recovery_timeout)
    if on_line:
        evicted = preemption.evicted_for(scheduler, gang, run.namespace)
        landed = f"{evicted} evictions for {gang.name} answered at the kill ({filled})"
    else:
        landed = f"no eviction for {gang.name} in time ({filled}); killed anyway"
    scheduler.start()
    return Hit(started, landed)


# -- the controller killed -----------------------------------------------------------------------------------


async def controller_kill_cron(run: ChaosRun) -> Hit:
    controller = run.controller
    assert controller is not None
    name = f"cron-{run.next_number():03d}"
    runs = [0]

    def second_run(line: LogLine) -> bool:
        if line.get("event") == "job created" and str(line.get("job", "")).startswith(
            f"{run.namespace}/{name}-"
        ):
            runs[0] += 1
        return runs[0] >= 2

    fired = controller.kill_on(second_run)
    await run._retry(
        lambda: run.api.create(
            CRONJOBS.collection_path(run.namespace), cron.cronjob_manifest(name, run.namespace)
        ),
        f"create CronJob {name}",
    )
    started, on_line = await _killed(controller, fired, run.config.recovery_timeout)
    if on_line:
        landed = f"killed as {name} created its second run"
    else:
        landed = f"{name} made fewer than 2 runs in time; killed anyway"
    run.crons[name] = []
    controller.start()
    return Hit(started, landed, cron=name)


async def controller_kill_flow(run: ChaosRun) -> Hit:
    controller = run.controller
    assert controller is not None
    flow = f"flow-{run.next_number():03d}"
    second = f"{run.namespace}/{flows.job_name(flow, flows.STEPS[1])}"
    fired = controller.kill_on(lambda line: line.get("event") == "job created" and line.get("job") == second)
    for body in flows.manifests(flow, run.namespace):
        kind_of = JOBFLOWS if body["kind"] == c.JOBFLOW_KIND else JOBTEMPLATES
        await run._retry(
            lambda body=body, kind_of=kind_of: run.api.create(  # type: ignore[misc]
                kind_of.collection_path(run.namespace), body
            ),
            f"create {body['kind']} {body['metadata']['name']}",
        )
    started, on_line = await _killed(controller, fired, run.config.recovery_timeout)
    if on_line:
        landed = f"killed as {flow} created its step {flows.STEPS[1]}"
    else:
        landed = f"{flow} did not reach its step {flows.STEPS[1]} in time; killed anyway"
    run.flows.append(flow)
    controller.start()
    return Hit(started, landed)


async def controller_kill_create(run: ChaosRun) -> Hit:
    controller = run.controller
    assert controller is not None
    gang, started, on_line = await _kill_at_gangs_first(run, controller, "createkill", "pod created")
    if on_line:
        landed = f"{await _pods_of(run, gang.name)} of {gang.size} pods created at the kill"
    else:
        landed = "no pod of the gang created in time; killed anyway"
    controller.start()
    return Hit(started, landed)


# -- the control plane ---------------------------------------------------------------------------------------


async def apiserver_restart(run: ChaosRun) -> Hit:
    started = time.monotonic()
    seconds = run.cluster.restart("kube-apiserver", hard=True)
    return Hit(started, f"API server gone {seconds:.1f}s")


async def etcd_restart(run: ChaosRun) -> Hit:
    started = time.monotonic()
    seconds = run.cluster.restart("etcd", hard=True, down_seconds=2.0)
    return Hit(started, f"etcd gone {seconds:.1f}s")


async def watch_cut(run: ChaosRun) -> Hit:
    proxy = run.proxy
    assert proxy is not None
    started = time.monotonic()
    cut = await asyncio.to_thread(proxy.cut_watches)
    proxy.gone(4)
    await asyncio.sleep(1.0)
    cut += await asyncio.to_thread(proxy.cut_watches)
    return Hit(started, f"{cut} watches reset, the next 4 answered 410 Gone")


async def webhook_down(run: ChaosRun) -> Hit:
    controller = run.controller
    assert controller is not None
    started = time.monotonic()
    controller.kill()
    violations = await _other_scheduler_unaffected(run)
    refused = await _job_refused(run)
    landed = f"webhook down {run.config.outage_seconds:.0f}s; a Job create {refused}"
    await asyncio.sleep(max(0.0, run.config.outage_seconds - (time.monotonic() - started)))
    controller.start()
    return Hit(started, landed, violations)


async def slow_api(run: ChaosRun) -> Hit:
    proxy = run.proxy
    assert proxy is not None
    started = time.monotonic()
    proxy.misbehave(latency=0.2, error_rate=0.15)
    before = proxy.stats.injected_errors
    await asyncio.sleep(run.config.outage_seconds)
    proxy.misbehave()
    return Hit(started, f"{proxy.stats.injected_errors - before} answers 429/5xx, 200 ms added each")


async def _other_scheduler_unaffected(run: ChaosRun) -> list[str]:
    """With our webhook unreachable, a pod of another scheduler is still admitted and runs."""
    name = f"other-{run.probes + 1:03d}"
    node = sorted(n["metadata"]["name"] for n in await run._list(NODES))[0]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"schedulerName": OTHER_SCHEDULER, "nodeName": node, "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
    try:
        await run.api.create(PODS.collection_path(run.namespace), pod)
    except ApiError as err:
        return [str(inv.Violation("other scheduler's pod refused", name, str(err)))]

    async def running() -> bool:
        got = await run.api.get(PODS.object_path(name, run.namespace))
        return (got.get("status") or {}).get("phase") == "Running"

    try:
        await run._wait(running, f"pod {name} Running", 30)
    except TimeoutError:
        return [str(inv.Violation("other scheduler's pod affected", name, "not Running within 30s"))]
    await run.api.delete(PODS.object_path(name, run.namespace))
    return []


async def _job_refused(run: ChaosRun) -> str:
    plan = JobPlan(f"refused-{run.probes + 1:03d}", 1, gpus=0)
    try:
        await run.api.create(JOBS.collection_path(run.namespace), job_manifest(plan, run.namespace))
    except (ApiError, *RETRIED) as err:
        return f"refused ({str(err)[:80]})"
    run.plans[plan.name] = plan  # admitted without the webhook: it must still end as planned
    run.report.jobs_submitted += 1
    return "admitted"


FAULTS: dict[str, Callable[[ChaosRun], Awaitable[Hit]]] = {
    "scheduler-kill-cycle": scheduler_kill_cycle,
    "scheduler-kill-bind": scheduler_kill_bind,
    "scheduler-kill-evict": scheduler_kill_evict,
    "controller-kill-create": controller_kill_create,
    "controller-kill-cron": controller_kill_cron,
    "controller-kill-flow": controller_kill_flow,
    "apiserver-restart": apiserver_restart,
    "etcd-restart": etcd_restart,
    "watch-cut": watch_cut,
    "webhook-down": webhook_down,
    "slow-api": slow_api,
}
