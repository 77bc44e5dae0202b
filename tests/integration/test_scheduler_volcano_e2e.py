"""What Volcano's own e2e suites check of its scheduler, through the real API: a conf without ``enqueue``,
pods held by scheduling gates, the Unschedulable Event on a PodGroup enqueue refuses.

Each test runs its own scheduler under its own name (and, where pods are placed, its own pool of nodes),
so other tests' objects change nothing asserted here.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from ctl_harness import Operator, task, vcjob, wait_for
from test_scheduler_binding import api, pool, start_scheduler  # type: ignore[import-not-found]

from volcano_py.api import constants as c
from volcano_py.kube.client import JSON_PATCH, ApiError, KubeClient
from volcano_py.kube.kinds import EVENTS, JOBS, PODGROUPS, PODS, QUEUES

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name

WITHOUT_ENQUEUE = """\
actions: "allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}]
"""


async def _ensure_default_queue(api: KubeClient) -> None:
    body = {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.QUEUE_KIND,
            "metadata": {"name": c.DEFAULT_QUEUE}, "spec": {"weight": 1, "reclaimable": True}}  # fmt: skip
    try:
        await api.create(QUEUES.collection_path(), body)
    except ApiError as exc:
        if not exc.conflict:
            raise


async def _podgroup_phases(api: KubeClient, ns: str) -> list[str]:
    listed = await api.get(PODGROUPS.collection_path(ns))
    return [str((pg.get("status") or {}).get("phase", "")) for pg in listed.get("items") or []]


async def _podgroup_events(api: KubeClient, ns: str, reason: str) -> list[dict[str, Any]]:
    listed = await api.get(EVENTS.collection_path(ns), fieldSelector=f"involvedObject.kind={c.PODGROUP_KIND}")
    return [e for e in listed.get("items") or [] if e.get("reason") == reason]


async def _podgroup_running(api: KubeClient, namespace: str, when: str, seconds: float) -> None:
    async def running() -> list[str] | None:
        phases = await _podgroup_phases(api, namespace)
        return phases if phases == ["Running"] else None

    await wait_for(f"the Job's PodGroup Running {when}", running, seconds)


async def test_a_conf_without_enqueue_still_starts_jobs(
    api: KubeClient, namespace: str, cluster: Any, start_scheduler: Any, tmp_path: Path
) -> None:
    # The Job controller creates pods only once the PodGroup is Inqueue; with no enqueue action in the conf,
    # allocate moves it there (Volcano's gang-eviction e2e conf is "allocate, backfill, gangreclaim, ...").
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(WITHOUT_ENQUEUE)
    name = f"vc-{uuid.uuid4().hex[:6]}"
    await _ensure_default_queue(api)
    await start_scheduler(name, scheduler_conf=str(conf))
    operator = Operator(str(cluster.kubeconfig), namespace)
    try:
        await api.create(JOBS.collection_path(namespace), vcjob("noq", task("w", 2), schedulerName=name))

        await _podgroup_running(api, namespace, "under a conf without enqueue", 60)
    finally:
        await operator.stop()


async def test_a_gang_of_gated_pods_waits_unschedulable_and_runs_once_ungated(
    api: KubeClient, namespace: str, cluster: Any, start_scheduler: Any
) -> None:
    # Volcano's e2e (schedulingaction/allocate.go): a Job whose pods carry a scheduling gate is
    # Unschedulable (an Event on its PodGroup), and runs once the gates are removed.
    name = f"vc-{uuid.uuid4().hex[:6]}"
    await _ensure_default_queue(api)
    await start_scheduler(name)
    operator = Operator(str(cluster.kubeconfig), namespace)
    try:
        gated = task("w", 2)
        gated["template"]["spec"]["schedulingGates"] = [{"name": "example.com/g1"}]
        await api.create(JOBS.collection_path(namespace), vcjob("gated", gated, schedulerName=name))

        async def told() -> list[dict[str, Any]]:
            return await _podgroup_events(api, namespace, c.PODGROUP_CONDITION_UNSCHEDULABLE)

        events = await wait_for("an Unschedulable Event on the gated Job's PodGroup", told, 30)
        assert "held by spec.schedulingGates" in events[0]["message"], events[0]["message"]
        pods = (await api.get(PODS.collection_path(namespace)))["items"]
        assert len(pods) == 2 and not any(p["spec"].get("nodeName") for p in pods)
        assert await _podgroup_phases(api, namespace) == ["Inqueue"]

        for pod in pods:
            path = PODS.object_path(pod["metadata"]["name"], namespace)
            await api.patch(path, [{"op": "remove", "path": "/spec/schedulingGates"}], JSON_PATCH)

        await _podgroup_running(api, namespace, "once the gates are removed", 30)
    finally:
        await operator.stop()


async def test_a_job_enqueue_refuses_gets_an_unschedulable_event_on_its_podgroup(
    api: KubeClient, namespace: str, cluster: Any, start_scheduler: Any
) -> None:
    # Volcano's e2e (schedulingbase/job_scheduling.go) waits for this Event on the PodGroup of a Job that
    # stays Pending: its pods are never created, so it is the only Event there is.
    name = f"vc-{uuid.uuid4().hex[:6]}"
    await _ensure_default_queue(api)
    await start_scheduler(name)
    operator = Operator(str(cluster.kubeconfig), namespace)
    try:
        huge = vcjob("huge", task("w", 2, cpu="100000"), schedulerName=name)
        await api.create(JOBS.collection_path(namespace), huge)

        async def told() -> list[dict[str, Any]]:
            return await _podgroup_events(api, namespace, c.PODGROUP_CONDITION_UNSCHEDULABLE)

        events = await wait_for("an Unschedulable Event on the refused Job's PodGroup", told, 30)
        assert events[0]["type"] == "Warning"
        assert events[0]["message"].startswith("NotInqueueable: "), events[0]["message"]

        async def pending() -> list[str] | None:
            phases = await _podgroup_phases(api, namespace)
            return phases if phases == ["Pending"] else None

        await wait_for("the refused PodGroup's phase written as Pending", pending, 10)
    finally:
        await operator.stop()
