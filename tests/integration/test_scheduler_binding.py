"""The scheduler process against a real control plane: what a user sees after `kubectl apply`.

Each test gets its own small pool of KWOK nodes (a label its pods select) and its own scheduler name, so
other tests' pods and nodes never change what these assert.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from stopping import stop_within

from volcano_py.cli.scheduler import scheduler_core
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.kube.kinds import EVENTS, PODGROUPS, PODS
from volcano_py.scheduler.runtime.runner import Scheduler, SchedulerOptions

pytestmark = pytest.mark.integration

POOL_LABEL = "volcano-py.io/test-pool"
GROUP_KEY = "scheduling.k8s.io/group-name"


@pytest.fixture
def pool(cluster: Any) -> Iterator[str]:
    """Two fresh nodes (8 GPUs, 16 CPUs each) under a unique label."""
    name = f"sb{uuid.uuid4().hex[:6]}"
    cluster.create_nodes(2, prefix=f"{name}-", cpu="16", memory="64Gi", gpus=8, labels={POOL_LABEL: name})
    yield name
    cluster.delete_nodes(f"{name}-")


@pytest.fixture
async def api(cluster: Any) -> AsyncIterator[KubeClient]:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    yield client
    await client.close()


class Running:
    def __init__(self, scheduler: Scheduler, task: asyncio.Task[None], stop: asyncio.Event) -> None:
        self.scheduler, self.task, self.stop = scheduler, task, stop


@pytest.fixture
async def start_scheduler(cluster: Any) -> AsyncIterator[Callable[..., Any]]:
    started: list[tuple[Running, KubeClient]] = []

    async def start(
        name: str,
        *,
        before: Callable[[Scheduler], None] | None = None,
        wait_synced: bool = True,
        **overrides: Any,
    ) -> Running:
        overrides.setdefault("leader_elect", False)
        overrides.setdefault("schedule_period", 0.2)
        options = SchedulerOptions(
            kubeconfig=str(cluster.kubeconfig),
            scheduler_names=(name,),
            metrics_host="127.0.0.1",
            metrics_port=0,
            **overrides,
        )
        client = KubeClient(await load_api_client(options.kubeconfig))
        scheduler = Scheduler(options, client, scheduler_core(options))
        if before is not None:
            before(scheduler)
        stop = asyncio.Event()
        task = asyncio.create_task(scheduler.run(stop))
        running = Running(scheduler, task, stop)
        started.append((running, client))
        if wait_synced:
            await wait_until(lambda: scheduler.cache.synced, "scheduler caches synced", 30)
        return running

    yield start
    for running, client in started:
        running.stop.set()
        await stop_within(running.task, "a scheduler", 15)
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


def pod_manifest(
    name: str, scheduler: str, pool: str, *, gpus: int = 1, group: str | None = None
) -> dict[str, Any]:
    annotations = {GROUP_KEY: group} if group else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {POOL_LABEL: pool},
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {
                        "requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": str(gpus)},
                        "limits": {"nvidia.com/gpu": str(gpus)},
                    },
                }
            ],
        },
    }


def podgroup_manifest(name: str, min_member: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": min_member, "queue": "default"},
    }


async def create_gang(
    api: KubeClient, ns: str, name: str, size: int, scheduler: str, pool: str, *, gpus: int
) -> list[str]:
    await api.create(PODGROUPS.collection_path(ns), podgroup_manifest(name, size))
    names = [f"{name}-{i}" for i in range(size)]
    for pod in names:
        await api.create(PODS.collection_path(ns), pod_manifest(pod, scheduler, pool, gpus=gpus, group=name))
    return names


async def pods_by_name(api: KubeClient, ns: str) -> dict[str, dict[str, Any]]:
    listing = await api.get(PODS.collection_path(ns))
    return {p["metadata"]["name"]: p for p in listing["items"]}


async def events_for(api: KubeClient, ns: str, name: str) -> list[dict[str, Any]]:
    listing = await api.get(EVENTS.collection_path(ns), fieldSelector=f"involvedObject.name={name}")
    items: list[dict[str, Any]] = listing["items"]
    return items


async def test_gang_is_bound_and_runs(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"
    await start_scheduler(name)
    pods = await create_gang(api, namespace, "gang", 4, name, pool, gpus=2)

    async def all_running() -> bool:
        current = await pods_by_name(api, namespace)
        return all(current[p].get("status", {}).get("phase") == "Running" for p in pods)

    await wait_until(all_running, "the gang's 4 pods Running", 60)
    current = await pods_by_name(api, namespace)
    assert {current[p]["spec"]["nodeName"] for p in pods} <= {f"{pool}-0", f"{pool}-1"}
    scheduled = [e for e in await events_for(api, namespace, pods[0]) if e["reason"] == "Scheduled"]
    assert scheduled and scheduled[0]["message"].startswith(
        f"Successfully assigned {namespace}/{pods[0]} to "
    )

    async def podgroup_running() -> bool:
        pg = await api.get(PODGROUPS.object_path("gang", namespace))
        return pg.get("status", {}).get("phase") == "Running"

    await wait_until(podgroup_running, "PodGroup phase Running", 30)


async def test_a_gang_bound_beyond_the_event_budget_is_told_on_its_podgroup(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"
    # A budget of 2 pods and almost no refill: 2 of the 6 get their own Event, the PodGroup tells the rest.
    await start_scheduler(name, scheduled_event_qps=0.001, scheduled_event_burst=2)
    pods = await create_gang(api, namespace, "big", 6, name, pool, gpus=1)

    async def podgroup_told() -> list[dict[str, Any]]:
        return [e for e in await events_for(api, namespace, "big") if e["reason"] == "Scheduled"]

    [told] = await wait_until(podgroup_told, "a Scheduled Event on the PodGroup", 60)
    assert told["involvedObject"]["kind"] == "PodGroup" and told["type"] == "Normal"
    assert told["message"].startswith("Successfully assigned 4 pods to ")
    assert "(--scheduled-event-qps)" in told["message"]

    async def told_on_their_own() -> list[str]:
        return [
            p for p in pods if any(e["reason"] == "Scheduled" for e in await events_for(api, namespace, p))
        ]

    own = await wait_until(told_on_their_own, "the pods' own Scheduled Events", 30)
    await asyncio.sleep(1.0)  # the recorder's writers are done: none of the others gets one late
    assert len(own) == 2 and len(await told_on_their_own()) == 2
    current = await pods_by_name(api, namespace)
    assert all(current[p]["spec"].get("nodeName") for p in pods)  # every pod bound, told or not


async def test_too_large_gang_waits_whole_then_binds_whole(
    cluster: Any, api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"
    running = await start_scheduler(name)
    pods = await create_gang(api, namespace, "big", 3, name, pool, gpus=8)  # 3 x 8 GPUs on 2 x 8 GPUs

    async def explained() -> dict[str, Any] | None:
        pg = await api.get(PODGROUPS.object_path("big", namespace))
        for cond in pg.get("status", {}).get("conditions") or ():
            if cond.get("type") == "Unschedulable" and cond.get("status") == "True":
                return dict(cond)
        return None

    condition = await wait_until(explained, "PodGroup condition Unschedulable", 30)
    assert condition["message"], "the Unschedulable condition must say why"
    await asyncio.sleep(1.0)  # a few more cycles: still nothing may be bound
    current = await pods_by_name(api, namespace)
    assert not any(current[p]["spec"].get("nodeName") for p in pods), "a partial gang was bound"
    warnings = await events_for(api, namespace, "big")
    assert any(e["reason"] == "Unschedulable" for e in warnings)
    assert running.scheduler.metrics.unschedule_job_count._value.get() >= 1

    cluster.create_nodes(
        1, prefix=f"{pool}-", start=2, cpu="16", memory="64Gi", gpus=8, labels={POOL_LABEL: pool}
    )

    async def all_bound() -> bool:
        current = await pods_by_name(api, namespace)
        return all(current[p]["spec"].get("nodeName") for p in pods)

    await wait_until(all_bound, "the whole gang bound once capacity freed", 60)
    current = await pods_by_name(api, namespace)
    assert len({current[p]["spec"]["nodeName"] for p in pods}) == 3


async def test_pods_of_another_scheduler_are_respected(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    # Another scheduler already put a 6-GPU pod on node 0: only 2 GPUs are left there.
    foreign = pod_manifest("foreign", "default-scheduler", pool, gpus=6)
    foreign["spec"]["nodeName"] = f"{pool}-0"
    await api.create(PODS.collection_path(namespace), foreign)
    name = f"vc-{pool}"
    await start_scheduler(name)
    for i in range(3):
        await api.create(PODS.collection_path(namespace), pod_manifest(f"p{i}", name, pool, gpus=4))

    async def two_bound() -> bool:
        current = await pods_by_name(api, namespace)
        return sum(bool(current[f"p{i}"]["spec"].get("nodeName")) for i in range(3)) >= 2

    await wait_until(two_bound, "two 4-GPU pods bound", 30)
    await asyncio.sleep(1.0)
    current = await pods_by_name(api, namespace)
    used: dict[str, int] = {}
    for pod in current.values():
        node = pod["spec"].get("nodeName")
        if node:
            gpus = int(pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"])
            used[node] = used.get(node, 0) + gpus
    assert all(total <= 8 for total in used.values()), f"a node was over-committed: {used}"
    assert sum(bool(current[f"p{i}"]["spec"].get("nodeName")) for i in range(3)) == 2


async def test_pod_naming_a_missing_podgroup_gets_an_event_not_a_crash(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"
    running = await start_scheduler(name)
    await api.create(PODS.collection_path(namespace), pod_manifest("lost", name, pool, group="nowhere"))
    await api.create(PODS.collection_path(namespace), pod_manifest("fine", name, pool))

    async def warned() -> bool:
        return any("nowhere" in e["message"] for e in await events_for(api, namespace, "lost"))

    await wait_until(warned, "a Warning event naming the missing PodGroup", 30)

    async def fine_bound() -> bool:
        return bool((await pods_by_name(api, namespace))["fine"]["spec"].get("nodeName"))

    await wait_until(fine_bound, "the other pod still scheduled", 30)
    assert not running.task.done()
    queue = await api.get("/apis/scheduling.volcano.sh/v1beta1/queues/default")  # created at start
    assert queue["metadata"]["name"] == "default"


async def bound_count(api: KubeClient, ns: str, names: list[str]) -> int:
    current = await pods_by_name(api, ns)
    return sum(1 for p in names if current.get(p, {}).get("spec", {}).get("nodeName"))


async def test_a_new_gang_is_placed_once_its_pods_stop_arriving_not_at_the_next_period(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"
    running = await start_scheduler(name, schedule_period=120.0)
    await wait_until(lambda: running.scheduler.cycles >= 1, "the first cycle", 30)
    pods = await create_gang(api, namespace, "burst", 4, name, pool, gpus=2)

    async def all_bound() -> bool:
        return await bound_count(api, namespace, pods) == len(pods)

    await wait_until(all_bound, "the gang bound long before the 120 s period is up", 30)


async def test_with_burst_quiet_off_a_new_gang_waits_for_the_period(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"
    running = await start_scheduler(name, schedule_period=120.0, burst_quiet=0.0)
    await wait_until(lambda: running.scheduler.cycles >= 1, "the first cycle", 30)
    pods = await create_gang(api, namespace, "patient", 4, name, pool, gpus=2)
    await asyncio.sleep(3)
    assert await bound_count(api, namespace, pods) == 0
    assert running.scheduler.cycles == 1
