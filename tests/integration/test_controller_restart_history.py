"""A restarted controller over a long history of finished Jobs (Volcano's issue #5819 had 87,031): a new Job
gets its PodGroup at once, the history costs no API write, and a finished Job's TTL is still honoured."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from ctl_harness import Env, env, task, vcjob, wait_for

from benchmarks.benchlib.pool import each
from volcano_py.api import constants as c
from volcano_py.kube.client import ApiError
from volcano_py.kube.kinds import JOBS

pytestmark = pytest.mark.integration
__all__ = ["env"]

HISTORY = 1000
# A new Job's PodGroup after a restart over HISTORY finished Jobs: a few tenths of a second here. Before the
# Jobs left Kopf's start-up gate (whose cost grows with the square of the objects) it took some 5 s of CPU.
PODGROUP_WITHIN_S = 3.0


def _completed(at: datetime) -> dict[str, Any]:
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"status": {"state": {"phase": "Completed", "lastTransitionTime": stamp},
                       "conditions": [{"status": "Completed", "lastTransitionTime": stamp}],
                       "minAvailable": 1, "succeeded": 1, "version": 1}}  # fmt: skip


async def _finished_job(env: Env, name: str, at: datetime, **spec: Any) -> None:
    await env.create_job(vcjob(name, task("w", 1), minAvailable=1, **spec))
    await env.api.patch(JOBS.object_path(name, env.ns, "status"), _completed(at))


async def _versions(env: Env) -> dict[str, str]:
    listed = await env.api.get(JOBS.collection_path(env.ns))
    return {j["metadata"]["name"]: j["metadata"]["resourceVersion"] for j in listed["items"]}


async def _events_about_history(env: Env) -> list[str]:
    listed = await env.api.get(f"/api/v1/namespaces/{env.ns}/events")
    return sorted(
        f"{e['involvedObject'].get('name')}: {e.get('reason')} x{e.get('count', 1)}"
        for e in listed["items"]
        if str(e["involvedObject"].get("name", "")).startswith("done-")
    )


async def test_a_new_job_does_not_wait_behind_the_history_and_the_history_costs_no_write(env: Env) -> None:
    assert env.operator is not None
    await env.operator.stop()  # the history is made while no controller runs, then seen by one term
    finished_at = datetime.now(UTC) - timedelta(hours=1)
    await each([f"done-{i}" for i in range(HISTORY)], lambda name: _finished_job(env, name, finished_at), 32)
    env.start_operator()

    async def settled() -> dict[str, str] | None:  # the first term has been through the history
        before = await _versions(env)
        await asyncio.sleep(1.0)
        after = await _versions(env)
        return after if after == before else None

    await wait_for("the first term to go through the history", settled, 60)
    await env.operator.stop()
    history = await _versions(env)
    events = await _events_about_history(env)

    # While no controller runs: a new Job, and a finished one whose TTL has passed.
    await _finished_job(env, "expired", finished_at, ttlSecondsAfterFinished=60)
    created = await env.create_job(vcjob("fresh", task("w", 1), minAvailable=1))
    started = time.monotonic()
    env.start_operator()

    async def podgroup() -> bool:
        return any(
            ref.get("uid") == created["metadata"]["uid"]
            for pg in await env.podgroups()
            for ref in pg["metadata"].get("ownerReferences") or ()
        )

    await wait_for("the new Job's PodGroup", podgroup, 60)
    took = time.monotonic() - started
    assert took < PODGROUP_WITHIN_S, f"the new Job's PodGroup came {took:.1f}s after the restart"

    async def expired_deleted() -> bool:
        try:
            await env.api.get(JOBS.object_path("expired", env.ns))
        except ApiError as exc:
            return exc.not_found
        return False

    await wait_for("the expired finished Job to be deleted (ttlSecondsAfterFinished)", expired_deleted, 30)
    await env.wait_phase("fresh", "Running", "Completed")
    # By now the restarted term has been through the history (it is checked after the new Job, not never).
    after = await _versions(env)
    rewritten = sorted(name for name, version in history.items() if after.get(name) != version)
    assert rewritten == [], f"{len(rewritten)} finished Jobs written on restart, e.g. {rewritten[:5]}"
    assert await _events_about_history(env) == events
    pods = await env.api.get(f"/api/v1/namespaces/{env.ns}/pods", labelSelector=c.JOB_NAME_KEY)
    assert sorted({p["metadata"]["labels"][c.JOB_NAME_KEY] for p in pods["items"]}) == ["fresh"]
