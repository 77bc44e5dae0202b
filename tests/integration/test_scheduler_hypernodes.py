"""network-topology-aware through the real API: with Volcano's conf plugin a hard-topology gang lands in the
HyperNode Volcano's binpack-weighted score picks (the one already running pods), as Volcano's hypernode
e2e suite expects (Case 1.1), and a Job's partitions each land whole in one HyperNode."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from ctl_harness import Env, task, vcjob
from test_scheduler_binding import (  # type: ignore[import-not-found]
    GROUP_KEY,
    POOL_LABEL,
    api,
    pods_by_name,
    start_scheduler,
    wait_until,
)

from volcano_py.api import constants as c
from volcano_py.api.job_view import resolve_job
from volcano_py.controllers.job.podgroup import sub_group_policy
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import HYPERNODES, PODGROUPS, PODS

pytestmark = pytest.mark.integration
__all__ = ["api", "start_scheduler"]  # fixtures used here by name

CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins:
  - {name: predicates}
  - {name: proportion}
  - {name: nodeorder}
  - {name: binpack}
  - {name: network-topology-aware}
"""


@pytest.fixture
async def racks(cluster: Any, api: KubeClient, request: Any) -> AsyncIterator[str]:
    """Four 8-cpu nodes in two tier-1 HyperNodes: ``<pool>-a`` (nodes 0, 1) and ``<pool>-b`` (nodes 2, 3)."""
    pool = f"hn{uuid.uuid4().hex[:6]}"
    cpu = getattr(request, "param", "8")
    cluster.create_nodes(4, prefix=f"{pool}-", cpu=cpu, memory="8Gi", gpus=0, labels={POOL_LABEL: pool})
    for rack, nodes in (("a", (0, 1)), ("b", (2, 3))):
        members = [{"type": "Node", "selector": {"exactMatch": {"name": f"{pool}-{i}"}}} for i in nodes]
        body = {
            "apiVersion": c.TOPOLOGY_API_VERSION,
            "kind": c.HYPERNODE_KIND,
            "metadata": {"name": f"{pool}-{rack}"},
            "spec": {"tier": 1, "members": members},
        }
        await api.create(HYPERNODES.collection_path(), body)
    yield pool
    for rack in ("a", "b"):
        with contextlib.suppress(ApiError):
            await api.delete(HYPERNODES.object_path(f"{pool}-{rack}"))
    cluster.delete_nodes(f"{pool}-")


def _pod(name: str, pool: str, size: int, *, scheduler: str = "", node: str = "", group: str = "") -> Any:
    requests = {"cpu": str(size), "memory": f"{size}Gi"}
    spec: dict[str, Any] = {
        "nodeSelector": {POOL_LABEL: pool},
        "containers": [{"name": "main", "image": "busybox", "resources": {"requests": requests}}],
    }
    if scheduler:
        spec["schedulerName"] = scheduler
    if node:
        spec["nodeName"] = node
    annotations = {GROUP_KEY: group} if group else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": spec,
    }


async def test_a_hard_gang_goes_to_the_hypernode_already_running_pods(
    api: KubeClient, namespace: str, racks: str, start_scheduler: Any, tmp_path: Path
) -> None:
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(CONF)
    name = f"vc-{racks}"
    await start_scheduler(name, scheduler_conf=str(conf))
    # Rack a already runs a pod (bound by name, as the e2e suite does): Volcano's score prefers it, where
    # cpsat's objective takes the empty rack b.
    await api.create(PODS.collection_path(namespace), _pod("busy", racks, 1, node=f"{racks}-0"))
    podgroup = {
        "apiVersion": c.SCHEDULING_API_VERSION,
        "kind": c.PODGROUP_KIND,
        "metadata": {"name": "gang"},
        "spec": {
            "minMember": 2,
            "queue": "default",
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        },
    }
    await api.create(PODGROUPS.collection_path(namespace), podgroup)
    for i in range(2):
        await api.create(
            PODS.collection_path(namespace), _pod(f"gang-{i}", racks, 4, scheduler=name, group="gang")
        )

    async def bound() -> dict[str, str]:
        pods = await pods_by_name(api, namespace)
        nodes = {p: pods[p]["spec"].get("nodeName", "") for p in ("gang-0", "gang-1")}
        return nodes if all(nodes.values()) else {}

    nodes = await wait_until(bound, "the gang's two pods bound", 60)
    assert set(nodes.values()) <= {f"{racks}-0", f"{racks}-1"}, nodes


@pytest.mark.parametrize("racks", ["4"], indirect=True)  # 4-cpu nodes: one 3-cpu pod each
async def test_a_jobs_partitions_each_land_whole_in_one_hypernode(
    api: KubeClient, namespace: str, racks: str, start_scheduler: Any, tmp_path: Path, cluster: Any
) -> None:
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(CONF)
    name = f"vc-{racks}"
    await start_scheduler(name, scheduler_conf=str(conf))
    env = Env(api, namespace, str(cluster.kubeconfig))
    await env.ensure_queue(c.DEFAULT_QUEUE, reclaimable=True)
    env.start_operator()
    try:
        worker = task("w", 4, cpu="3")
        worker["template"]["spec"]["nodeSelector"] = {POOL_LABEL: racks}
        worker["partitionPolicy"] = {
            "totalPartitions": 2,
            "partitionSize": 2,
            "networkTopology": {"highestTierAllowed": 1},
        }
        job = vcjob("parted", worker, schedulerName=name, minAvailable=4)
        await env.create_job(job)

        async def placed() -> dict[str, str]:
            pods = await env.pods("parted")
            where = {
                p["metadata"]["labels"][c.TASK_PARTITION_ID_KEY] + "/" + p["metadata"]["name"]: p["spec"].get(
                    "nodeName", ""
                )
                for p in pods
            }
            return where if len(where) == 4 and all(where.values()) else {}

        where = await wait_until(placed, "the job's four pods bound", 60)
        rack = {f"{racks}-0": "a", f"{racks}-1": "a", f"{racks}-2": "b", f"{racks}-3": "b"}
        by_partition: dict[str, set[str]] = {}
        for key, node in where.items():
            by_partition.setdefault(key.split("/")[0], set()).add(rack[node])
        # Each partition in one rack; a rack's two nodes hold one partition, so they split one per rack.
        assert sorted(by_partition) == ["0", "1"] and all(len(r) == 1 for r in by_partition.values()), where
        assert by_partition["0"] != by_partition["1"], where
        # The PodGroup as stored (API defaults applied) is what the controller wants: no patch loop.
        (podgroup,) = await env.podgroups()
        assert podgroup["spec"]["subGroupPolicy"] == sub_group_policy(
            resolve_job({**job, "metadata": {"name": "parted", "namespace": namespace, "uid": "u"}})
        )
    finally:
        if env.operator is not None:
            await env.operator.stop()
