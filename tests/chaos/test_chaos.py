"""The chaos suite, short: every fault kind once during a steady workload, and nothing lost.

The long form with figures is ``benchmarks/chaos.py``; ``docs/reliability.md`` has its numbers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks.chaoslib.driver import FAULT_KINDS, ChaosConfig, run_chaos
from volcano_py.devcluster import DevCluster

pytestmark = [pytest.mark.chaos, pytest.mark.integration]


def say(message: str) -> None:
    print(f"[chaos] {message}", file=sys.__stderr__, flush=True)


async def test_every_fault_once_loses_nothing_and_breaks_no_invariant(
    chaos_cluster: DevCluster, tmp_path: Path
) -> None:
    config = ChaosConfig(
        work_dir=tmp_path,
        jobs=14,
        in_flight=4,
        rounds=1,
        max_gang=32,
        settle_seconds=2.5,
        quiet_seconds=1.0,
        outage_seconds=3.0,
        finish_timeout=150,
    )
    report = await run_chaos(chaos_cluster, config, say)
    summary = report.summary()
    say(json.dumps(summary))
    logs = f"(logs in {tmp_path})"
    assert sorted(summary["faults"]) == sorted(FAULT_KINDS)
    unrecovered = [f.kind for f in report.faults if f.recovery_s is None]
    assert unrecovered == [], f"no bind after {unrecovered} {logs}"
    assert summary["violations"] == [], logs
    assert summary["work_lost"] == 0, logs
    # The webhook fault really took our admission away, and a pod of another scheduler went through anyway.
    (webhook,) = [f for f in report.faults if f.kind == "webhook-down"]
    assert "refused" in webhook.landed, webhook.landed
