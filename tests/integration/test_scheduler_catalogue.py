"""Volcano's catalogue plugins through the real API: what a user sees with ``kubectl`` when a conf enables
resourcequota, sla, pdb and nodegroup. Each test has its own scheduler name, namespace and node pool."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_scheduler_binding import (  # type: ignore[import-not-found]
    GROUP_KEY,
    POOL_LABEL,
    api,
    events_for,
    pod_manifest,
    pods_by_name,
    pool,
    start_scheduler,
    wait_until,
)

from volcano_py.api import constants as c
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import (
    PODDISRUPTIONBUDGETS,
    PODGROUPS,
    PODS,
    PRIORITY_CLASSES,
    QUEUES,
    RESOURCEQUOTAS,
)
from volcano_py.scheduler.core import EVERY_VOLCANO_NAME_CONF

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name

CONF = """\
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
  - name: pdb
- plugins:
  - name: overcommit
  - name: predicates
  - name: proportion
  - name: resourcequota
  - name: nodegroup
    arguments: {strict: false}
  - name: nodeorder
"""


@pytest.fixture
def conf(tmp_path: Path) -> str:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(CONF)
    return str(path)


def _podgroup(
    name: str, min_cpu: str, *, queue: str = "default", annotations: dict[str, str] | None = None
) -> Any:
    return {
        "apiVersion": c.SCHEDULING_API_VERSION,
        "kind": c.PODGROUP_KIND,
        "metadata": {"name": name, "annotations": dict(annotations or {})},
        "spec": {"minMember": 1, "queue": queue, "minResources": {"cpu": min_cpu}},
    }


async def _podgroup_status(api: KubeClient, ns: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = await api.get(PODGROUPS.object_path(name, ns))
    return found.get("status") or {}


async def _unschedulable_message(api: KubeClient, ns: str, name: str) -> str:
    conditions = (await _podgroup_status(api, ns, name)).get("conditions") or []
    return " ".join(str(x.get("message")) for x in conditions if x.get("type") == "Unschedulable")


async def test_resourcequota_holds_back_the_job_over_quota_and_names_the_quota(
    api: KubeClient, namespace: str, start_scheduler: Any, conf: str
) -> None:
    await api.create(
        RESOURCEQUOTAS.collection_path(namespace),
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "team"},
         "spec": {"hard": {"requests.cpu": "2"}}},
    )  # fmt: skip
    await start_scheduler(f"vc-rq-{uuid.uuid4().hex[:6]}", scheduler_conf=conf)
    await api.create(PODGROUPS.collection_path(namespace), _podgroup("small", "1"))
    await api.create(PODGROUPS.collection_path(namespace), _podgroup("big", "4"))

    async def small_admitted() -> bool:
        return (await _podgroup_status(api, namespace, "small")).get("phase") == "Inqueue"

    await wait_until(small_admitted, "the PodGroup within the quota to be Inqueue", 30)

    async def big_refused() -> str:
        return await _unschedulable_message(api, namespace, "big")

    message = await wait_until(big_refused, "the PodGroup over the quota to say why", 30)
    assert "resource quota team insufficient on requests.cpu: requested 4" in message
    assert (await _podgroup_status(api, namespace, "big")).get("phase") in (None, "Pending")


async def test_sla_admits_a_job_once_it_waited_its_time(
    api: KubeClient, namespace: str, start_scheduler: Any, conf: str
) -> None:
    await start_scheduler(f"vc-sla-{uuid.uuid4().hex[:6]}", scheduler_conf=conf)
    # Far beyond the over-commit limit: only sla can admit it.
    await api.create(PODGROUPS.collection_path(namespace), _podgroup("plain", "100000"))
    await api.create(
        PODGROUPS.collection_path(namespace),
        _podgroup("urgent", "100000", annotations={c.JOB_WAITING_TIME_KEY: "2s"}),
    )

    async def urgent_admitted() -> bool:
        return (await _podgroup_status(api, namespace, "urgent")).get("phase") == "Inqueue"

    await wait_until(urgent_admitted, "the PodGroup past its sla-waiting-time to be Inqueue", 30)
    assert "over-commit limit" in await _unschedulable_message(api, namespace, "plain")
    assert (await _podgroup_status(api, namespace, "plain")).get("phase") in (None, "Pending")


async def test_pdb_keeps_its_pods_from_preemption_until_removed(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any, conf: str
) -> None:
    suffix = uuid.uuid4().hex[:6]
    low, high = f"it-pdb-low-{suffix}", f"it-pdb-high-{suffix}"
    for name, value in ((low, 10), (high, 1000)):
        await api.create(
            PRIORITY_CLASSES.collection_path(),
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
             "value": value},
        )  # fmt: skip
    scheduler_name = f"vc-{pool}"
    try:
        await api.create(
            PODDISRUPTIONBUDGETS.collection_path(namespace),
            {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
             "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}},
        )  # fmt: skip
        await start_scheduler(scheduler_name, scheduler_conf=conf)
        for i in range(2):  # two 8-GPU pods fill the pool's two nodes
            victim = pod_manifest(f"web-{i}", scheduler_name, pool, gpus=8)
            victim["metadata"]["labels"] = {"app": "web"}
            victim["spec"]["priorityClassName"] = low
            await api.create(PODS.collection_path(namespace), victim)

        async def both_bound() -> bool:
            current = await pods_by_name(api, namespace)
            return all(current[f"web-{i}"]["spec"].get("nodeName") for i in range(2))

        await wait_until(both_bound, "the budgeted pods bound", 30)
        preemptor = pod_manifest("high", scheduler_name, pool, gpus=8)
        preemptor["spec"]["priorityClassName"] = high
        await api.create(PODS.collection_path(namespace), preemptor)

        async def high_told_why() -> bool:
            return any(e["reason"] == "FailedScheduling" for e in await events_for(api, namespace, "high"))

        await wait_until(high_told_why, "the preemptor's FailedScheduling event", 30)
        await asyncio.sleep(1.0)  # five more cycles in which the budget must keep holding
        current = await pods_by_name(api, namespace)
        assert all(not current[f"web-{i}"]["metadata"].get("deletionTimestamp") for i in range(2))
        assert not current["high"]["spec"].get("nodeName")

        await api.delete(PODDISRUPTIONBUDGETS.object_path("web", namespace))

        async def one_evicted() -> list[str]:
            pods = await pods_by_name(api, namespace)
            return [
                n for n in ("web-0", "web-1") if n not in pods or pods[n]["metadata"].get("deletionTimestamp")
            ]

        assert len(await wait_until(one_evicted, "a pod evicted once the budget is gone", 30)) == 1
    finally:
        for name in (low, high):
            with contextlib.suppress(ApiError):
                await api.delete(PRIORITY_CLASSES.object_path(name))


@pytest.fixture
def group_pool(cluster: Any) -> Iterator[tuple[str, str]]:
    """Two fresh nodes in node group ``<name>`` (label volcano.sh/nodegroup-name), under their own pool."""
    name = f"ng{uuid.uuid4().hex[:6]}"
    cluster.create_nodes(
        2, prefix=f"{name}-", cpu="16", memory="64Gi", gpus=8,
        labels={POOL_LABEL: name, c.NODE_GROUP_NAME_KEY: name},
    )  # fmt: skip
    yield name, f"{name}-"
    cluster.delete_nodes(f"{name}-")


async def test_nodegroup_keeps_a_queues_pods_on_its_group(
    api: KubeClient, namespace: str, group_pool: tuple[str, str], start_scheduler: Any, conf: str
) -> None:
    group, prefix = group_pool
    queue = f"q-{group}"
    await api.create(
        QUEUES.collection_path(),
        {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.QUEUE_KIND, "metadata": {"name": queue},
         "spec": {"weight": 1, "affinity": {"nodeGroupAffinity": {
             "requiredDuringSchedulingIgnoredDuringExecution": [group]}}}},
    )  # fmt: skip
    scheduler_name = f"vc-{group}"
    try:
        await start_scheduler(scheduler_name, scheduler_conf=conf)
        pg = _podgroup("grouped", "2", queue=queue)
        pg["spec"]["minMember"] = 2
        await api.create(PODGROUPS.collection_path(namespace), pg)
        # No nodeSelector: the queue's node-group affinity alone keeps them on the group's nodes.
        for i in range(2):
            pod = pod_manifest(f"grouped-{i}", scheduler_name, group, group="grouped")
            del pod["spec"]["nodeSelector"]
            await api.create(PODS.collection_path(namespace), pod)
        loose = pod_manifest("loose", scheduler_name, group)  # default queue: no affinity
        del loose["spec"]["nodeSelector"]
        await api.create(PODS.collection_path(namespace), loose)

        async def all_bound() -> dict[str, str] | None:
            pods = await pods_by_name(api, namespace)
            nodes = {n: p["spec"].get("nodeName") for n, p in pods.items()}
            return nodes if all(nodes.values()) and len(nodes) == 3 else None

        nodes = await wait_until(all_bound, "the three pods bound", 30)
        assert all(nodes[f"grouped-{i}"].startswith(prefix) for i in range(2)), nodes
        assert not nodes["loose"].startswith(prefix), nodes
        assert GROUP_KEY in (await pods_by_name(api, namespace))["grouped-0"]["metadata"]["annotations"]
    finally:
        with contextlib.suppress(ApiError):
            await api.delete(QUEUES.object_path(queue))


async def test_a_conf_naming_every_volcano_name_runs_a_gang(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any, tmp_path: Path
) -> None:
    """Every plugin and action of Volcano's registries in one conf: the scheduler starts with it and binds."""
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(EVERY_VOLCANO_NAME_CONF)
    scheduler = f"vc-{pool}"
    await start_scheduler(scheduler, scheduler_conf=str(conf))
    await api.create(
        PODGROUPS.collection_path(namespace),
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "every"},
         "spec": {"minMember": 3, "queue": "default"}},
    )  # fmt: skip
    for i in range(3):
        pod = pod_manifest(f"every-{i}", scheduler, pool, gpus=2, group="every")
        await api.create(PODS.collection_path(namespace), pod)

    async def gang_bound() -> bool:
        current = await pods_by_name(api, namespace)
        return all(current[f"every-{i}"]["spec"].get("nodeName") for i in range(3))

    await wait_until(gang_bound, "the gang bound under the every-name conf", 30)
