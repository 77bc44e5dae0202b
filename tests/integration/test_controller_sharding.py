"""The sharding controller against a real API server: NodeShards from the sharding ConfigMap, one per
scheduler with disjoint nodes; a deleted one recreated; a bad edit refused with the last good shards kept;
a scheduler dropped from the config loses its shard."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml
from ctl_harness import Operator, wait_for

from volcano_py.api import constants as c
from volcano_py.api.controller_gates import ALL_CONTROLLERS, parse_controller_gates
from volcano_py.controllers.sharding.worker import INVALID_CONFIG_REASON
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import CONFIGMAPS, NODESHARDS

pytestmark = pytest.mark.integration

JSON = dict[str, Any]
MAX_NODES = 3


def sharding_yaml(*schedulers: str, weight: int = 1) -> str:
    def entry(name: str) -> JSON:
        return {
            "name": name,
            "type": "volcano",
            "policies": [
                {
                    "name": "allocation-rate",
                    "weight": weight,
                    "arguments": {"minCPUUtil": 0.0, "maxCPUUtil": 1.0},
                },
                {"name": "node-limit", "arguments": {"minNodes": 1, "maxNodes": MAX_NODES}},
            ],
        }

    return yaml.safe_dump(
        {"schedulerConfigs": [entry(name) for name in schedulers], "shardSyncPeriod": "60s"}
    )


class Sharding:
    def __init__(self, api: KubeClient, namespace: str) -> None:
        self.api, self.ns = api, namespace
        suffix = uuid.uuid4().hex[:6]
        # NodeShards are cluster-scoped: names of this test's own.
        self.a, self.b = f"sched-a-{suffix}", f"sched-b-{suffix}"

    async def write_config(self, text: str) -> None:
        body = {"metadata": {"name": c.SHARDING_CONFIGMAP}, "data": {c.SHARDING_CONFIG_KEY: text}}
        try:
            await self.api.create(CONFIGMAPS.collection_path(self.ns), body)
        except ApiError as exc:
            if not exc.conflict:
                raise
            await self.api.patch(
                CONFIGMAPS.object_path(c.SHARDING_CONFIGMAP, self.ns), {"data": body["data"]}
            )

    async def shard(self, name: str) -> JSON | None:
        try:
            return await self.api.get(NODESHARDS.object_path(name))
        except ApiError as exc:
            if exc.not_found:
                return None
            raise

    async def desired(self) -> dict[str, list[str]]:
        found = {name: await self.shard(name) for name in (self.a, self.b)}
        return {name: shard["spec"]["nodesDesired"] for name, shard in found.items() if shard is not None}


@pytest.fixture
async def sharding(cluster: Any, namespace: str) -> AsyncIterator[Sharding]:
    api = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    env = Sharding(api, namespace)
    operator = Operator(
        str(cluster.kubeconfig),
        namespace,
        controllers=parse_controller_gates(ALL_CONTROLLERS),
        sharding_configmap_namespace=namespace,
    )
    try:
        yield env
    finally:
        await operator.stop()
        for name in (env.a, env.b):
            try:
                await api.delete(NODESHARDS.object_path(name))
            except ApiError as exc:
                if not exc.not_found:
                    raise
        await api.close()


async def test_shards_follow_the_configmap(sharding: Sharding) -> None:
    env = sharding
    await env.write_config(sharding_yaml(env.a, env.b))

    async def both() -> dict[str, list[str]] | None:
        desired = await env.desired()
        return desired if len(desired) == 2 and all(desired.values()) else None

    first = await wait_for("a NodeShard per configured scheduler", both, 60)
    assert len(first[env.a]) == len(first[env.b]) == MAX_NODES
    assert not set(first[env.a]) & set(first[env.b]), first
    created = await env.shard(env.a)
    assert created is not None
    # The hand-over the controller writes: a new shard's scheduler has every desired node still to add.
    assert created["status"]["nodesToAdd"] == first[env.a]
    assert created["status"]["nodesToRemove"] == []

    # A deleted shard comes back, with the same nodes.
    await env.api.delete(NODESHARDS.object_path(env.b))

    async def recreated() -> JSON | None:
        shard = await env.shard(env.b)
        return shard if shard is not None and shard["metadata"]["uid"] != created["metadata"]["uid"] else None

    again = await wait_for(f"NodeShard {env.b} recreated", recreated, 30)
    assert again["spec"]["nodesDesired"] == first[env.b]

    # A bad edit (a third scheduler, and a negative weight) is refused: an Event names the field, and the
    # shards stay as the last good config made them.
    third = f"{env.a}-third"
    await env.write_config(sharding_yaml(env.a, env.b, third, weight=-1))

    async def refused() -> list[JSON]:
        events = (await env.api.get(f"/api/v1/namespaces/{env.ns}/events"))["items"]
        return [e for e in events if e.get("reason") == INVALID_CONFIG_REASON]

    [event] = await wait_for("the Warning Event refusing the config", refused, 30)
    assert event["type"] == "Warning"
    assert event["involvedObject"]["name"] == c.SHARDING_CONFIGMAP
    assert "schedulerConfigs[0].policies[0].weight" in event["message"], event["message"]
    await asyncio.sleep(2.0)  # more than the debounce: a sync it caused would have written by now
    assert await env.shard(third) is None
    assert await env.desired() == first

    # A good edit again: the scheduler no longer listed loses its shard, the other keeps its nodes.
    await env.write_config(sharding_yaml(env.a))

    async def dropped() -> bool:
        return await env.shard(env.b) is None

    await wait_for(f"NodeShard {env.b} deleted", dropped, 30)
    assert await env.desired() == {env.a: first[env.a]}
