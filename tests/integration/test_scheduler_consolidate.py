"""consolidate on a real control plane: a KWOK cluster whose free GPUs are scattered (2 on each of four
8-GPU nodes) gets an 8-GPU pod running once the scheduler moves three 2-GPU pods of a ReplicaSet into the
holes elsewhere. The moved pods are evicted as preempt's are (Evict Events, the pod_evictions metric), their
ReplicaSet's replacements bind on the other nodes, the ReplicaSet's PodGroup (made by our controller) gets
a Consolidated Event naming the gang, and no PodGroup is left partly evicted."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ctl_harness import Operator  # type: ignore[import-not-found]
from test_scheduler_binding import (  # type: ignore[import-not-found]
    POOL_LABEL,
    api,
    create_gang,
    events_for,
    pods_by_name,
    start_scheduler,
    wait_until,
)

from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import NODES, PODGROUPS, REPLICASETS

pytestmark = pytest.mark.integration
__all__ = ["api", "start_scheduler"]  # fixtures used here by name

CONF = """\
actions: "enqueue, consolidate, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
configurations:
- name: consolidate
  arguments: {maxMoves: 4, waitMinutes: 30}
"""


@pytest.fixture
def four(cluster: Any) -> Iterator[str]:
    """Four fresh 8-GPU nodes under a unique label."""
    name = f"cs{uuid.uuid4().hex[:6]}"
    cluster.create_nodes(4, prefix=f"{name}-", cpu="16", memory="64Gi", gpus=8, labels={POOL_LABEL: name})
    yield name
    cluster.delete_nodes(f"{name}-")


def replicaset(name: str, scheduler: str, pool: str, replicas: int, gpus: int) -> dict[str, Any]:
    labels = {"app": name}
    requests = {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": str(gpus)}
    resources = {"requests": requests, "limits": {"nvidia.com/gpu": str(gpus)}}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "schedulerName": scheduler,
                    "nodeSelector": {POOL_LABEL: pool},
                    "containers": [{"name": "main", "image": "busybox", "resources": resources}],
                },
            },
        },
    }  # fmt: skip


async def _cordon(api: KubeClient, nodes: list[str], cordoned: bool) -> None:
    for node in nodes:
        await api.patch(NODES.object_path(node), {"spec": {"unschedulable": cordoned or None}})


async def _placed(api: KubeClient, ns: str, prefix: str) -> dict[str, str]:
    """Live pods (not terminating) whose name starts with ``prefix``: their nodes ('' while pending)."""
    return {
        name: pod["spec"].get("nodeName", "")
        for name, pod in (await pods_by_name(api, ns)).items()
        if name.startswith(prefix) and not pod["metadata"].get("deletionTimestamp")
    }


async def test_consolidate_moves_pods_so_a_one_node_gang_runs(
    cluster: Any, api: KubeClient, namespace: str, four: str, start_scheduler: Any, tmp_path: Path
) -> None:
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(CONF)
    scheduler = f"vc-{four}"
    n0, n1, n2, n3 = (f"{four}-{i}" for i in range(4))
    operator = Operator(str(cluster.kubeconfig), namespace, scheduler_names=(scheduler,))
    running = await start_scheduler(scheduler, scheduler_conf=str(conf))
    try:
        # Fragment the nodes: a 6-GPU pod on n0, n2, n3 (n1 cordoned), then three 2-GPU pods on n1.
        await _cordon(api, [n1], True)
        await api.create(REPLICASETS.collection_path(namespace), replicaset("fixed", scheduler, four, 3, 6))

        async def fixed_bound() -> bool:
            return sorted((await _placed(api, namespace, "fixed-")).values()) == [n0, n2, n3]

        await wait_until(fixed_bound, "the three 6-GPU pods on n0, n2, n3", 30)
        await _cordon(api, [n0, n2, n3], True)
        await _cordon(api, [n1], False)
        await api.create(REPLICASETS.collection_path(namespace), replicaset("small", scheduler, four, 3, 2))

        async def small_on_n1() -> dict[str, str] | None:
            placed = await _placed(api, namespace, "small-")
            return placed if len(placed) == 3 and set(placed.values()) == {n1} else None

        first = await wait_until(small_on_n1, "the three 2-GPU pods on n1", 30)
        fixed = await _placed(api, namespace, "fixed-")
        await _cordon(api, [n0, n2, n3], False)

        # 2 GPUs free on every node; an 8-GPU gang waits until consolidate empties n1.
        await create_gang(api, namespace, "wide", 1, scheduler, four, gpus=8)

        async def wide_and_small_bound() -> dict[str, str] | None:
            gang = await _placed(api, namespace, "wide-")
            small = await _placed(api, namespace, "small-")
            if gang.get("wide-0") and len(small) == 3 and all(small.values()):
                return {**gang, **small}
            return None

        placed = await wait_until(wide_and_small_bound, "the gang running and the moved pods bound again", 40)
        assert placed["wide-0"] == n1
        moved = {name: node for name, node in placed.items() if name.startswith("small-")}
        assert not set(moved) & set(first)  # every original was moved: the whole PodGroup, none left behind
        assert sorted(moved.values()) == [n0, n2, n3]
        assert await _placed(api, namespace, "fixed-") == fixed  # nothing else moved
        assert running.scheduler.metrics.evictions.labels("consolidate")._value.get() == 3

        pod = (await pods_by_name(api, namespace))["wide-0"]
        assert pod["status"]["phase"] == "Running"
        groups = (await api.get(PODGROUPS.collection_path(namespace)))["items"]
        small_group = next(
            g["metadata"]["name"]
            for g in groups
            if any(ref.get("kind") == "ReplicaSet" and ref.get("name") == "small"
                   for ref in g["metadata"].get("ownerReferences") or ())
        )  # fmt: skip

        async def consolidated_event() -> list[dict[str, Any]]:
            return [e for e in await events_for(api, namespace, small_group) if e["reason"] == "Consolidated"]

        said = await wait_until(consolidated_event, "a Consolidated Event on the moved PodGroup", 15)
        assert f"3 pods moved to make room for PodGroup {namespace}/wide" in said[0]["message"]
        for name in first:
            evicts = [e for e in await events_for(api, namespace, name) if e["reason"] == "Evict"]
            assert (
                evicts
                and f"consolidate: moved to make room for PodGroup {namespace}/wide" in evicts[0]["message"]
            )
    finally:
        await operator.stop()
