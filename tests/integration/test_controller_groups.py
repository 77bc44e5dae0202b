"""PodGroups for plain workloads, queue closing, and restarting the operator in the middle of its work."""

from __future__ import annotations

import uuid

import pytest
from ctl_harness import Env, env, task, vcjob, wait_for

from volcano_py.api import constants as c
from volcano_py.devcluster import COMPLETE_AFTER
from volcano_py.kube.client import STRATEGIC_MERGE_PATCH
from volcano_py.kube.kinds import PODS, QUEUES

pytestmark = pytest.mark.integration
__all__ = ["env"]


async def test_batch_v1_job_with_volcano_scheduler_completes_through_its_podgroup(env: Env) -> None:
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "annotations": {c.VOLCANO_GROUP_MIN_MEMBER_KEY: "2"}},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "template": {
                "metadata": {"annotations": {COMPLETE_AFTER: "2s"}},
                "spec": {
                    "schedulerName": "volcano",
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "pi", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}
                    ],
                },
            },
        },
    }
    created = await env.api.create(f"/apis/batch/v1/namespaces/{env.ns}/jobs", body)
    pg_name = f"podgroup-{created['metadata']['uid']}"

    async def grouped() -> list[dict] | None:
        pgs = [pg for pg in await env.podgroups() if pg["metadata"]["name"] == pg_name]
        return pgs or None

    pg = (await wait_for(f"PodGroup {pg_name}", grouped, 30))[0]
    assert pg["spec"]["minMember"] == 2

    async def complete() -> bool:
        job = await env.api.get(f"/apis/batch/v1/namespaces/{env.ns}/jobs/pi")
        return (job.get("status") or {}).get("succeeded") == 2

    await wait_for("the batch/v1 Job to succeed", complete, 60)
    pods = (await env.api.get(f"/api/v1/namespaces/{env.ns}/pods", labelSelector="job-name=pi"))["items"]
    assert {p["metadata"]["annotations"][c.KUBE_GROUP_NAME_KEY] for p in pods} == {pg_name}


async def test_closing_a_queue_with_a_running_job_goes_closing_then_closed(env: Env) -> None:
    queue = f"q-{uuid.uuid4().hex[:6]}"
    await env.ensure_queue(queue)
    try:
        await env.create_job(vcjob("qj", task("worker", 2, complete_after="4s"), queue=queue))
        await env.wait_phase("qj", "Running")

        async def counted_running() -> bool:
            status = (await env.api.get(QUEUES.object_path(queue))).get("status") or {}
            return status.get("running") == 1 and status.get("state") == "Open"

        await wait_for(f"queue {queue} to count its Running PodGroup", counted_running, 20)
        await env.command("CloseQueue", c.QUEUE_KIND, queue)

        async def state(wanted: str) -> bool:
            return ((await env.api.get(QUEUES.object_path(queue))).get("status") or {}).get("state") == wanted

        await wait_for(f"queue {queue} Closing", lambda: state("Closing"), 20)
        await env.wait_phase("qj", "Completed")
        await wait_for(f"queue {queue} Closed", lambda: state("Closed"), 30)
    finally:
        await env.api.delete(QUEUES.object_path(queue))


async def test_operator_killed_while_creating_100_pods_leaves_exactly_100(env: Env) -> None:
    await env.create_job(vcjob("big", task("worker", 100, cpu="10m"), minAvailable=1))

    async def some_pods() -> int:
        n = len(await env.pods("big"))
        return n if n >= 5 else 0

    first = await wait_for("the first pods", some_pods, 60)
    assert env.operator is not None
    await env.operator.stop()
    stopped_at = len(await env.pods("big"))
    env.start_operator()

    async def hundred() -> list[str] | None:
        pods = await env.pods("big")
        return [p["metadata"]["name"] for p in pods] if len(pods) >= 100 else None

    names = await wait_for("100 pods", hundred, 90)
    assert sorted(names) == sorted(f"big-worker-{i}" for i in range(100))
    assert first <= stopped_at <= 100
    job = await env.wait_phase("big", "Running")
    assert job["status"]["pending"] + job["status"]["running"] == 100


async def test_closing_a_parent_queue_closes_its_children_and_opening_reopens_them(env: Env) -> None:
    parent, child = f"p-{uuid.uuid4().hex[:6]}", f"c-{uuid.uuid4().hex[:6]}"
    await env.ensure_queue(parent)
    await env.ensure_queue(child, parent=parent)

    async def states(wanted: tuple[str, str]) -> bool:
        got = []
        for name in (parent, child):
            got.append(((await env.api.get(QUEUES.object_path(name))).get("status") or {}).get("state"))
        return tuple(got) == wanted

    try:
        await wait_for("both queues Open", lambda: states(("Open", "Open")), 20)
        await env.command("CloseQueue", c.QUEUE_KIND, parent)
        await wait_for("parent and child Closed", lambda: states(("Closed", "Closed")), 20)
        marked = (await env.api.get(QUEUES.object_path(child)))["metadata"]["annotations"]
        assert marked["volcano.sh/closed-by-parent"] == "true"
        await env.command("OpenQueue", c.QUEUE_KIND, parent)
        await wait_for("parent and child Open again", lambda: states(("Open", "Open")), 20)
    finally:
        for name in (child, parent):
            await env.api.delete(QUEUES.object_path(name))


async def test_a_deployment_rollout_leaves_one_podgroup(env: Env) -> None:
    # Volcano's e2e "PodGroup's Count change with Deployment's Request change": the new ReplicaSet gets its
    # own PodGroup, the old one (kept at zero replicas for rollback) gives its group back.
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d-1"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "d-1"}},
            "template": {
                "metadata": {"labels": {"app": "d-1"}},
                "spec": {"schedulerName": "volcano", "containers": [container]},
            },
        },
    }
    path = f"/apis/apps/v1/namespaces/{env.ns}/deployments"
    await env.api.create(path, body)

    async def rolled_out() -> list[str] | None:
        d = await env.api.get(f"{path}/d-1")
        status = d.get("status") or {}
        done = status.get("observedGeneration") == d["metadata"]["generation"] and (
            status.get("updatedReplicas"),
            status.get("availableReplicas"),
            status.get("replicas"),
        ) == (2, 2, 2)
        names = sorted(pg["metadata"]["name"] for pg in await env.podgroups())
        return names if done and len(names) == 1 else None

    (first,) = await wait_for("the deployment ready with one PodGroup", rolled_out, 60)
    patch = {
        "spec": {
            "template": {"spec": {"containers": [{**container, "resources": {"requests": {"cpu": "50m"}}}]}}
        }
    }
    await env.api.patch(f"{path}/d-1", patch, STRATEGIC_MERGE_PATCH)
    (second,) = await wait_for("the rollout done and only the new PodGroup left", rolled_out, 60)
    assert second != first


async def test_plain_pods_made_while_the_controller_was_down_get_their_podgroups(env: Env) -> None:
    # A restarted controller lists our pods' metadata only and reads whole just those still without a group.
    assert env.operator is not None
    await env.operator.stop()
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}
    for name in ("plain-0", "plain-1"):
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"schedulerName": "volcano", "containers": [container]},
        }
        await env.api.create(PODS.collection_path(env.ns), body)
    env.start_operator()

    async def grouped() -> dict[str, str] | None:
        listed = await env.api.get(PODS.collection_path(env.ns))
        groups = {
            p["metadata"]["name"]: (p["metadata"].get("annotations") or {}).get(c.KUBE_GROUP_NAME_KEY, "")
            for p in listed.get("items") or ()
        }
        names = {pg["metadata"]["name"] for pg in await env.podgroups()}
        return groups if len(groups) == 2 and all(g in names for g in groups.values()) else None

    groups = await wait_for("both pods annotated with a PodGroup that exists", grouped, 60)
    podgroups = {pg["metadata"]["name"]: pg for pg in await env.podgroups()}
    assert podgroups[groups["plain-0"]]["spec"]["minResources"]["cpu"] == "100m"
    assert len(set(groups.values())) == 2  # one group per ownerless pod
