"""Faults that need a standby: the leading scheduler or controller SIGKILLed, or frozen past its lease.

A killed leader is started again at once under a new identity (a new pod of its Deployment), so the standby
takes the lease once it expires. A frozen one (SIGSTOP) keeps its sockets and believes it still leads; it is
woken (SIGCONT) a second after the standby has taken the lease, and must then write nothing: the fence in
``volcano_py.kube.leader`` drops what it had queued. The failover time is from the kill or freeze to the
standby's first write as leader (its first bind, or its first pod created).

``LeaseWatch`` records each lease's terms (holder and acquireTime, as the API shows them) for the
write-by-a-non-leader invariant (``invariants.writes_by_non_leaders``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import aiohttp

from benchmarks.chaoslib import invariants as inv
from benchmarks.chaoslib import preemption
from benchmarks.chaoslib.processes import Component, LogLine
from benchmarks.chaoslib.workload import HIGH_PRIORITY, JobPlan
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import LEASES

if TYPE_CHECKING:
    from benchmarks.chaoslib.driver import ChaosRun

SCHEDULER_LEASE = "chaos-scheduler"
CONTROLLER_LEASE = "chaos-controller"
# Log lines of a write attempted (answered or refused), each with its WriteStamp: none may go through the
# fence after a frozen leader wakes (one sent before it froze may be answered after).
ATTEMPTED_WRITES = frozenset(
    {
        "bound",
        "bind failed; pod returns to the queue",
        "evicted",
        "eviction failed",
        "pod created",
        "pod deleted",
        "job created",
    }
)
POLL_SECONDS = 0.2


@dataclass(slots=True)
class LeaseWatch:
    """Polls the leader Leases; keeps each one's terms in order and its current holder."""

    terms: dict[str, list[inv.Term]] = field(default_factory=dict)
    missed: int = 0  # term changes that happened between two polls (leaseTransitions jumped by more than 1)
    _transitions: dict[str, int] = field(default_factory=dict)
    _task: asyncio.Task[None] | None = None

    def start(self, api: KubeClient, namespace: str, names: Iterable[str]) -> None:
        self._task = asyncio.create_task(self._poll(api, namespace, tuple(names)))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def holder(self, name: str) -> str:
        terms = self.terms.get(name) or []
        return terms[-1].holder if terms else ""

    async def _poll(self, api: KubeClient, namespace: str, names: tuple[str, ...]) -> None:
        while True:
            for name in names:
                with contextlib.suppress(
                    ApiError, aiohttp.ClientError, TimeoutError, ConnectionError, OSError
                ):
                    self.observe(name, await api.get(LEASES.object_path(name, namespace)))
            await asyncio.sleep(POLL_SECONDS)

    def observe(self, name: str, lease: inv.Obj) -> None:
        term = inv.term_of(lease)
        if term is None:
            return
        transitions = int((lease.get("spec") or {}).get("leaseTransitions") or 0)
        seen = self.terms.setdefault(name, [])
        if not seen or seen[-1] != term:
            if seen and term.holder and transitions > self._transitions.get(name, transitions) + 1:
                self.missed += 1
            seen.append(term)
        self._transitions[name] = transitions


# How long a standby's first write, already seen in the API, may take to show in its log.
LOG_WAIT_SECONDS = 5.0


@dataclass(slots=True)
class Outcome:
    started: float  # time.monotonic() when the kill or freeze happened
    landed: str
    standby: Component  # watched for its first write as leader
    violations: list[str] = field(default_factory=list)

    async def failover_s(self, wait: float = LOG_WAIT_SECONDS) -> float | None:
        """Kill or freeze -> the standby's first write, once it has made one (then it stops watching). The
        write is seen in the API before its log line is read (the probe polls the pod; the standby logs the
        bind once it is answered), so the line is waited for, ``wait`` seconds at most."""
        await asyncio.to_thread(self.standby.watched.wait, wait)
        at = self.standby.watched_at
        self.standby.watch_for(lambda _line: False)
        return round(at - self.started, 2) if at is not None else None


def _the_other(group: list[Component], leader: Component) -> Component:
    return next(c for c in group if c is not leader)


async def inject(run: ChaosRun, kind: str) -> Outcome:
    on_scheduler = kind.startswith("leader-")  # leader-kill-cycle, -bind, -evict, leader-freeze
    group = run.schedulers if on_scheduler else run.controllers
    leader = run.scheduler if on_scheduler else run.controller
    assert leader is not None
    standby = _the_other(group, leader)
    lease = SCHEDULER_LEASE if on_scheduler else CONTROLLER_LEASE
    write = "bound" if on_scheduler else "pod created"
    freeze = kind.endswith("freeze")
    standby.watch_for(lambda line: line.get("event") == write)
    number = run.next_number()
    filled = ""
    if kind == "leader-kill-evict":
        filled, nodes = await preemption.fill(run, number)
        plan = preemption.preemptor(number, nodes)
        trigger = preemption.first_eviction_for(plan, run.namespace)
    elif kind == "leader-kill-cycle":
        plan = JobPlan(f"lcyclekill-{number:03d}", 4, priority=HIGH_PRIORITY, seconds=3.0)

        def trigger(line: LogLine) -> bool:
            return line.get("event") == "cycle" and int(line.get("binds") or 0) > 0

    else:
        prefix = {"leader-kill-bind": "lbindkill", "leader-freeze": "lfreeze"}.get(kind, "lcreate")
        plan = JobPlan(f"{prefix}-{number:03d}", 16, priority=HIGH_PRIORITY, seconds=3.0)
        pods = f"{run.namespace}/{plan.name}-"

        def trigger(line: LogLine) -> bool:
            return line.get("event") == write and str(line.get("pod", "")).startswith(pods)

    fired = leader.freeze_on(trigger) if freeze else leader.kill_on(trigger)
    await run.submit(plan)
    if await asyncio.to_thread(fired.wait, run.config.recovery_timeout):
        started = time.monotonic()
        if kind == "leader-kill-cycle":
            moment = f"after a cycle of {leader.fired_line_field('binds')} binds"
        elif kind == "leader-kill-evict":
            moment = f"at its first eviction for {plan.name}"
        else:
            moment = f"at its first {write} of {plan.name}"
        landed = f"{leader.identity} {'frozen' if freeze else 'killed'} {moment}"
    else:
        leader.disarm()
        started = time.monotonic()
        leader.freeze() if freeze else leader.kill()
        landed = (
            f"{leader.identity}: no {write} of {plan.name} in time; {'frozen' if freeze else 'killed'} anyway"
        )
    if kind == "leader-kill-evict":
        landed += f" ({filled}; {preemption.evicted_for(leader, plan, run.namespace)} evictions answered)"
    outcome = Outcome(started, landed, standby)
    if not freeze:
        leader.wait()
        leader.start()  # a new pod of the Deployment, under a new identity: it stands by
    else:
        await _wake_after_takeover(run, leader, standby, lease, outcome)
    return outcome


async def _true(value: bool) -> bool:
    return value


async def _wake_after_takeover(
    run: ChaosRun, leader: Component, standby: Component, lease: str, outcome: Outcome
) -> None:
    """Keep ``leader`` frozen until the standby holds the lease (and a second more), wake it, and check it
    wrote nothing after waking."""
    try:
        await run._wait(
            lambda: _true(run.leases.holder(lease) == standby.identity),
            f"{standby.identity} to take {lease}",
            run.config.recovery_timeout,
        )
        took = time.monotonic() - outcome.started
        await asyncio.sleep(1.0)
    except TimeoutError:
        took = None
    frozen_for = time.monotonic() - outcome.started
    woke, woke_at = leader.log_offset(), time.time()
    leader.resume()
    # Long enough for anything it had queued to go out, and for its renewal round to find the lease gone.
    await asyncio.sleep(2 * run.config.lease.retry_period + 1.0)
    after = leader.log_lines(woke)
    attempted = [line for line in after if line.get("event") in ATTEMPTED_WRITES]
    stale = [line for line in attempted if float(line.get("checked") or woke_at) >= woke_at]
    # Let through before the freeze and sent after the wake-up: the window no client-side fence closes.
    late = sum(
        1
        for line in attempted
        if float(line.get("checked") or woke_at) < woke_at <= float(line.get("sent") or 0)
    )
    fenced = sum(1 for line in after if str(line.get("event", "")).startswith("fenced"))
    stepped_down = any(
        line.get("event") in ("lost leadership", "lost the lease; standing by") for line in after
    )
    if stale:
        outcome.violations.append(
            str(
                inv.Violation(
                    "write after waking", leader.identity, f"{len(stale)} writes, first: {stale[0]}"
                )
            )
        )
    if took is None:
        outcome.violations.append(
            str(inv.Violation("no takeover", lease, f"{standby.identity} did not take it while frozen"))
        )
    outcome.landed += (
        f"; frozen {frozen_for:.1f}s, the standby led after {took:.1f}s"
        if took is not None
        else f"; frozen {frozen_for:.1f}s, the standby never led"
    )
    outcome.landed += f"; woke: {'fenced' if fenced else 'nothing queued'}, " + (
        "stepped down" if stepped_down else "did not say it stepped down"
    )
    if late:
        outcome.landed += f"; {late} writes went through the fence just before the freeze and out after it"


def leader_of(run: ChaosRun, lease: str, group: list[Component]) -> Component | None:
    holder = run.leases.holder(lease)
    return next((c for c in group if c.alive and not c.frozen and c.identity == holder), None)


def writes_by_non_leaders(run: ChaosRun) -> tuple[int, int, list[inv.Violation]]:
    """Every write any process logged, against the terms of the lease it writes under: how many were judged,
    how many went out late (see ``Write.late``), the violations."""
    judged, late, found = 0, 0, []
    for lease, group in ((SCHEDULER_LEASE, run.schedulers), (CONTROLLER_LEASE, run.controllers)):
        writes = [
            w
            for c in group
            for identity, lines in c.log_starts(b'"sent"')
            for w in inv.writes_in_log(lines, identity)
        ]
        judged += len(writes)
        late += sum(1 for w in writes if w.late())
        found += inv.writes_by_non_leaders(writes, run.leases.terms.get(lease, []))
    return judged, late, found
