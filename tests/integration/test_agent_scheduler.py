"""The agent scheduler against a real control plane: what a user of ``schedulerName: agent-scheduler`` sees.

Each test has its own pool of KWOK nodes (a label its pods select) and its own scheduler name, so other tests'
pods and nodes never change what these assert.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from stopping import stop_within

from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.kube.kinds import EVENTS, PODS
from volcano_py.scheduler.runtime.agent import AgentOptions, AgentScheduler

pytestmark = pytest.mark.integration

POOL_LABEL = "volcano-py.io/test-pool"
GPU = "nvidia.com/gpu"


@pytest.fixture
def pool(cluster: Any) -> Iterator[str]:
    """Two fresh nodes (8 GPUs, 16 CPUs each) under a unique label."""
    name = f"ag{uuid.uuid4().hex[:6]}"
    cluster.create_nodes(2, prefix=f"{name}-", cpu="16", memory="64Gi", gpus=8, labels={POOL_LABEL: name})
    yield name
    cluster.delete_nodes(f"{name}-")


@pytest.fixture
async def api(cluster: Any) -> AsyncIterator[KubeClient]:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    yield client
    await client.close()


@pytest.fixture
async def start_agent(cluster: Any) -> AsyncIterator[Callable[..., Any]]:
    started: list[tuple[AgentScheduler, asyncio.Task[None], asyncio.Event, KubeClient]] = []

    async def start(name: str, **overrides: Any) -> AgentScheduler:
        overrides.setdefault("leader_elect", False)
        options = AgentOptions(
            kubeconfig=str(cluster.kubeconfig),
            scheduler_name=name,
            metrics_host="127.0.0.1",
            metrics_port=0,
            **overrides,
        )
        client = KubeClient(await load_api_client(options.kubeconfig))
        agent = AgentScheduler(options, client)
        stop = asyncio.Event()
        task = asyncio.create_task(agent.run(stop))
        started.append((agent, task, stop, client))
        await wait_until(lambda: agent.cache.synced, "agent scheduler caches synced")
        return agent

    yield start
    for _agent, task, stop, client in started:
        stop.set()
        await stop_within(task, "an agent scheduler", 15)
        await client.close()


async def wait_until(check: Callable[[], Any], what: str, within: float = 30.0) -> Any:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out after {within}s waiting for {what}")


def agent_pod(name: str, scheduler: str, pool: str, *, gpus: int = 1, **spec: Any) -> dict[str, Any]:
    request = {"cpu": "1", "memory": "1Gi", GPU: str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {POOL_LABEL: pool},
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": request, "limits": request}}
            ],
            **spec,
        },
    }


async def pods_of(api: KubeClient, namespace: str) -> list[dict[str, Any]]:
    return list((await api.get(PODS.collection_path(namespace))).get("items") or [])


async def bound(api: KubeClient, namespace: str) -> dict[str, str]:
    return {p["metadata"]["name"]: n for p in await pods_of(api, namespace) if (n := p["spec"].get("nodeName"))}


def unschedulable_message(pod: dict[str, Any]) -> str | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if (
            condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
            and condition.get("reason") == "Unschedulable"
        ):
            return str(condition.get("message"))
    return None


def gpus_per_node(pods: list[dict[str, Any]]) -> dict[str, int]:
    used: dict[str, int] = {}
    for pod in pods:
        if node := pod["spec"].get("nodeName"):
            used[node] = used.get(node, 0) + int(pod["spec"]["containers"][0]["resources"]["requests"][GPU])
    return used


async def scheduled_counts(api: KubeClient, namespace: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for event in (await api.get(EVENTS.collection_path(namespace))).get("items") or ():
        if event.get("reason") == "Scheduled":
            name = event["involvedObject"]["name"]
            counts[name] = counts.get(name, 0) + int(event.get("count") or 1)
    return counts


async def test_pods_are_bound_as_they_arrive_and_the_rest_say_why(
    api: KubeClient, namespace: str, pool: str, start_agent: Callable[..., Any]
) -> None:
    name = f"agent-{pool}"
    agent = await start_agent(name, worker_count=2)
    # 20 one-GPU pods at once into 16 GPUs: 16 bound, 4 told there is no room, no node over its 8.
    await asyncio.gather(
        *(api.create(PODS.collection_path(namespace), agent_pod(f"p{i}", name, pool)) for i in range(20))
    )
    await wait_until(lambda: _bound_at_least(api, namespace, 16), "16 pods bound")
    pods = await wait_until(lambda: _told_at_least(api, namespace, 4), "4 pods marked Unschedulable")
    assert len(await bound(api, namespace)) == 16
    assert all(used <= 8 for used in gpus_per_node(pods).values()), gpus_per_node(pods)
    messages = [m for p in pods if (m := unschedulable_message(p))]
    assert all(GPU in m for m in messages), messages
    counts = await scheduled_counts(api, namespace)
    assert sorted(counts.values()) == [1] * 16, counts

    # A pod finishing frees its GPU: one waiting pod is bound there, without a restart or a new pod.
    done = next(iter(await bound(api, namespace)))
    await api.delete(PODS.object_path(done, namespace))
    await wait_until(lambda: _bound_at_least(api, namespace, 16, besides=done), "a waiting pod takes the room")
    assert agent.attempts >= 2


async def test_a_pod_no_node_matches_waits_until_one_does(
    cluster: Any, api: KubeClient, namespace: str, pool: str, start_agent: Callable[..., Any]
) -> None:
    name = f"agent-{pool}"
    await start_agent(name)
    key, value = "volcano-py.io/agent-requeue", pool
    pod = agent_pod("wants-label", name, pool, nodeSelector={POOL_LABEL: pool, key: value})
    await api.create(PODS.collection_path(namespace), pod)
    pods = await wait_until(lambda: _told_at_least(api, namespace, 1), "the pod marked Unschedulable")
    message = unschedulable_message(pods[0]) or ""
    assert "nodeSelector" in message, message
    target = f"{pool}-0"
    cluster.kubectl("label", "node", target, f"{key}={value}")
    placed = await wait_until(lambda: _bound_at_least(api, namespace, 1), "the pod bound once a node matches")
    assert placed == {"wants-label": target}


async def _bound_at_least(
    api: KubeClient, namespace: str, count: int, besides: str | None = None
) -> dict[str, str] | None:
    placed = await bound(api, namespace)
    placed.pop(besides or "", None)
    return placed if len(placed) >= count else None


async def _told_at_least(api: KubeClient, namespace: str, count: int) -> list[dict[str, Any]] | None:
    pods = await pods_of(api, namespace)
    told = [p for p in pods if unschedulable_message(p)]
    return pods if len(told) >= count else None
