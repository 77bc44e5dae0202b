"""A Queue and what is submitted to it, in one ``kubectl apply -f``: admitted, and it runs.

This is how Volcano users and their CI create a team's queue and its first Job (Volcano's own
hierarchical-jobs example applies its queues, then at once its jobs). Admission sees the new Queue before
the queue controller has written its state; such a queue is about to be opened and must not refuse the Job.
Our webhooks run in-process for objects carrying this module's label; the operator and the scheduler run
as in the other controller tests.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from admission_harness import serving_admission
from ctl_harness import Env, env, task, vcjob, wait_for

from volcano_py.api import constants as c
from volcano_py.devcluster import DevCluster
from volcano_py.kube.kinds import PODGROUPS, PODS, QUEUES

pytestmark = pytest.mark.integration
__all__ = ["env"]

# A letter first: a hex run such as "1e5432" is written unquoted by PyYAML and read as a number by kubectl.
RUN = "r" + uuid.uuid4().hex[:6]
LABEL = {"volcano-py.test/queue-then-submit": RUN}
TRIES = 20


def _labelled(obj: dict[str, Any]) -> dict[str, Any]:
    obj.setdefault("metadata", {}).setdefault("labels", {}).update(LABEL)
    return obj


def _queue(name: str, parent: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": 1}
    if parent:
        spec["parent"] = parent
    return _labelled(
        {
            "apiVersion": c.SCHEDULING_API_VERSION,
            "kind": c.QUEUE_KIND,
            "metadata": {"name": name},
            "spec": spec,
        }
    )


def _job(name: str, queue: str) -> dict[str, Any]:
    body = vcjob(name, task("worker", 1))
    body["spec"]["queue"] = queue
    return _labelled(body)


def _podgroup_and_pod(name: str, queue: str) -> list[dict[str, Any]]:
    podgroup = {
        "apiVersion": c.SCHEDULING_API_VERSION,
        "kind": c.PODGROUP_KIND,
        "metadata": {"name": name},
        "spec": {"minMember": 1, "queue": queue},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {c.KUBE_GROUP_NAME_KEY: name}},
        "spec": {
            "schedulerName": c.SCHEDULER_NAME,
            "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
        },
    }
    return [_labelled(podgroup), pod]


@pytest.fixture
async def admitted_env(
    env: Env, cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Env]:
    with serving_admission(cluster, tmp_path_factory.mktemp("webhook-certs"), LABEL):
        try:
            yield env
        finally:
            await _delete_queues(cluster, env)


async def _delete_queues(cluster: DevCluster, env: Env) -> None:
    """The run's queues, children before parents (a parent with children may not be deleted)."""
    for kind in ("jobs.batch.volcano.sh", "podgroups.scheduling.volcano.sh", "pods"):
        await asyncio.to_thread(cluster.kubectl, "delete", kind, "--all", "-n", env.ns, "--wait=false")
    listed = await env.api.get(QUEUES.collection_path(), labelSelector=f"{next(iter(LABEL))}={RUN}")
    queues = listed.get("items") or []
    parents = {(q.get("spec") or {}).get("parent") for q in queues}
    for group in ([q for q in queues if q["metadata"]["name"] not in parents], queues):
        for queue in group:
            await asyncio.to_thread(
                cluster.kubectl, "delete", "queue", queue["metadata"]["name"], "--ignore-not-found",
                "--wait=false", check=False,
            )  # fmt: skip


async def _apply_each(
    cluster: DevCluster, env: Env, tmp: Path, files: list[list[dict[str, Any]]]
) -> list[str]:
    """``kubectl apply -f`` each file in turn; the errors kubectl printed (one per refused file)."""
    refused: list[str] = []
    for i, objects in enumerate(files):
        path = tmp / f"apply-{i}.yaml"
        for obj in objects:
            if obj["kind"] != c.QUEUE_KIND:
                obj["metadata"].setdefault("namespace", env.ns)
        path.write_text(yaml.safe_dump_all(objects))
        done = await asyncio.to_thread(cluster.kubectl, "apply", "-f", str(path), check=False)
        if done.returncode != 0:
            refused.append(done.stderr.strip())
    return refused


async def _jobs_running(env: Env, names: list[str]) -> None:
    async def running() -> list[str] | None:
        phases = {name: await env.phase(name) for name in names}
        return None if any(phase != "Running" for phase in phases.values()) else names

    await wait_for(f"all {len(names)} jobs to run", running, 90)


async def test_a_file_with_a_queue_and_a_job_in_it_is_admitted_and_runs(
    admitted_env: Env, cluster: DevCluster, tmp_path: Path
) -> None:
    names = [f"qj-{RUN}-{i}" for i in range(TRIES)]
    files = [[_queue(name), _job(name, name)] for name in names]
    refused = await _apply_each(cluster, admitted_env, tmp_path, files)
    assert refused == [], f"{len(refused)} of {TRIES} refused; first: {refused[:1]}"
    await _jobs_running(admitted_env, names)


async def test_a_file_with_a_parent_a_child_queue_and_a_job_is_admitted_and_runs(
    admitted_env: Env, cluster: DevCluster, tmp_path: Path
) -> None:
    names = [f"qc-{RUN}-{i}" for i in range(TRIES)]
    files = [[_queue(f"{name}-p"), _queue(name, parent=f"{name}-p"), _job(name, name)] for name in names]
    refused = await _apply_each(cluster, admitted_env, tmp_path, files)
    assert refused == [], f"{len(refused)} of {TRIES} refused; first: {refused[:1]}"
    await _jobs_running(admitted_env, names)


async def test_a_file_with_a_queue_and_a_podgroup_in_it_is_admitted_and_its_pod_bound(
    admitted_env: Env, cluster: DevCluster, tmp_path: Path
) -> None:
    env = admitted_env
    names = [f"qp-{RUN}-{i}" for i in range(TRIES)]
    files = [[_queue(name), *_podgroup_and_pod(name, name)] for name in names]
    refused = await _apply_each(cluster, env, tmp_path, files)
    assert refused == [], f"{len(refused)} of {TRIES} refused; first: {refused[:1]}"

    async def placed() -> dict[str, str] | None:
        pods = (await env.api.get(PODS.collection_path(env.ns))).get("items") or []
        bound = {p["metadata"]["name"] for p in pods if (p.get("spec") or {}).get("nodeName")}
        groups = (await env.api.get(PODGROUPS.collection_path(env.ns))).get("items") or []
        phases = {g["metadata"]["name"]: (g.get("status") or {}).get("phase", "") for g in groups}
        return phases if set(names) <= bound and all(phases.get(n) == "Running" for n in names) else None

    await wait_for(f"all {TRIES} pods bound and their PodGroups Running", placed, 90)
    queues = {
        q["metadata"]["name"]: q for q in (await env.api.get(QUEUES.collection_path())).get("items", [])
    }
    assert {(queues[n].get("status") or {}).get("state") for n in names} == {"Open"}
