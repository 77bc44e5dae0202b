"""PodGroup sub-groups through the real API under the default conf (cpsat): a LeaderWorkerSet-like workload
(plain pods labelled with their group index, one PodGroup whose ``subGroupPolicy`` makes each group of 4 a
gang) binds whole groups only, and with ``minSubGroups`` nothing binds until enough groups fit."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from ctl_harness import Env, env, wait_for

from volcano_py.api import constants as c
from volcano_py.kube.kinds import PODGROUPS, PODS

pytestmark = pytest.mark.integration
__all__ = ["env"]  # the fixture, used here by name

POOL_LABEL = "volcano-py.io/test-pool"
GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
SIZE = 4


@pytest.fixture
def pool(cluster: Any) -> Iterator[str]:
    """Two 5-CPU nodes under a unique label: room for two groups of four 1-CPU pods, not three."""
    name = f"sg{uuid.uuid4().hex[:6]}"
    cluster.create_nodes(2, prefix=f"{name}-", cpu="5", memory="8Gi", gpus=0, labels={POOL_LABEL: name})
    yield name
    cluster.delete_nodes(f"{name}-")


async def _workload(env: Env, pool: str, groups: int, min_groups: int | None = None) -> None:
    policy: dict[str, Any] = {"name": "workers", "subGroupSize": SIZE, "matchLabelKeys": [GROUP_INDEX]}
    if min_groups is not None:
        policy["minSubGroups"] = min_groups
    podgroup = {
        "apiVersion": c.SCHEDULING_API_VERSION,
        "kind": c.PODGROUP_KIND,
        "metadata": {"name": "lws"},
        "spec": {"minMember": SIZE, "queue": c.DEFAULT_QUEUE, "subGroupPolicy": [policy]},
    }
    await env.api.create(PODGROUPS.collection_path(env.ns), podgroup)
    for g in range(groups):
        for i in range(SIZE):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"g{g}-{i}",
                    "labels": {GROUP_INDEX: str(g)},
                    "annotations": {c.KUBE_GROUP_NAME_KEY: "lws"},
                },
                "spec": {
                    "schedulerName": c.SCHEDULER_NAME,
                    "nodeSelector": {POOL_LABEL: pool},
                    "containers": [
                        {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                    ],
                },
            }
            await env.api.create(PODS.collection_path(env.ns), pod)


async def _bound(env: Env) -> Counter[str]:
    pods = (await env.api.get(PODS.collection_path(env.ns)))["items"]
    return Counter(p["metadata"]["labels"][GROUP_INDEX] for p in pods if p["spec"].get("nodeName"))


async def test_only_whole_groups_bind_and_the_rest_stay_pending(env: Env, pool: str) -> None:
    await _workload(env, pool, groups=3)

    async def two_groups() -> Counter[str] | None:
        bound = await _bound(env)
        return bound if sum(bound.values()) >= 2 * SIZE else None

    await wait_for("two groups bound", two_groups, 30)
    await asyncio.sleep(1.5)  # several more cycles (0.2 s apart): the third group must not be half placed
    bound = await _bound(env)
    assert sorted(bound.values()) == [SIZE, SIZE], bound
    pods = (await env.api.get(PODS.collection_path(env.ns)))["items"]
    pending = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
    assert len(pending) == SIZE and len({name.split("-")[0] for name in pending}) == 1, pending


async def test_min_sub_groups_binds_nothing_until_enough_groups_fit(
    env: Env, pool: str, cluster: Any
) -> None:
    await _workload(env, pool, groups=3, min_groups=3)

    async def told() -> str | None:
        pg = await env.api.get(PODGROUPS.object_path("lws", env.ns))
        for cond in (pg.get("status") or {}).get("conditions") or []:
            if cond.get("type") == c.PODGROUP_CONDITION_UNSCHEDULABLE and cond.get("status") == "True":
                message = str(cond.get("message", ""))
                if "sub-groups ready" in message:
                    return message
        return None

    message = await wait_for("the PodGroup to say which sub-groups are short", told, 30)
    assert "spec.subGroupPolicy[0] ('workers')" in message and "minSubGroups 3" in message, message
    assert not await _bound(env)

    cluster.create_nodes(1, prefix=f"{pool}-x", cpu="4", memory="8Gi", gpus=0, labels={POOL_LABEL: pool})

    async def all_groups() -> Counter[str] | None:
        bound = await _bound(env)
        return bound if sum(bound.values()) == 3 * SIZE else None

    bound = await wait_for("all three groups bound once a third fits", all_groups, 30)
    assert sorted(bound.values()) == [SIZE] * 3, bound
