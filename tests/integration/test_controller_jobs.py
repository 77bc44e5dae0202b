"""The Job controller against a real control plane, with the real scheduler binding the pods KWOK runs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import pytest
from ctl_harness import Env, env, task, vcjob, wait_for

from volcano_py.api import constants as c
from volcano_py.api.job_view import resolve_job
from volcano_py.controllers.job.podgroup import spec_patch
from volcano_py.controllers.job.worker import JobWorker
from volcano_py.controllers.runtime.context import ControllerContext, ControllerOptions
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.kube.client import STRATEGIC_MERGE_PATCH, ApiError
from volcano_py.kube.events import EventRecorder

pytestmark = pytest.mark.integration
__all__ = ["env"]


async def test_master_and_three_workers_run_to_completed(env: Env) -> None:
    created = await env.create_job(
        vcjob("mw", task("master", 1, complete_after="3s"), task("worker", 3, complete_after="3s"))
    )
    await env.wait_phase("mw", "Running")
    pods = await env.pods("mw")
    assert sorted(p["metadata"]["name"] for p in pods) == [
        "mw-master-0",
        "mw-worker-0",
        "mw-worker-1",
        "mw-worker-2",
    ]
    worker = next(p for p in pods if p["metadata"]["name"] == "mw-worker-1")
    assert worker["metadata"]["annotations"][c.KUBE_GROUP_NAME_KEY] == f"mw-{created['metadata']['uid']}"
    assert worker["metadata"]["annotations"][c.TASK_INDEX_KEY] == "1"
    assert worker["metadata"]["labels"][c.TASK_SPEC_KEY] == "worker"
    assert worker["spec"]["schedulerName"] == "volcano" and worker["spec"].get("nodeName")
    job = await env.wait_phase("mw", "Completed")
    status = job["status"]
    assert (status["succeeded"], status["failed"], status["running"]) == (4, 0, 0)
    assert status["taskStatusCount"] == {
        "master": {"phase": {"Succeeded": 1}},
        "worker": {"phase": {"Succeeded": 3}},
    }
    assert [cond["status"] for cond in status["conditions"]] == ["Pending", "Running", "Completed"]

    async def job_events() -> set[str] | None:
        listed = await env.api.get(
            f"/api/v1/namespaces/{env.ns}/events", fieldSelector="involvedObject.name=mw"
        )
        reasons = {e["reason"] for e in listed.get("items") or ()}
        return reasons if {"Running", "Completed"} <= reasons else None

    await wait_for("Running and Completed events on the Job", job_events, 20)


async def test_exit_code_policy_restarts_the_job_and_counts_a_retry(env: Env) -> None:
    policies = [{"exitCode": 3, "action": "RestartJob"}]
    await env.create_job(
        vcjob(
            "rj",
            task("master", 1),
            task("worker", 2, fail_after="1s", exit_code=3),
            policies=policies,
            maxRetry=5,
        )
    )

    async def restarted() -> bool:
        job = await env.job("rj")
        if ((job or {}).get("status") or {}).get("retryCount", 0) < 1:
            return False
        pods = await env.live_pods("rj")
        return any(p["metadata"]["annotations"].get(c.JOB_RETRY_COUNT_KEY) == "1" for p in pods)

    await wait_for("retryCount 1 and pods recreated with retry count 1", restarted, 60)
    job = await env.job("rj")
    assert job is not None and job["status"]["version"] >= 1


async def test_exhausted_max_retry_fails_the_job(env: Env) -> None:
    policies = [{"event": "PodFailed", "action": "RestartJob"}]
    await env.create_job(
        vcjob("mr", task("worker", 2, fail_after="1s", exit_code=1), policies=policies, maxRetry=2)
    )
    job = await env.wait_phase("mr", "Failed", seconds=90)
    assert job["status"]["retryCount"] == 2


async def test_pod_evicted_restarts_only_its_task(env: Env) -> None:
    evicted = [{"event": "PodEvicted", "action": "RestartTask"}]
    await env.create_job(vcjob("ev", task("ps", 1), task("worker", 2, policies=evicted)))
    await env.wait_phase("ev", "Running")
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await env.live_pods("ev")}
    await env.api.delete(f"/api/v1/namespaces/{env.ns}/pods/ev-worker-0")

    async def worker_restarted() -> dict[str, str] | None:
        now = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await env.live_pods("ev")}
        if (
            len(now) == 3
            and now["ev-worker-1"] != before["ev-worker-1"]
            and now["ev-worker-0"] != before["ev-worker-0"]
        ):
            return now
        return None

    after = await wait_for("both worker pods replaced", worker_restarted, 60)
    assert after["ev-ps-0"] == before["ev-ps-0"]
    job = await env.wait_phase("ev", "Running")
    assert job["status"]["retryCount"] == 1, await env.history()


async def test_min_success_completes_early(env: Env) -> None:
    await env.create_job(
        vcjob("ms", task("fast", 2, complete_after="1s"), task("slow", 2), minSuccess=2, minAvailable=4)
    )
    await env.wait_phase("ms", "Completed")

    async def slow_pods_gone() -> bool:
        return not [
            p for p in await env.live_pods("ms") if p["metadata"]["labels"][c.TASK_SPEC_KEY] == "slow"
        ]

    await wait_for("the unfinished pods to be released", slow_pods_gone, 30)


async def test_scale_up_adds_pods(env: Env) -> None:
    await env.create_job(vcjob("sc", task("worker", 2), minAvailable=2))
    await env.wait_phase("sc", "Running")
    patch = {"spec": {"tasks": [task("worker", 4)]}}
    await env.api.patch(f"/apis/batch.volcano.sh/v1alpha1/namespaces/{env.ns}/jobs/sc", patch)

    async def four_pods() -> list[str] | None:
        names = sorted(p["metadata"]["name"] for p in await env.live_pods("sc"))
        return names if len(names) == 4 else None

    assert await wait_for("4 worker pods", four_pods, 30) == [
        "sc-worker-0",
        "sc-worker-1",
        "sc-worker-2",
        "sc-worker-3",
    ]
    pg = (await env.podgroups())[0]
    assert pg["spec"]["minTaskMember"] == {"worker": 4}
    down = {"spec": {"minAvailable": 1, "tasks": [task("worker", 1)]}}
    await env.api.patch(f"/apis/batch.volcano.sh/v1alpha1/namespaces/{env.ns}/jobs/sc", down)

    async def one_pod() -> list[str] | None:
        names = sorted(p["metadata"]["name"] for p in await env.live_pods("sc"))
        return names if names == ["sc-worker-0"] else None

    await wait_for("scale down to worker-0 only", one_pod, 30)


async def test_podgroup_min_resources_carry_volcanos_quota_keys_and_the_job_runs(env: Env) -> None:
    both = {"cpu": "100m", "memory": "100Mi", "nvidia.com/gpu": "1"}
    tasks = [task("task-1", 1, min_available=1), task("task-2", 1, min_available=1)]
    for t in tasks:
        t["template"]["spec"]["containers"][0]["resources"] = {"requests": both, "limits": both}
    await env.create_job(vcjob("mr", *tasks))
    await env.wait_phase("mr", "Running")
    pg = (await env.podgroups())[0]
    assert pg["spec"]["minResources"] == {
        "count/pods": "2",
        "pods": "2",
        "cpu": "200m",
        "requests.cpu": "200m",
        "limits.cpu": "200m",
        "memory": "200Mi",
        "requests.memory": "200Mi",
        "limits.memory": "200Mi",
        "nvidia.com/gpu": "2",
        "requests.nvidia.com/gpu": "2",
    }


async def test_partition_policy_reaches_the_podgroup_and_the_pods_and_the_job_runs(env: Env) -> None:
    # Volcano's e2e "allocate work when job has subgroups (partitionPolicy) but no network topology".
    worker = task("worker", 2, min_available=2)
    worker["partitionPolicy"] = {"totalPartitions": 2, "partitionSize": 1, "minPartitions": 2}
    await env.create_job(vcjob("pp", worker))
    await env.wait_phase("pp", "Running")
    pods = {p["metadata"]["name"]: p["metadata"]["labels"] for p in await env.pods("pp")}
    assert {name: labels[c.TASK_PARTITION_ID_KEY] for name, labels in pods.items()} == {
        "pp-worker-0": "0",
        "pp-worker-1": "1",
    }
    pg = (await env.podgroups())[0]
    assert pg["spec"]["subGroupPolicy"] == [
        {
            "name": "worker",
            "subGroupSize": 1,
            "minSubGroups": 2,
            "labelSelector": {"matchLabels": {c.TASK_SPEC_KEY: "worker"}},
            "matchLabelKeys": [c.TASK_PARTITION_ID_KEY],
        }
    ]
    # What the API server stored (with its defaults) is what the controller wants: later syncs write nothing.
    job = await env.job("pp")
    assert job is not None and spec_patch(pg, resolve_job(job), {}) is None


async def test_ttl_deletes_the_finished_job(env: Env) -> None:
    await env.create_job(vcjob("ttl", task("worker", 1, complete_after="1s"), ttlSecondsAfterFinished=2))
    await env.wait_phase("ttl", "Completed")

    async def gone() -> bool:
        return await env.job("ttl") is None

    await wait_for("the job to be deleted 2s after it finished", gone, 30)


async def test_abort_then_resume_by_command(env: Env) -> None:
    created = await env.create_job(vcjob("cmd", task("worker", 2)))
    await env.wait_phase("cmd", "Running")
    await env.command("AbortJob", c.JOB_KIND, "cmd", created["metadata"]["uid"])
    await env.wait_phase("cmd", "Aborted")
    assert await env.live_pods("cmd") == []
    assert await env.commands() == []  # consumed: never executed twice
    await env.command("ResumeJob", c.JOB_KIND, "cmd", created["metadata"]["uid"])
    job = await env.wait_phase("cmd", "Running")
    assert job["status"]["retryCount"] == 1
    assert len(await env.live_pods("cmd")) == 2
    await asyncio.sleep(0)


async def test_svc_plugin_objects_live_as_long_as_the_job_runs(env: Env) -> None:
    await env.create_job(vcjob("pl", task("worker", 2, complete_after="3s"), plugins={"svc": [], "env": []}))
    job = await env.wait_phase("pl", "Running")
    assert job["status"]["controlledResources"] == {"plugin-svc": "svc", "plugin-env": "env"}
    service = await env.api.get(f"/api/v1/namespaces/{env.ns}/services/pl")
    assert service["spec"]["clusterIP"] == "None"
    pod = (await env.live_pods("pl"))[0]
    assert pod["spec"]["subdomain"] == "pl" and pod["spec"]["hostname"] == pod["metadata"]["name"]
    await env.wait_phase("pl", "Completed")

    service = f"/api/v1/namespaces/{env.ns}/services/pl"
    await wait_for("the plugin's Service to be released", _gone(env, service), 30)


async def test_pod_pending_too_long_aborts_the_job(env: Env) -> None:
    stuck = task("worker", 2)
    stuck["template"]["spec"]["nodeSelector"] = {"volcano-py.io/no-such-node": "true"}
    policies = [{"event": "PodPending", "timeout": "3s", "action": "AbortJob"}]
    await env.create_job(vcjob("pp", stuck, policies=policies, minAvailable=1))

    async def pods_exist() -> bool:
        return len(await env.pods("pp")) == 2

    await wait_for("the pods to be created (and stay Pending)", pods_exist, 30)
    await env.wait_phase("pp", "Aborted", seconds=30)


async def test_preemption_restarts_without_consuming_max_retry(env: Env) -> None:
    policies = [{"event": "PodEvicted", "action": "RestartJob"}]
    await env.create_job(vcjob("pe", task("worker", 2), policies=policies, maxRetry=1))
    await env.wait_phase("pe", "Running")
    victim = f"/api/v1/namespaces/{env.ns}/pods/pe-worker-0"
    # What a scheduler's preemption does: mark the pod as disrupted, then evict it.
    # With a transition time, as a scheduler writes it: without one, KCM's disruption controller takes the
    # condition for a stale one and flips it to False before the pod is gone.
    condition = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                 "message": "preempted by a higher-priority job",
                 "lastTransitionTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}  # fmt: skip
    await env.api.patch(f"{victim}/status", {"status": {"conditions": [condition]}}, STRATEGIC_MERGE_PATCH)
    await env.api.delete(victim)

    async def restarted() -> dict | None:
        job = await env.job("pe")
        status = (job or {}).get("status") or {}
        done = status.get("version", 0) >= 1 and status.get("state", {}).get("phase") == "Running"
        return status if done else None

    status = await wait_for("the job restarted and running again", restarted, 120)
    assert status["retryCount"] == 0  # maxRetry 1 would have failed the job had this counted


async def test_a_kill_never_reaches_a_successor_under_the_same_name(env: Env) -> None:
    """The Job controller kills the pod it read (by uid), not whatever now has its name: a restart's new pod
    is neither deleted in its predecessor's place nor read as evicted (which restarted its task twice)."""
    worker = JobWorker(
        ControllerContext(
            options=ControllerOptions(namespaces=(env.ns,), leader_elect=False),
            client=env.api,
            recorder=EventRecorder(env.api, component="test"),
            metrics=ControllerMetrics(),
        )
    )
    job = {**vcjob("succ", task("worker", 1)), "metadata": {"name": "succ", "namespace": env.ns}}
    spec = resolve_job(job)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "succ-worker-0"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
    path = f"/api/v1/namespaces/{env.ns}/pods"
    old = (await env.api.create(path, pod))["metadata"]["uid"]
    await env.api.delete(f"{path}/succ-worker-0", {"apiVersion": "v1", "kind": "DeleteOptions",
                                                   "gracePeriodSeconds": 0})  # fmt: skip

    gone = _gone(env, f"{path}/succ-worker-0")
    await wait_for("the first pod gone", gone, 30)
    new = (await env.api.create(path, pod))["metadata"]["uid"]

    await worker._kill_pod(spec, "succ-worker-0", old)
    left = await env.api.get(f"{path}/succ-worker-0")
    assert left["metadata"]["uid"] == new
    assert c.CONTROLLER_OUT_OF_SYNC_KEY not in (left["metadata"].get("annotations") or {})

    await worker._kill_pod(spec, "succ-worker-0", new)
    await wait_for("the successor killed once it is the pod read", gone, 30)


def _gone(env: Env, path: str) -> Callable[[], Awaitable[bool]]:
    """A probe for ``wait_for``: the object at ``path`` no longer exists."""

    async def probe() -> bool:
        try:
            await env.api.get(path)
        except ApiError as err:
            return err.not_found
        return False

    return probe
