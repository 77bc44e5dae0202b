"""Shared GPUs and NUMA against a real control plane: the chosen card lands on the pod, limits hold, and a
NUMA refusal is written on the PodGroup where `kubectl describe` shows it.

Each test has its own KWOK nodes (advertising shareable GPUs as a device plugin would), its own scheduler
name and conf.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_scheduler_binding import (  # type: ignore[import-not-found]
    GROUP_KEY,
    POOL_LABEL,
    api,
    podgroup_manifest,
    pods_by_name,
    start_scheduler,
    wait_until,
)

from volcano_py.api import constants as k
from volcano_py.devcluster import GpuSharing
from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import NUMATOPOLOGIES, PODGROUPS, PODS

pytestmark = pytest.mark.integration
__all__ = ["api", "start_scheduler"]  # fixtures used here by name


def _conf(tmp_path: Path, plugins: str) -> str:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(
        'actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
        f"- plugins: [{{name: predicates}}, {plugins}]\n"
    )
    return str(path)


@pytest.fixture
def shared_pool(cluster: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """One node of 2 GPUs x 10000 MiB, as ``gpushare`` or ``vgpu`` (split 4), under a unique label."""
    mode = request.param
    name = f"ds{uuid.uuid4().hex[:6]}"
    cluster.create_nodes(
        1,
        prefix=f"{name}-",
        cpu="8",
        memory="32Gi",
        gpus=2,
        labels={POOL_LABEL: name},
        gpu_sharing=GpuSharing(mode, memory_mib=10000, split=4),
    )
    yield name
    cluster.delete_nodes(f"{name}-")


def _pod(name: str, scheduler: str, pool: str, limits: dict[str, str], **annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {GROUP_KEY: name, **annotations}},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {POOL_LABEL: pool},
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": limits},
                }
            ],
        },
    }


async def _submit(api: KubeClient, ns: str, pod: dict[str, Any]) -> None:
    await api.create(PODGROUPS.collection_path(ns), podgroup_manifest(pod["metadata"]["name"], 1))
    await api.create(PODS.collection_path(ns), pod)


async def _refusal(api: KubeClient, ns: str, group: str) -> str | None:
    """The PodGroup's Unschedulable message once it is about room. Until the first session that sees the
    pod, the PodGroup may say it is short of pods (written with its move to Inqueue)."""
    pg = await api.get(PODGROUPS.object_path(group, ns))
    for cond in pg.get("status", {}).get("conditions") or ():
        if cond.get("type") == "Unschedulable" and cond.get("status") == "True":
            message = str(cond.get("message") or "")
            return None if cond.get("reason") == k.REASON_NOT_ENOUGH_PODS else message
    return None


@pytest.mark.parametrize("shared_pool", ["gpushare"], indirect=True)
async def test_two_40_percent_pods_share_a_card_and_a_third_goes_to_the_other(
    api: KubeClient, namespace: str, shared_pool: str, start_scheduler: Any, tmp_path: Path
) -> None:
    scheduler = f"vc-{shared_pool}"
    conf = _conf(tmp_path, "{name: deviceshare, arguments: {deviceshare.GPUSharingEnable: true}}")
    await start_scheduler(scheduler, scheduler_conf=conf)
    forty = {k.GPU_MEMORY_RESOURCE: "4000"}  # 40% of a 10000 MiB card
    for name in ("a", "b", "c"):
        await _submit(api, namespace, _pod(name, scheduler, shared_pool, forty))

    async def all_bound() -> dict[str, dict[str, Any]] | None:
        pods = await pods_by_name(api, namespace)
        return pods if all(p["spec"].get("nodeName") for p in pods.values()) else None

    pods = await wait_until(all_bound, "the three shared-GPU pods bound", 30)
    index = {name: pod["metadata"]["annotations"].get(k.GPU_INDEX_KEY) for name, pod in pods.items()}
    assert index == {"a": "0", "b": "0", "c": "1"}, index
    assert all(k.PREDICATE_TIME_KEY in p["metadata"]["annotations"] for p in pods.values())


@pytest.mark.parametrize("shared_pool", ["vgpu"], indirect=True)
async def test_vgpu_limits_hold_and_single_numa_node_refusal_is_explained(
    api: KubeClient, namespace: str, shared_pool: str, start_scheduler: Any, tmp_path: Path
) -> None:
    scheduler = f"vc-{shared_pool}"
    node = f"{shared_pool}-0"
    conf = _conf(
        tmp_path,
        "{name: deviceshare, arguments: {deviceshare.VGPUEnable: true, "
        "deviceshare.SchedulePolicy: binpack}}, {name: numa-aware}",
    )
    # The node's 8 CPUs sit in two NUMA cells of 4, under the kubelet's single-numa-node policy.
    await api.create(
        NUMATOPOLOGIES.collection_path(),
        {
            "apiVersion": k.NODEINFO_API_VERSION,
            "kind": k.NUMATOPOLOGY_KIND,
            "metadata": {"name": node},
            "spec": {
                "policies": {k.CPU_MANAGER_POLICY: "static", k.TOPOLOGY_MANAGER_POLICY: "single-numa-node"},
                "numares": {"cpu": {"allocatable": "0-7", "capacity": 8}},
                "cpuDetail": {str(c): {"numa": c // 4, "socket": c // 4, "core": c} for c in range(8)},
            },
        },
    )
    try:
        await start_scheduler(scheduler, scheduler_conf=conf)
        six = {k.VGPU_NUMBER_RESOURCE: "1", k.VGPU_MEMORY_RESOURCE: "6000"}
        for name in ("v1", "v2", "v3"):  # 6000 MiB each on 10000 MiB cards: one per card, the third waits
            await _submit(api, namespace, _pod(name, scheduler, shared_pool, six))
        pinned = _pod("pinned", scheduler, shared_pool, {"cpu": "6", "memory": "1Gi"})
        pinned["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "6", "memory": "1Gi"}
        pinned["metadata"]["annotations"][k.NUMA_POLICY_KEY] = "single-numa-node"
        await _submit(api, namespace, pinned)

        async def settled() -> dict[str, dict[str, Any]] | None:
            pods = await pods_by_name(api, namespace)
            bound = [n for n in ("v1", "v2", "v3") if pods[n]["spec"].get("nodeName")]
            return pods if len(bound) == 2 else None

        pods = await wait_until(settled, "two vGPU pods bound", 30)
        cards = {
            name: pod["metadata"]["annotations"][k.VGPU_IDS_KEY].split(",")[0]
            for name, pod in pods.items()
            if pod["spec"].get("nodeName") and name != "pinned"
        }
        assert sorted(cards.values()) == [f"GPU-{node}-0", f"GPU-{node}-1"], cards
        waiting = next(n for n in ("v1", "v2", "v3") if n not in cards)
        message = await wait_until(lambda: _refusal(api, namespace, waiting), "vGPU refusal", 20)
        assert "no GPUs with enough free vGPU memory, cores or share slots" in message, message
        numa = await wait_until(lambda: _refusal(api, namespace, "pinned"), "NUMA refusal", 20)
        assert "no NUMA node with 6 free CPUs for container main" in numa, numa
        assert not (await pods_by_name(api, namespace))["pinned"]["spec"].get("nodeName")
    finally:
        await api.delete(NUMATOPOLOGIES.object_path(node))
