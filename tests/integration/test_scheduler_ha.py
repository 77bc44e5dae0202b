"""The scheduler surviving what clusters do to it: being killed, losing its leader, losing its watch.

Helpers and fixtures (``pool``, ``api``, ``start_scheduler``) come from ``test_scheduler_binding``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from test_scheduler_binding import (  # type: ignore[import-not-found]
    api,
    pod_manifest,
    pods_by_name,
    pool,
    start_scheduler,
    wait_until,
)

from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import PODGROUPS, PODS, QUEUES
from volcano_py.scheduler.runtime.runner import Scheduler

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name


def gpus_per_node(pods: dict[str, dict[str, Any]]) -> dict[str, int]:
    used: dict[str, int] = {}
    for pod in pods.values():
        node = pod["spec"].get("nodeName")
        if node:
            used[node] = used.get(node, 0) + int(
                pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"]
            )
    return used


async def kill(running: Any) -> None:
    """Stop a scheduler the hard way: no lease release, in-flight requests cut."""
    running.task.cancel()
    await asyncio.gather(running.task, return_exceptions=True)


async def test_kill_and_restart_mid_way_binds_each_pod_once_and_leaves_none(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"
    first = await start_scheduler(name, bind_concurrency=1)
    gangs = [f"g{i}" for i in range(8)]  # 8 gangs x 2 pods x 1 GPU fill the pool's 16 GPUs exactly
    for gang in gangs[:3]:
        await api.create(
            PODGROUPS.collection_path(namespace),
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": gang},
             "spec": {"minMember": 2, "queue": "default"}},
        )  # fmt: skip
        for i in range(2):
            await api.create(
                PODS.collection_path(namespace), pod_manifest(f"{gang}-{i}", name, pool, group=gang)
            )

    async def some_bound() -> bool:
        return any(p["spec"].get("nodeName") for p in (await pods_by_name(api, namespace)).values())

    await wait_until(some_bound, "the first binds", 30)
    await kill(first)
    for gang in gangs[3:]:
        await api.create(
            PODGROUPS.collection_path(namespace),
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": gang},
             "spec": {"minMember": 2, "queue": "default"}},
        )  # fmt: skip
        for i in range(2):
            await api.create(
                PODS.collection_path(namespace), pod_manifest(f"{gang}-{i}", name, pool, group=gang)
            )
    second = await start_scheduler(name)

    async def all_bound() -> bool:
        return all(p["spec"].get("nodeName") for p in (await pods_by_name(api, namespace)).values())

    await wait_until(all_bound, "every pod bound after the restart", 60)
    await asyncio.sleep(1.0)
    pods = await pods_by_name(api, namespace)
    assert len(pods) == 16
    assert gpus_per_node(pods) == {f"{pool}-0": 8, f"{pool}-1": 8}, "a node was over- or under-filled"
    for pod in pods.values():
        conditions = pod.get("status", {}).get("conditions") or []
        assert not any(c.get("reason") == "SchedulerError" for c in conditions), pod["metadata"]["name"]
    assert second.scheduler.metrics.bind_failures._value.get() == 0


async def test_standby_takes_over_within_15_seconds(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"
    lease = dict(leader_elect=True, lease_namespace=namespace, lease_name=f"lease-{uuid.uuid4().hex[:6]}")
    leader = await start_scheduler(name, identity="a", **lease)
    await wait_until(lambda: leader.scheduler.is_leader, "a to lead", 20)
    standby = await start_scheduler(name, identity="b", **lease)
    await asyncio.sleep(3)  # a renews at least once meanwhile
    assert not standby.scheduler.is_leader
    await api.create(PODS.collection_path(namespace), pod_manifest("before", name, pool))
    await wait_until(
        lambda: leader.scheduler.binder.metrics.bound_pods._value.get() >= 1, "the leader to bind", 20
    )
    assert standby.scheduler.metrics.bound_pods._value.get() == 0, "a standby bound a pod"

    await kill(leader)
    died = time.monotonic()
    await wait_until(lambda: standby.scheduler.is_leader, "b to take over", 20)
    took_over = time.monotonic() - died
    assert took_over < 15, f"standby took {took_over:.1f}s to take over"
    await api.create(PODS.collection_path(namespace), pod_manifest("after", name, pool))

    async def after_bound() -> bool:
        return bool((await pods_by_name(api, namespace))["after"]["spec"].get("nodeName"))

    await wait_until(after_bound, "the new leader to bind", 20)
    lease_obj = await api.get(
        f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease['lease_name']}"
    )
    assert lease_obj["spec"]["holderIdentity"] == "b"


async def test_watch_410_is_recovered_without_restart(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"

    def short_watches(scheduler: Scheduler) -> None:
        for informer in scheduler.cache.informers.values():
            informer.watch_timeout_seconds = 1  # reconnect often, so the stale version is used at once

    running = await start_scheduler(name, before=short_watches)
    queues = running.scheduler.cache.informers["queues"]
    relists = queues.relists

    def reconnect_with_stale_version() -> bool:
        # A resourceVersion from before the Queue CRD existed: the API server answers 410 Gone. Set again
        # until a reconnect uses it (the closing bookmark of the current watch may advance it first).
        if queues.relists == relists:
            queues.resource_version = "1"
        return queues.relists > relists

    await wait_until(reconnect_with_stale_version, "the queue informer to relist after 410", 20)
    queue_name = f"q-{pool}"
    await api.create(
        QUEUES.collection_path(),
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": queue_name},
         "spec": {"weight": 1}},
    )  # fmt: skip
    try:
        await wait_until(lambda: running.scheduler.cache.queue(queue_name), "the new queue in the cache", 20)
        await api.create(PODS.collection_path(namespace), pod_manifest("post-410", name, pool))

        async def bound() -> bool:
            return bool((await pods_by_name(api, namespace))["post-410"]["spec"].get("nodeName"))

        await wait_until(bound, "a pod bound after the relist", 20)
        assert not running.task.done(), "the scheduler restarted or died"
    finally:
        await api.delete(QUEUES.object_path(queue_name))
