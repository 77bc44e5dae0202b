"""The agent scheduler against a real control plane: what a user of ``schedulerName: agent-scheduler`` sees.

Each test has its own pool of KWOK nodes (a label its pods select) and its own scheduler name, so other tests'
pods and nodes never change what these assert.
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

from volcano_py.kube.client import ApiError, KubeClient, load_api_client
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
    return {
        p["metadata"]["name"]: n for p in await pods_of(api, namespace) if (n := p["spec"].get("nodeName"))
    }


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
    # Events are written behind the binds: wait for all 16, then none may say a pod was bound twice.
    counts = await wait_until(lambda: _events_at_least(api, namespace, 16), "a Scheduled event per bound pod")
    assert sorted(counts.values()) == [1] * 16, counts

    # A pod finishing frees its GPU: one waiting pod is bound there, without a restart or a new pod.
    done = next(iter(await bound(api, namespace)))
    await api.delete(PODS.object_path(done, namespace))
    await wait_until(
        lambda: _bound_at_least(api, namespace, 16, besides=done), "a waiting pod takes the room"
    )
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


async def _events_at_least(api: KubeClient, namespace: str, count: int) -> dict[str, int] | None:
    counts = await scheduled_counts(api, namespace)
    return counts if len(counts) >= count else None


async def _told_at_least(api: KubeClient, namespace: str, count: int) -> list[dict[str, Any]] | None:
    pods = await pods_of(api, namespace)
    told = [p for p in pods if unschedulable_message(p)]
    return pods if len(told) >= count else None


def _queue_manifest(name: str, cpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "reclaimable": False, "capability": {"cpu": str(cpus)}},
    }


def _cpu_pod(name: str, scheduler: str, pool: str, queue: str) -> dict[str, Any]:
    request = {"cpu": "1", "memory": "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {"scheduling.volcano.sh/queue-name": queue}},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {POOL_LABEL: pool},
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": request, "limits": request}}
            ],
        },
    }


@pytest.mark.parametrize("mode", ["hard", "soft"])
async def test_batch_and_agent_schedulers_share_nodes_and_a_queue_without_overcommitting(
    cluster: Any, api: KubeClient, namespace: str, pool: str, start_agent: Callable[..., Any], mode: str
) -> None:
    from volcano_py.api.shard import ShardingMode
    from volcano_py.cli.scheduler import scheduler_core
    from volcano_py.kube.kinds import NODESHARDS, QUEUES
    from volcano_py.scheduler.core import Sharding
    from volcano_py.scheduler.runtime.runner import Scheduler, SchedulerOptions

    batch, agent_name, queue, capability = f"batch-{pool}", f"agent-{pool}", f"q-{pool}", 6
    nodes = [f"{pool}-0", f"{pool}-1"]
    for name, shard_nodes in ((batch, nodes[:1]), (agent_name, nodes[1:])):
        shard = {"apiVersion": "shard.volcano.sh/v1alpha1", "kind": "NodeShard", "metadata": {"name": name}}
        await api.create(NODESHARDS.collection_path(), {**shard, "spec": {"nodesDesired": shard_nodes}})
    await api.create(QUEUES.collection_path(), _queue_manifest(queue, capability))
    # The turns at the capped queue are Leases in the schedulers' namespace, as an install creates it.
    cluster.kubectl("create", "namespace", "volcano-system", check=False)
    sharding = ShardingMode(mode)
    options = SchedulerOptions(
        kubeconfig=str(cluster.kubeconfig),
        scheduler_names=(batch,),
        partner_names=(agent_name,),
        metrics_host="127.0.0.1",
        metrics_port=0,
        leader_elect=False,
        schedule_period=0.2,
        mirror_dir=None,
        sharding=Sharding(sharding, batch),
    )
    client = KubeClient(await load_api_client(options.kubeconfig))
    stop = asyncio.Event()
    batch_task = asyncio.create_task(Scheduler(options, client, scheduler_core(options)).run(stop))
    try:
        await start_agent(
            agent_name, worker_count=2, partner_names=(batch,), sharding=Sharding(sharding, agent_name)
        )
        created = 0
        highest = 0
        ever: set[str] = set()
        for wave in range(4):
            # Each wave: 6 pods of each scheduler into the queue (twice its room), then some bound ones end.
            # The first wave is the batch scheduler's alone (the agent scheduler would win every race for
            # the room: it binds within milliseconds); then both race for it.
            pairs = ((batch, "b"),) if wave == 0 else ((batch, "b"), (agent_name, "a"))
            for i in range(6):
                for scheduler, prefix in pairs:
                    await api.create(
                        PODS.collection_path(namespace),
                        _cpu_pod(f"{prefix}{wave}-{i}", scheduler, pool, queue),
                    )
                    created += 1
            deadline = time.monotonic() + 8.0
            while time.monotonic() < deadline:
                placed = await bound(api, namespace)
                ever.update(placed)
                highest = max(highest, len(placed))
                assert len(placed) <= capability, f"queue {queue} over its {capability} CPUs: {placed}"
                await asyncio.sleep(0.1)
            placed = await bound(api, namespace)
            assert len(placed) == capability, placed  # the queue is full, not starved
            if mode == "hard":
                assert all(
                    node == (nodes[0] if p.startswith("b") else nodes[1]) for p, node in placed.items()
                )
            for name in list(placed)[: capability // 2]:
                await api.delete(PODS.object_path(name, namespace))
        # Both schedulers got turns at the queue: each bound pods of its own.
        by_scheduler = {prefix: len([p for p in ever if p.startswith(prefix)]) for prefix in ("a", "b")}
        assert by_scheduler["a"] and by_scheduler["b"], by_scheduler
        counts = await scheduled_counts(api, namespace)
        assert all(count == 1 for count in counts.values()), counts
        assert highest == capability
    finally:
        stop.set()
        await stop_within(batch_task, "the batch scheduler", 15)
        await client.close()
        for name in (batch, agent_name):
            with contextlib.suppress(ApiError):
                await api.delete(NODESHARDS.object_path(name))
        with contextlib.suppress(ApiError):
            await api.delete(QUEUES.object_path(queue))


async def test_an_agent_scheduler_killed_mid_bind_loses_nothing(
    cluster: Any, api: KubeClient, namespace: str, pool: str
) -> None:
    from volcano_py.kube.leader import LeaseTiming

    name = f"agent-{pool}"
    cluster.kubectl("create", "namespace", "volcano-system", check=False)
    timing = LeaseTiming(lease_duration=3, renew_deadline=2.0, retry_period=0.5)

    async def launch(identity: str) -> tuple[asyncio.Task[None], asyncio.Event, KubeClient]:
        options = AgentOptions(
            kubeconfig=str(cluster.kubeconfig),
            scheduler_name=name,
            metrics_host="127.0.0.1",
            metrics_port=0,
            identity=identity,
            lease_timing=timing,
            worker_count=2,
        )
        client = KubeClient(await load_api_client(options.kubeconfig))
        stop = asyncio.Event()
        return asyncio.create_task(AgentScheduler(options, client).run(stop)), stop, client

    first, first_stop, first_client = await launch("first")
    second = None
    try:
        await asyncio.gather(
            *(api.create(PODS.collection_path(namespace), agent_pod(f"p{i}", name, pool)) for i in range(16))
        )
        # Killed once some binds are through, with more on their way: no graceful stop, the Lease kept.
        await wait_until(lambda: _bound_at_least(api, namespace, 3), "the first binds", within=60)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        second = await launch("second")
        placed = await wait_until(lambda: _bound_at_least(api, namespace, 16), "every pod bound", within=60)
        assert sorted(placed) == sorted(f"p{i}" for i in range(16))
        assert all(used <= 8 for used in gpus_per_node(await pods_of(api, namespace)).values())
        # The killed one's Events still in its buffer are lost with it; none may say a pod was bound twice.
        await asyncio.sleep(2.0)
        counts = await scheduled_counts(api, namespace)
        assert counts and all(count == 1 for count in counts.values()), counts
    finally:
        first_stop.set()
        await first_client.close()
        if second is not None:
            task, stop, client = second
            stop.set()
            await stop_within(task, "the second agent scheduler", 15)
            await client.close()


async def test_a_shard_change_reaches_the_nodeshard_status_without_any_pod(
    cluster: Any, api: KubeClient, pool: str, start_agent: Callable[..., Any]
) -> None:
    from volcano_py.api.shard import ShardingMode
    from volcano_py.kube.kinds import NODESHARDS
    from volcano_py.scheduler.core import Sharding

    name = f"agent-{pool}"
    shard = {"apiVersion": "shard.volcano.sh/v1alpha1", "kind": "NodeShard", "metadata": {"name": name}}
    await api.create(NODESHARDS.collection_path(), {**shard, "spec": {"nodesDesired": [f"{pool}-0"]}})
    try:
        await start_agent(name, sharding=Sharding(ShardingMode.SOFT, name))

        async def in_use() -> list[str]:
            status = (await api.get(NODESHARDS.object_path(name))).get("status") or {}
            return sorted(status.get("nodesInUse") or ())

        await wait_until(lambda: _equals(in_use(), [f"{pool}-0"]), "the first status")
        # Moved while nothing waits: Volcano's agent suite expects the status to follow within its poll.
        await api.patch(NODESHARDS.object_path(name), {"spec": {"nodesDesired": [f"{pool}-1"]}})
        await wait_until(lambda: _equals(in_use(), [f"{pool}-1"]), "the status after the move", within=10)
    finally:
        await api.delete(NODESHARDS.object_path(name))


async def _equals(value: Any, wanted: Any) -> bool:
    return bool(await value == wanted)
