"""``--job-watch kopf`` (an experiment kept to be measured again, docs/architecture.md): with Kopf's event
handlers feeding the Job controller, a Job runs as it does with the informers, and a restarted term waits
until Kopf has shown the Job's pods before it reconciles: it creates none twice."""

from __future__ import annotations

import pytest
from ctl_harness import Env, env, task, vcjob

from volcano_py.controllers.job.watch import KOPF_WATCH

pytestmark = pytest.mark.integration
__all__ = ["env"]


async def test_a_job_runs_through_kopf_and_a_restart_creates_no_pod_twice(env: Env) -> None:
    assert env.operator is not None
    await env.operator.stop()
    env.start_operator(job_watch=KOPF_WATCH)
    await env.create_job(
        vcjob("kw", task("master", 1, complete_after="8s"), task("worker", 2, complete_after="8s"))
    )
    await env.wait_phase("kw", "Running")
    first = {p["metadata"]["uid"] for p in await env.pods("kw")}
    assert len(first) == 3
    assert env.operator is not None
    await env.operator.stop()
    env.start_operator(job_watch=KOPF_WATCH)
    job = await env.wait_phase("kw", "Completed")
    assert {p["metadata"]["uid"] for p in await env.pods("kw")} == first
    status = job["status"]
    assert (status["succeeded"], status["failed"], status.get("retryCount", 0)) == (3, 0, 0)
