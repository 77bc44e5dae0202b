"""A leader frozen past its lease wakes up and writes nothing: the fence (``kube.leader``) on a real cluster.

Scheduler A runs as a child process (a frozen process is the point, and only a signal freezes one), leads,
and is stopped with SIGSTOP right after its first bind of an eight-pod gang, the other seven queued in its
binder. Scheduler B, a standby in this process, takes the lease once it expires and binds them. A is then
woken with SIGCONT: without the fence, its queued binds go out at once, seconds after B took over.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_scheduler_binding import (  # type: ignore[import-not-found]
    api,
    create_gang,
    pods_by_name,
    pool,
    start_scheduler,
    wait_until,
)

from benchmarks.chaoslib import invariants as inv
from benchmarks.chaoslib.failover import ATTEMPTED_WRITES
from benchmarks.chaoslib.processes import Component, LogLine
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import LEASES
from volcano_py.kube.leader import LeaseTiming

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name

TIMING = LeaseTiming(lease_duration=3, renew_deadline=2.0, retry_period=0.5)


async def lease_term(api: KubeClient, namespace: str, name: str) -> inv.Term | None:
    try:
        return inv.term_of(await api.get(LEASES.object_path(name, namespace)))
    except ApiError as err:
        if err.not_found:
            return None
        raise


async def test_a_leader_frozen_past_its_lease_wakes_without_writing_and_stands_by(
    cluster: Any, api: KubeClient, namespace: str, pool: str, start_scheduler: Any, tmp_path: Path
) -> None:
    name, lease = f"vc-{pool}", f"lease-{uuid.uuid4().hex[:6]}"
    a = Component(
        "scheduler-a",
        [sys.executable, "-m", "volcano_py", "--log-level", "debug", "scheduler",
         "--kubeconfig", str(cluster.kubeconfig), "--scheduler-name", name, "--identity", "a",
         "--lease-namespace", namespace, "--lease-name", lease,
         "--leader-elect-lease-duration", f"{TIMING.lease_duration}s",
         "--leader-elect-renew-deadline", f"{TIMING.renew_deadline}s",
         "--leader-elect-retry-period", f"{TIMING.retry_period}s",
         "--schedule-period", "0.2", "--bind-concurrency", "1",
         "--metrics-host", "127.0.0.1", "--metrics-port", "0"],
        tmp_path / "scheduler-a.log",
    )  # fmt: skip
    a.start()
    terms: list[inv.Term] = []
    try:

        async def a_leads() -> bool:
            term = await lease_term(api, namespace, lease)
            return term is not None and term.holder == "a"

        await wait_until(a_leads, "A to take the lease", 60)
        term = await lease_term(api, namespace, lease)
        assert term is not None
        terms.append(term)
        b = await start_scheduler(
            name, leader_elect=True, identity="b", lease_namespace=namespace, lease_name=lease,
            lease_timing=TIMING,
        )  # fmt: skip

        def first_bind(line: LogLine) -> bool:
            return line.get("event") == "bound"

        frozen = a.freeze_on(first_bind)
        # A gang: A binds all eight in one cycle, one at a time, so seven are queued when it freezes.
        pods = await create_gang(api, namespace, "g", 8, name, pool, gpus=1)
        assert await asyncio.to_thread(frozen.wait, 60), "A bound nothing"
        froze_at = time.monotonic()

        async def b_leads() -> bool:
            term = await lease_term(api, namespace, lease)
            if term is not None and term.holder == "b":
                terms.append(term)
                return True
            return False

        await wait_until(b_leads, "B to take the lease from the frozen A", 30)
        took_over = time.monotonic() - froze_at

        async def all_bound() -> bool:
            current = await pods_by_name(api, namespace)
            return all(current[p]["spec"].get("nodeName") for p in pods)

        await wait_until(all_bound, "B to bind the rest", 30)
        await asyncio.sleep(1.0)
        woke, woke_at = a.log_offset(), time.time()
        a.resume()
        await asyncio.sleep(3.0)  # A's queued binds would have gone out by now
        after = a.log_lines(woke)
        # A bind sent before the freeze may be answered (and logged) after it: judged by when it went through
        # the fence.
        writes = [x for x in after if x.get("event") in ATTEMPTED_WRITES and float(x["checked"]) >= woke_at]
        assert writes == [], f"A sent binds after waking: {writes}"
        assert any(str(x.get("event")).startswith("fenced") for x in after), "A did not say it was fenced"
        assert a.alive, "A died instead of standing by"
        assert inv.writes_by_non_leaders(inv.writes_in_log(a.log_lines(), "a"), terms) == []
        assert b.scheduler.is_leader and took_over < TIMING.lease_duration + 6
        # Every pod bound once, where its Scheduled Event says.
        listing = await api.get(f"/api/v1/namespaces/{namespace}/events")
        state = inv.ApiState(
            pods=list((await pods_by_name(api, namespace)).values()), events=listing["items"]
        )
        assert inv.double_binds(state) == []
    finally:
        a.stop()
