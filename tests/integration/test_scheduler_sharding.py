"""Two schedulers in hard sharding mode against a real control plane, each with a NodeShard made by hand.

Every pod lands in its scheduler's shard, no node takes more than it has, no pod is bound twice; a pod its
shard has no room for waits and says the other nodes are outside the shard. Then a node moves from one
shard to the other while both run: its old owner lets it go (its ``nodesInUse``), and only then does the new
owner place there.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from stopping import stop_within

from volcano_py.api.shard import ShardingMode
from volcano_py.cli.scheduler import scheduler_core
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import EVENTS, NODESHARDS, PODS
from volcano_py.scheduler.core import Sharding
from volcano_py.scheduler.runtime.runner import Scheduler, SchedulerOptions

pytestmark = pytest.mark.integration

NODES = [f"node-{i}" for i in range(8)]
GPU = "nvidia.com/gpu"
GPUS_PER_NODE = 8


@pytest.fixture
async def api(cluster: Any) -> AsyncIterator[KubeClient]:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    yield client
    await client.close()


@pytest.fixture
def tag() -> Iterator[str]:
    yield uuid.uuid4().hex[:6]


async def wait_until(check: Callable[[], Any], what: str, within: float = 60.0) -> Any:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        await asyncio.sleep(0.3)
    raise AssertionError(f"timed out after {within}s waiting for {what}")


def _pod(name: str, scheduler: str, gpus: int = 4) -> dict[str, Any]:
    request = {"cpu": "1", GPU: str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": request, "limits": request}}
            ],
        },
    }


def _shard(name: str, nodes: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "shard.volcano.sh/v1alpha1",
        "kind": "NodeShard",
        "metadata": {"name": name},
        "spec": {"nodesDesired": nodes},
    }


async def _shard_status(api: KubeClient, name: str) -> dict[str, Any]:
    return (await api.get(NODESHARDS.object_path(name))).get("status") or {}


async def _pods(api: KubeClient, namespace: str) -> list[dict[str, Any]]:
    return list((await api.get(PODS.collection_path(namespace))).get("items") or [])


async def _placed(api: KubeClient, namespace: str) -> dict[str, str]:
    """Pod name -> node, of the bound pods."""
    return {
        pod["metadata"]["name"]: node
        for pod in await _pods(api, namespace)
        if (node := pod["spec"].get("nodeName"))
    }


async def _scheduled_counts(api: KubeClient, namespace: str) -> dict[str, int]:
    """Per pod, how many times a Scheduled event says it was bound (a repeat bumps the event's count)."""
    listing = await api.get(EVENTS.collection_path(namespace))
    counts: dict[str, int] = {}
    for event in listing.get("items") or ():
        if event.get("reason") == "Scheduled":
            name = event["involvedObject"]["name"]
            counts[name] = counts.get(name, 0) + int(event.get("count") or 1)
    return counts


async def _messages(api: KubeClient, namespace: str, pod: str) -> list[str]:
    listing = await api.get(EVENTS.collection_path(namespace), fieldSelector=f"involvedObject.name={pod}")
    return [str(e.get("message")) for e in listing.get("items") or ()]


def _check_no_node_overcommitted(pods: list[dict[str, Any]]) -> None:
    used: dict[str, int] = {}
    for pod in pods:
        node = pod["spec"].get("nodeName")
        if node:
            requests = pod["spec"]["containers"][0]["resources"]["requests"]
            used[node] = used.get(node, 0) + int(requests[GPU])
    assert all(gpus <= GPUS_PER_NODE for gpus in used.values()), used


async def test_two_hard_sharded_schedulers_keep_to_their_shards(
    cluster: Any, api: KubeClient, namespace: str, tag: str
) -> None:
    name_a, name_b = f"shard-a-{tag}", f"shard-b-{tag}"
    shard_a, shard_b = NODES[:4], NODES[4:]
    for name, nodes in ((name_a, shard_a), (name_b, shard_b)):
        await api.create(NODESHARDS.collection_path(), _shard(name, nodes))
    stop = asyncio.Event()
    clients: list[KubeClient] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        for name in (name_a, name_b):
            options = SchedulerOptions(
                kubeconfig=str(cluster.kubeconfig),
                scheduler_names=(name,),
                metrics_host="127.0.0.1",
                metrics_port=0,
                leader_elect=False,
                schedule_period=0.2,
                mirror_dir=None,
                sharding=Sharding(ShardingMode.HARD, name),
            )
            client = KubeClient(await load_api_client(options.kubeconfig))
            clients.append(client)
            tasks.append(asyncio.create_task(Scheduler(options, client, scheduler_core(options)).run(stop)))

        # Each scheduler says which nodes it uses: all of its shard's (no other shard holds them).
        for name, nodes in ((name_a, shard_a), (name_b, shard_b)):
            await wait_until(
                lambda name=name, nodes=nodes: _in_use_is(api, name, nodes), f"{name} status nodesInUse"
            )

        # A: 8 pods of 4 GPUs fill its 4 nodes, a 9th waits; B: 4 pods in its 4 nodes.
        for i in range(9):
            await api.create(PODS.collection_path(namespace), _pod(f"a{i}", name_a))
        for i in range(4):
            await api.create(PODS.collection_path(namespace), _pod(f"b{i}", name_b))
        placed = await wait_until(
            lambda: _placed_at_least(api, namespace, 12), "12 pods bound (8 of A, 4 of B)"
        )
        await asyncio.sleep(1.0)  # a few more cycles: the 9th must stay pending
        placed = await _placed(api, namespace)
        assert len([pod for pod in placed if pod.startswith("a")]) == 8, placed
        waiting = next(f"a{i}" for i in range(9) if f"a{i}" not in placed)
        assert all(node in shard_a for pod, node in placed.items() if pod.startswith("a")), placed
        assert all(node in shard_b for pod, node in placed.items() if pod.startswith("b")), placed
        messages = await wait_until(
            lambda: _messages_with(api, namespace, waiting, "outside the scheduler's NodeShard"),
            "the waiting pod told why",
        )
        assert any(f"4 nodes outside the scheduler's NodeShard {name_a}" in m for m in messages), messages

        # Move a node of B with room for A's waiting pod over to A.
        used = {node: sum(4 for n in placed.values() if n == node) for node in shard_b}
        moved = next(node for node in shard_b if used[node] <= GPUS_PER_NODE - 4)
        new_a, new_b = [*shard_a, moved], [n for n in shard_b if n != moved]
        await api.patch(NODESHARDS.object_path(name_b), {"spec": {"nodesDesired": new_b}})
        await api.patch(NODESHARDS.object_path(name_a), {"spec": {"nodesDesired": new_a}})
        await wait_until(lambda: _in_use_is(api, name_b, new_b), "B lets the moved node go")
        await wait_until(lambda: _in_use_is(api, name_a, new_a), "A takes the moved node")
        after = await wait_until(
            lambda: _bound_to(api, namespace, waiting), "A's waiting pod bound on the moved node"
        )
        assert after == moved

        # B's new pods stay off the node it gave away.
        for i in range(4, 6):
            await api.create(PODS.collection_path(namespace), _pod(f"b{i}", name_b))
        await wait_until(lambda: _placed_at_least(api, namespace, 15), "B's new pods bound")
        placed = await _placed(api, namespace)
        assert placed["b4"] in new_b and placed["b5"] in new_b, placed

        pods = await _pods(api, namespace)
        _check_no_node_overcommitted(pods)
        counts = await _scheduled_counts(api, namespace)
        assert all(count == 1 for count in counts.values()), counts
    finally:
        stop.set()
        for task in tasks:
            await stop_within(task, "a sharded scheduler", 15)
        for client in clients:
            await client.close()
        for name in (name_a, name_b):
            with contextlib.suppress(ApiError):
                await api.delete(NODESHARDS.object_path(name))


async def _in_use_is(api: KubeClient, name: str, nodes: list[str]) -> bool:
    status = await _shard_status(api, name)
    return sorted(status.get("nodesInUse") or ()) == sorted(nodes) and not status.get("nodesToAdd")


async def _placed_at_least(api: KubeClient, namespace: str, count: int) -> dict[str, str] | None:
    placed = await _placed(api, namespace)
    return placed if len(placed) >= count else None


async def _bound_to(api: KubeClient, namespace: str, pod: str) -> str | None:
    return (await _placed(api, namespace)).get(pod)


async def _messages_with(api: KubeClient, namespace: str, pod: str, needle: str) -> list[str] | None:
    messages = await _messages(api, namespace, pod)
    return messages if any(needle in m for m in messages) else None
