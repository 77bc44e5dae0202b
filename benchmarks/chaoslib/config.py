"""What a chaos run does: the fault kinds it can inject (``FAULT_KINDS``; with a standby, ``HA_FAULT_KINDS``)
and its settings (``ChaosConfig``: the workload's size, the rounds, the lease timing, how long each wait)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from volcano_py.cli.up import UP_CONF
from volcano_py.kube.leader import LeaseTiming

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

# What a request meets while the API server restarts or the fault proxy cuts it: retried, as a client would.
RETRIED = (aiohttp.ClientError, ConnectionError, TimeoutError, OSError)


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
    # How long the final check waits for PodGroup and Queue statuses to agree with the pods: the scheduler
    # writes them after the fact, seconds later on a loaded machine or after a fault failed a write.
    status_timeout: float = 30.0
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
