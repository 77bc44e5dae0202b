"""The end of a chaos run: once every Job is submitted, the faults' CronJobs are suspended, every Job and
JobFlow is waited for, and the quiet cluster is checked: final phases as planned, no work lost, no gang left
part-bound, PodGroup and Queue statuses agreeing with the pods (once the scheduler has caught up, within
``status_timeout``), each JobFlow's steps in order, each CronJob's runs against its controller's downtimes,
and (with a standby) no write by a non-leader."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from benchmarks.chaoslib import cron, failover, flows
from benchmarks.chaoslib import invariants as inv
from volcano_py.api.batch import JobPhase
from volcano_py.api.flow import FLOW_FINISHED_PHASES
from volcano_py.kube.kinds import CRONJOBS, JOBFLOWS

if TYPE_CHECKING:
    from benchmarks.chaoslib.driver import ChaosRun


async def _flows_over(run: ChaosRun) -> bool:
    listed = await run._list(JOBFLOWS, run.namespace)
    phases = {
        str(f["metadata"]["name"]): ((f.get("status") or {}).get("state") or {}).get("phase") for f in listed
    }
    return all(phases.get(flow) in FLOW_FINISHED_PHASES for flow in run.flows)


async def _suspend_crons(run: ChaosRun) -> None:
    """Stop the fault's CronJobs firing, so the run can end quiet."""
    for name in run.crons:
        await run._retry(
            lambda name=name: run.api.patch(  # type: ignore[misc]
                CRONJOBS.object_path(name, run.namespace), {"spec": {"suspend": True}}
            ),
            f"suspend CronJob {name}",
        )


def eventual(state: inv.ApiState) -> list[inv.Violation]:
    """The statuses the scheduler writes after the pods have moved (PodGroup counts, Queue allocations): right
    only once it has seen the last pod finish and its writes have landed, which on a loaded machine, or after
    a fault that failed a write, can be seconds after everything else is quiet."""
    return [*inv.podgroup_status(state), *inv.queue_allocated(state)]


async def caught_up(
    read: Callable[[], Awaitable[inv.ApiState]], within: float, every: float = 0.5
) -> tuple[inv.ApiState, float | None]:
    """The API read once its statuses agree with its pods (``eventual``), and how many seconds that took; or
    as read after ``within`` seconds, with whatever is still wrong (and None). A status the scheduler never
    writes is still reported: only how long it has to land is bounded, not whether it must."""
    began = time.monotonic()
    while True:
        waited = time.monotonic() - began  # when the reading began: 0 for the first
        state = await read()
        if not eventual(state):
            return state, round(waited, 2)
        if time.monotonic() - began >= within:
            return state, None
        await asyncio.sleep(every)


async def finish(run: ChaosRun) -> None:
    config = run.config
    await _suspend_crons(run)
    expected = {name: str(plan.outcome.value) for name, plan in run.plans.items()}
    run.report.jobs_expected = expected
    run.say(f"waiting for {len(expected)} jobs to finish")

    async def all_final() -> bool:
        await run.track_finished()
        return all(n in run.finished for n, p in run.plans.items() if p.outcome != JobPhase.RUNNING)

    with contextlib.suppress(TimeoutError):
        await run._wait(all_final, "every job to finish", config.finish_timeout)
    with contextlib.suppress(TimeoutError):
        await run._wait(lambda: _flows_over(run), "every JobFlow to end", config.finish_timeout)
    state, run.report.statuses_caught_up_s = await caught_up(run.read, config.status_timeout)
    final = inv.quiet(state, expected)
    final += inv.stuck(state, state)
    flows_of = {str(f["metadata"]["name"]): f for f in await run._list(JOBFLOWS, run.namespace)}
    created_lines = [
        line for c in run.controllers for _, lines in c.log_starts(b'"job created"') for line in lines
    ]
    for flow in run.flows:
        phase = str((((flows_of.get(flow) or {}).get("status") or {}).get("state") or {}).get("phase") or "")
        final += flows.flow_steps(flow, phase, state.jobs, created_lines, run.namespace)
    for name, downtimes in run.crons.items():
        runs = cron.runs_of(state.jobs, name)
        run.report.cron_runs[name] = len(runs)
        final += cron.cron_runs(runs, name, every=cron.EVERY_SECONDS, downtimes=downtimes)
    if config.ha:
        run.report.writes_judged, run.report.late_writes, by_non_leaders = failover.writes_by_non_leaders(run)
        run.report.lease_terms = sum(len(t) for t in run.leases.terms.values())
        final += by_non_leaders
    new = [v for v in final if (v.invariant, v.subject) not in run.seen]
    run.report.final_violations = [str(v) for v in new]
    lost = {v.subject for v in new if v.invariant in ("job lost", "wrong final phase", "work lost")}
    run.report.work_lost = len(lost)
    run.report.evictions = sum(1 for e in state.events if e.get("reason") == "Evict")
    run.report.pods_bound = sum(
        int(e.get("count") or 1) for e in state.events if e.get("reason") == "Scheduled"
    )
