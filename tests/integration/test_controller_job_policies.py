"""Lifecycle policies Volcano admits and this controller must carry out: admitted by our webhook (served
in-process for this module's Jobs), then acted on by the controller on a real control plane."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from admission_harness import AdmissionServer, serving_admission
from ctl_harness import Env, env, task, vcjob, wait_for

from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import JSON_PATCH, ApiError

pytestmark = pytest.mark.integration
__all__ = ["env"]

LABEL = {"volcano-py.test/job-policies": uuid.uuid4().hex[:6]}


@pytest.fixture(scope="module")
def admission(cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdmissionServer]:
    with serving_admission(cluster, tmp_path_factory.mktemp("webhook-certs"), LABEL) as server:
        yield server


def _admitted(job: dict[str, Any]) -> dict[str, Any]:
    job["metadata"]["labels"] = dict(LABEL)
    return job


async def test_restart_partition_replaces_only_the_evicted_pods_partition(
    admission: AdmissionServer, env: Env
) -> None:
    # The webhook is in the path: a policy it refuses does not reach the API server.
    internal = task("worker", 1, policies=[{"event": "PodEvicted", "action": "SyncJob"}])
    with pytest.raises(ApiError, match="invalid policy action"):
        await env.create_job(_admitted(vcjob("refused", internal)))
    worker = task("worker", 4, policies=[{"event": "PodEvicted", "action": "RestartPartition"}])
    worker["partitionPolicy"] = {"totalPartitions": 2, "partitionSize": 2}
    await env.create_job(_admitted(vcjob("rp", worker)))
    await env.wait_phase("rp", "Running")
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await env.live_pods("rp")}
    await env.api.delete(f"/api/v1/namespaces/{env.ns}/pods/rp-worker-2")

    async def partition_one_replaced() -> dict[str, str] | None:
        now = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await env.live_pods("rp")}
        fresh = len(now) == 4 and all(now[n] != before[n] for n in ("rp-worker-2", "rp-worker-3"))
        return now if fresh else None

    after = await wait_for("the pods of partition 1 replaced", partition_one_replaced, 60)
    assert [after[n] == before[n] for n in ("rp-worker-0", "rp-worker-1")] == [True, True]
    job = await env.wait_phase("rp", "Running")
    assert job["status"]["retryCount"] == 1, await env.history()


async def test_job_updated_policy_restarts_the_job_on_a_scale_up(
    admission: AdmissionServer, env: Env
) -> None:
    policies = [{"event": "JobUpdated", "action": "RestartJob"}]
    await env.create_job(_admitted(vcjob("ju", task("worker", 2), minAvailable=2, policies=policies)))
    await env.wait_phase("ju", "Running")
    before = {p["metadata"]["uid"] for p in await env.live_pods("ju")}
    # Only the replicas change: what Volcano's webhook lets an update change.
    patch = [{"op": "replace", "path": "/spec/tasks/0/replicas", "value": 3}]
    await env.api.patch(f"/apis/batch.volcano.sh/v1alpha1/namespaces/{env.ns}/jobs/ju", patch, JSON_PATCH)

    async def restarted() -> dict[str, Any] | None:
        job = await env.job("ju")
        uids = {p["metadata"]["uid"] for p in await env.live_pods("ju")}
        done = job and job["status"].get("retryCount") == 1 and job["status"]["state"]["phase"] == "Running"
        return job if done and len(uids) == 3 and not uids & before else None

    job = await wait_for("a restart with three new pods", restarted, 60)
    assert job["status"]["version"] >= 1
