"""Evictions as the binder carries them out: a high-priority pod takes the room of a low-priority one.

The victim must be deleted with a ``DisruptionTarget`` condition (so its owner can tell preemption from a
crash) and an ``Evict`` event; the preemptor then binds where the victim was.
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_scheduler_binding import (  # type: ignore[import-not-found]
    api,
    events_for,
    pod_manifest,
    pods_by_name,
    pool,
    start_scheduler,
    wait_until,
)

from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import PODS, PRIORITY_CLASSES
from volcano_py.scheduler.framework.decisions import Evict, SessionResult

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name

PREEMPT_CONF = """\
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


async def test_high_priority_pod_evicts_a_low_one_with_disruption_target(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:6]
    low, high = f"it-low-{suffix}", f"it-high-{suffix}"
    for name, value in ((low, 10), (high, 1000)):
        await api.create(
            PRIORITY_CLASSES.collection_path(),
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
             "value": value},
        )  # fmt: skip
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(PREEMPT_CONF)
    scheduler_name = f"vc-{pool}"
    try:
        running = await start_scheduler(scheduler_name, scheduler_conf=str(conf))
        for i in range(2):  # two 8-GPU pods fill the pool's two nodes
            victim = pod_manifest(f"low-{i}", scheduler_name, pool, gpus=8)
            victim["spec"]["priorityClassName"] = low
            await api.create(PODS.collection_path(namespace), victim)

        async def both_low_bound() -> bool:
            current = await pods_by_name(api, namespace)
            return all(current[f"low-{i}"]["spec"].get("nodeName") for i in range(2))

        await wait_until(both_low_bound, "the low-priority pods bound", 30)
        preemptor = pod_manifest("high", scheduler_name, pool, gpus=8)
        preemptor["spec"]["priorityClassName"] = high
        await api.create(PODS.collection_path(namespace), preemptor)

        async def one_victim_evicted() -> list[str]:
            current = await pods_by_name(api, namespace)
            return [
                name
                for name in ("low-0", "low-1")
                if name not in current or current[name]["metadata"].get("deletionTimestamp")
            ]

        victims = await wait_until(one_victim_evicted, "a low-priority pod evicted", 40)
        victim_events = await events_for(api, namespace, victims[0])
        assert any(e["reason"] == "Evict" for e in victim_events), victim_events

        async def high_bound() -> bool:
            return bool((await pods_by_name(api, namespace))["high"]["spec"].get("nodeName"))

        await wait_until(high_bound, "the high-priority pod bound in the freed room", 60)
        assert running.scheduler.metrics.evictions.labels("preempt")._value.get() >= 1
        # While the victim was releasing, the preemptor was nominated to the node it then bound to.
        await running.scheduler.binder.wait_idle()
        high_pod = (await pods_by_name(api, namespace))["high"]
        assert high_pod["status"].get("nominatedNodeName") == high_pod["spec"]["nodeName"], high_pod["status"]
    finally:
        for name in (low, high):
            with contextlib.suppress(ApiError):
                await api.delete(PRIORITY_CLASSES.object_path(name))


async def test_eviction_sets_disruption_target_before_delete(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    """The binder's eviction itself, driven directly: condition first, then a uid-guarded delete."""
    scheduler_name = f"vc-{pool}"
    running = await start_scheduler(scheduler_name)
    # A pod that stays around while terminating: a finalizer holds it, so the condition can be read.
    victim = pod_manifest("victim", scheduler_name, pool)
    victim["metadata"]["finalizers"] = ["volcano-py.io/test-hold"]
    created = await api.create(PODS.collection_path(namespace), victim)
    await wait_until(lambda: running.scheduler.cache.pod(f"{namespace}/victim"), "the pod in the cache", 20)
    running.scheduler.binder.submit(
        SessionResult(
            evictions=(Evict(namespace, "victim", created["metadata"]["uid"], "reclaimed by queue q2"),)
        )
    )
    await running.scheduler.binder.wait_idle()
    pod = await api.get(PODS.object_path("victim", namespace))
    try:
        assert pod["metadata"].get("deletionTimestamp"), "the victim was not deleted"
        [condition] = [c for c in pod["status"].get("conditions", []) if c["type"] == "DisruptionTarget"]
        assert condition["status"] == "True" and "reclaimed by queue q2" in condition["message"]
    finally:
        await api.patch(PODS.object_path("victim", namespace), {"metadata": {"finalizers": None}})


def _required(kind: str, app: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


async def test_topology_aware_preemption_evicts_the_pod_in_the_way_not_the_cheapest(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any, tmp_path: Path
) -> None:
    """With ``enableTopologyAwarePreemption``, a preemptor anti-affine to the blockers evicts one blocker,
    not the lower-priority bystander beside it that freeing room alone would pick."""
    suffix = uuid.uuid4().hex[:6]
    classes = {"low": 10, "mid": 100, "high": 1000}
    names = {level: f"it-{level}-{suffix}" for level in classes}
    for level, value in classes.items():
        await api.create(
            PRIORITY_CLASSES.collection_path(),
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
             "metadata": {"name": names[level]}, "value": value},
        )  # fmt: skip
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(
        PREEMPT_CONF
        + "configurations:\n- name: preempt\n  arguments:\n    enableTopologyAwarePreemption: true\n"
    )
    scheduler_name = f"vc-{pool}"

    def pod(name: str, level: str, gpus: int, app: str, affinity: dict[str, Any]) -> dict[str, Any]:
        manifest = pod_manifest(name, scheduler_name, pool, gpus=gpus)
        manifest["metadata"]["labels"] = {"app": app}
        manifest["spec"]["priorityClassName"] = names[level]
        manifest["spec"]["affinity"] = affinity
        return manifest

    try:
        await start_scheduler(scheduler_name, scheduler_conf=str(conf))
        # One blocker and one bystander per node: 6 of each node's 8 GPUs stay free.
        for i in range(2):
            blocker = pod(f"blocker-{i}", "mid", 1, "blocker", _required("podAntiAffinity", "blocker"))
            await api.create(PODS.collection_path(namespace), blocker)
        for i in range(2):
            bystander = pod(
                f"bystander-{i}", "low", 1, "bystander", _required("podAntiAffinity", "bystander")
            )
            await api.create(PODS.collection_path(namespace), bystander)

        async def four_bound() -> bool:
            current = await pods_by_name(api, namespace)
            return len(current) == 4 and all(p["spec"].get("nodeName") for p in current.values())

        await wait_until(four_bound, "the blockers and bystanders bound", 30)
        preemptor = pod("high", "high", 7, "preemptor", _required("podAntiAffinity", "blocker"))
        await api.create(PODS.collection_path(namespace), preemptor)

        async def high_bound() -> str:
            return str((await pods_by_name(api, namespace))["high"]["spec"].get("nodeName") or "")

        node = await wait_until(high_bound, "the preemptor bound where a blocker was", 60)
        current = await pods_by_name(api, namespace)
        gone = sorted(
            name for name in ("blocker-0", "blocker-1", "bystander-0", "bystander-1")
            if name not in current or current[name]["metadata"].get("deletionTimestamp")
        )  # fmt: skip
        assert len(gone) == 1 and gone[0].startswith("blocker-"), gone
        assert any(e["reason"] == "Evict" for e in await events_for(api, namespace, gone[0]))
        assert all(
            current[name]["spec"]["nodeName"] != node for name in current if name.startswith("blocker-")
        )
    finally:
        for name in names.values():
            with contextlib.suppress(ApiError):
                await api.delete(PRIORITY_CLASSES.object_path(name))
