"""The chaos suite, short: each fault kind once during a steady workload, and nothing lost.

Two schedulers and two controllers elect leaders, so a killed or frozen leader's standby takes over and a
frozen one that wakes must write nothing. One run, to stay within CI's time: the kill kinds that restart the
only process of a run without election (``scheduler-kill-*``, ``controller-kill-create``) are the long form's
(``benchmarks/chaos.py``; ``docs/reliability.md`` has its numbers); here their leader-* counterparts run.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from benchmarks.chaoslib.config import FAULT_KINDS, HA_FAULT_KINDS, ChaosConfig
from benchmarks.chaoslib.driver import run_chaos
from volcano_py.devcluster import DevCluster
from volcano_py.kube.leader import LeaseTiming

pytestmark = [pytest.mark.chaos, pytest.mark.integration]


def work_dir(tmp_path: Path, name: str) -> Path:
    """The processes' logs: under $CHAOS_LOGS when set (kept after the run), else the test's temp dir."""
    kept = os.environ.get("CHAOS_LOGS")
    return Path(kept) / name if kept else tmp_path


def say(message: str) -> None:
    print(f"[chaos {time.strftime('%H:%M:%S')}] {message}", file=sys.__stderr__, flush=True)


# In a run with standbys, these kill kinds of a run without election would only repeat the leader-* ones.
REPEATED_BY_LEADER_KINDS = {
    "scheduler-kill-cycle",
    "scheduler-kill-bind",
    "scheduler-kill-evict",
    "controller-kill-create",
}
CI_FAULTS = tuple(k for k in FAULT_KINDS if k not in REPEATED_BY_LEADER_KINDS) + HA_FAULT_KINDS


async def test_each_fault_once_with_standbys_loses_nothing_and_a_woken_leader_writes_nothing(
    chaos_cluster: DevCluster, tmp_path: Path
) -> None:
    config = ChaosConfig(
        work_dir=work_dir(tmp_path, "every-fault"),
        jobs=6,
        in_flight=4,
        rounds=1,
        max_gang=32,
        faults=CI_FAULTS,
        ha=True,
        lease=LeaseTiming(3, 2.0, 0.5),
        settle_seconds=2.5,
        quiet_seconds=1.0,
        outage_seconds=3.0,
        finish_timeout=150,
        cron_runs=3,
    )
    report = await run_chaos(chaos_cluster, config, say)
    summary = report.summary()
    say(json.dumps(summary))
    logs = f"(logs in {config.work_dir})"
    assert sorted(summary["faults"]) == sorted(CI_FAULTS)
    unrecovered = [f.kind for f in report.faults if f.recovery_s is None]
    assert unrecovered == [], f"no bind after {unrecovered} {logs}"
    assert summary["violations"] == [], logs
    assert summary["work_lost"] == 0, logs
    # The webhook fault really took our admission away, and a pod of another scheduler went through anyway.
    (webhook,) = [f for f in report.faults if f.kind == "webhook-down"]
    assert "refused" in webhook.landed, webhook.landed
    # Each leader killed or frozen was followed by its standby's writes; every write was judged against the
    # lease's terms; a frozen leader was woken after the takeover.
    failovers = [f for f in report.faults if f.kind in HA_FAULT_KINDS]
    assert all(f.failover_s is not None for f in failovers), [f.landed for f in failovers]
    assert summary["writes_judged"] > 0 and summary["lease_terms"] >= 2 + len(HA_FAULT_KINDS)
    for frozen in (f for f in failovers if f.kind.endswith("freeze")):
        assert "the standby led after" in frozen.landed, frozen.landed
    # The CronJob fired across its controller's restart, and its runs were checked.
    assert min(summary["cron_runs"].values()) >= 3, summary["cron_runs"]
