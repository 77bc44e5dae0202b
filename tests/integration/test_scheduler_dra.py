"""Dynamic Resource Allocation on a real control plane: kube-controller-manager makes each pod's claim from
its ResourceClaimTemplate, the scheduler places the pod where the claim fits, and writes the allocation and
the reservation before the bind.

Each test names the upstream rule it checks. kube-scheduler's rules are in its dynamicresources plugin
(kubernetes/kubernetes pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go: ``PreFilter``,
``Filter``, ``Reserve``, ``Unreserve``, ``PreBind`` and its ``bindClaim``) and the structured allocator it
calls (staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go:
``Allocator.Allocate``, ``validateDeviceRequest``, ``allocateOne``, ``isSelectable``, ``selectorsMatch``,
``createNodeSelector``); a claim's life after its pod is kube-controller-manager's resourceclaim controller
(pkg/controller/resourceclaim/controller.go: ``handleClaim``, ``syncClaim``). Gangs and queue quotas are
Volcano's, not kube-scheduler's: their rules are cited from Volcano's source.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from test_scheduler_binding import api, events_for, start_scheduler, wait_until
from test_scheduler_preemption import PREEMPT_CONF

from volcano_py.api import constants as c
from volcano_py.api import dra
from volcano_py.devcluster.dra import device_class, gpu_slice
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import PODGROUPS, PODS, PRIORITY_CLASSES, QUEUES, RESOURCE_CLAIMS

pytestmark = pytest.mark.integration
__all__ = ["api", "start_scheduler"]

POOL_LABEL = "volcano-py.io/test-pool"


@pytest.fixture
def dra_nodes(cluster: Any) -> Iterator[Callable[..., tuple[str, list[str]]]]:
    """Makes fresh nodes, one per argument, on which the fake driver publishes that node's GPUs: a count of
    80Gi GPUs, or each GPU's memory in turn. Returns the pool's label value and the node names."""
    made: list[tuple[str, list[str]]] = []

    def make(*gpus: int | Sequence[str]) -> tuple[str, list[str]]:
        name = f"dra{uuid.uuid4().hex[:6]}"
        nodes = cluster.create_nodes(
            len(gpus), prefix=f"{name}-", cpu="16", memory="64Gi", gpus=0, labels={POOL_LABEL: name}
        )
        made.append((name, nodes))
        objects = [device_class(), *(gpu_slice(node, n) for node, n in zip(nodes, gpus, strict=True))]
        cluster.kubectl("apply", "-f", "-", input=_list(objects))
        return name, nodes

    yield make
    for name, nodes in made:
        for node in nodes:
            cluster.kubectl(
                "delete",
                "resourceslice",
                f"{node}-{dra.EXAMPLE_GPU_DRIVER}",
                "--ignore-not-found",
                check=False,
            )
        cluster.delete_nodes(f"{name}-")


@pytest.fixture
def dra_pool(dra_nodes: Callable[..., tuple[str, list[str]]]) -> tuple[str, list[str]]:
    """Two fresh nodes; the fake driver publishes 1 GPU on the first and 2 on the second."""
    return dra_nodes(1, 2)


def _list(items: list[dict[str, Any]]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


def _template(name: str, count: int, selector: str = "") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": dra.EXAMPLE_GPU_CLASS, "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {
        "apiVersion": dra.RESOURCE_API_VERSION,
        "kind": dra.RESOURCE_CLAIM_TEMPLATE_KIND,
        "metadata": {"name": name},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": exactly}]}}},
    }


def _pod(name: str, scheduler: str, pool: str, template: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {POOL_LABEL: pool},
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]},
                }
            ],
        },
    }


async def _claim_of(api: KubeClient, namespace: str, pod: str) -> dict[str, Any] | None:
    current = await api.get(PODS.object_path(pod, namespace))
    for status in current.get("status", {}).get("resourceClaimStatuses") or ():
        if status.get("name") == "gpu" and status.get("resourceClaimName"):
            claim: dict[str, Any] = await api.get(
                RESOURCE_CLAIMS.object_path(status["resourceClaimName"], namespace)
            )
            return claim
    return None


async def _bound(api: KubeClient, namespace: str, pod: str) -> str:
    current = await api.get(PODS.object_path(pod, namespace))
    return str(current["spec"].get("nodeName") or "")


async def _saying(read: Callable[[], Awaitable[str]], needle: str) -> str:
    """What ``read`` says, once it says ``needle`` (a reason may come after a passing one)."""
    said = await read()
    return said if needle in said else ""


async def _unschedulable(api: KubeClient, namespace: str, podgroup: str) -> str:
    """The PodGroup's Unschedulable condition, ``reason: message``."""
    pg = await api.get(PODGROUPS.object_path(podgroup, namespace))
    return " ".join(
        f"{cond.get('reason')}: {cond.get('message')}"
        for cond in (pg.get("status") or {}).get("conditions") or ()
        if cond.get("type") == c.PODGROUP_CONDITION_UNSCHEDULABLE
    )


async def _create_template(api: KubeClient, namespace: str, template: dict[str, Any]) -> None:
    await api.create(
        f"/apis/{dra.RESOURCE_API_VERSION}/namespaces/{namespace}/resourceclaimtemplates", template
    )


async def _create_job(
    api: KubeClient, namespace: str, job: str, pods: Sequence[str], scheduler: str, pool: str, template: str,
    *, queue: str = "default",
) -> None:  # fmt: skip
    """A PodGroup of minMember ``len(pods)`` and its pods, each claiming from ``template``."""
    await api.create(
        PODGROUPS.collection_path(namespace),
        {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.PODGROUP_KIND, "metadata": {"name": job},
         "spec": {"minMember": len(pods), "queue": queue, "minResources": {"cpu": str(len(pods))}}},
    )  # fmt: skip
    for name in pods:
        pod = _pod(name, scheduler, pool, template)
        pod["metadata"]["annotations"] = {c.KUBE_GROUP_NAME_KEY: job}
        await api.create(PODS.collection_path(namespace), pod)


def _devices(claim: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(driver, pool, device) of each device of the claim's allocation."""
    results = claim["status"]["allocation"]["devices"]["results"]
    return [(r["driver"], r["pool"], r["device"]) for r in results]


async def test_a_pod_with_a_claim_for_two_gpus_is_bound_where_they_are_and_the_claim_is_allocated(
    api: KubeClient, namespace: str, dra_pool: tuple[str, list[str]], start_scheduler: Any
) -> None:
    """A pod whose claim template asks for 2 GPUs is bound to the one node whose slice has 2, and its claim
    shows the allocation and the reservation.

    Upstream: ``PreFilter`` waits for the claim the resourceclaim controller's ``handleClaim`` makes from the
    template; ``Filter`` keeps only nodes where ``Allocator.Allocate`` finds ``count`` devices (ExactCount,
    ``validateDeviceRequest``); ``Reserve`` holds the chosen devices, and ``PreBind``'s ``bindClaim`` writes
    ``status.allocation`` (with ``createNodeSelector``'s node) and adds the pod to ``status.reservedFor``
    before the pod is bound.
    """
    pool, nodes = dra_pool
    name = f"sched-{pool}"
    await _create_template(api, namespace, _template("two", 2))
    await start_scheduler(name)
    await api.create(PODS.collection_path(namespace), _pod("trainer", name, pool, "two"))
    assert await wait_until(lambda: _bound(api, namespace, "trainer"), "the pod to be bound", 20) == nodes[1]
    claim = await _claim_of(api, namespace, "trainer")
    assert claim is not None
    status = claim["status"]
    assert sorted(_devices(claim)) == [
        (dra.EXAMPLE_GPU_DRIVER, nodes[1], "gpu-0"),
        (dra.EXAMPLE_GPU_DRIVER, nodes[1], "gpu-1"),
    ]
    assert {r["request"] for r in status["allocation"]["devices"]["results"]} == {"gpus"}
    terms = status["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [nodes[1]]}]}]
    pod = await api.get(PODS.object_path("trainer", namespace))
    assert status["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": pod["metadata"]["uid"]}]


async def test_a_pod_whose_claim_cannot_be_satisfied_stays_pending_with_the_claim_named(
    api: KubeClient, namespace: str, dra_pool: tuple[str, list[str]], start_scheduler: Any
) -> None:
    """A claim for 3 GPUs where no node has 3: the pod stays pending, the claim unallocated.

    Upstream: ``Filter`` returns Unschedulable on every node where ``Allocator.Allocate`` finds no result
    (``allocateOne`` runs out of devices), and nothing is written to the claim before a node is chosen.
    """
    pool, _ = dra_pool
    name = f"sched-{pool}"
    await _create_template(api, namespace, _template("three", 3))
    await start_scheduler(name)
    await api.create(PODS.collection_path(namespace), _pod("greedy", name, pool, "three"))
    claim = await wait_until(lambda: _claim_of(api, namespace, "greedy"), "the pod's claim to be made", 20)
    needle = f"have fewer than 3 free {dra.EXAMPLE_GPU_CLASS} devices for ResourceClaim "
    needle += f"{namespace}/{claim['metadata']['name']} (request gpus)"

    async def told() -> list[str]:
        return [
            e["message"]
            for e in await events_for(api, namespace, "greedy")
            if e["reason"] == "FailedScheduling" and needle in e["message"]
        ]

    await wait_until(told, "a FailedScheduling event naming the claim", 20)
    assert not await _bound(api, namespace, "greedy")
    claim = await api.get(RESOURCE_CLAIMS.object_path(claim["metadata"]["name"], namespace))
    assert "allocation" not in (claim.get("status") or {})


async def test_a_preempted_pods_claim_is_freed_and_the_preemptor_gets_its_devices(
    api: KubeClient, namespace: str, dra_pool: tuple[str, list[str]], start_scheduler: Any, tmp_path: Path
) -> None:
    """A low-priority pod holds the only node's 2 GPUs; a high-priority pod claiming 2 preempts it: the
    victim's claim is deallocated (deleted with the victim, or its allocation cleared) and the preemptor's
    claim gets the same two devices.

    Upstream: the victim's devices are freed only by its claim, never by the scheduler's guess: the
    resourceclaim controller's ``syncClaim`` drops a pod that is gone from ``reservedFor``, clears the
    allocation when the last consumer goes, and deletes a claim made for the pod from a template once
    the pod is gone; until the claim changes the devices count as allocated (``ListAllAllocatedDevices``
    in ``PreFilter``), then ``Filter`` finds them free for the nominated preemptor.
    """
    pool, nodes = dra_pool
    suffix = uuid.uuid4().hex[:6]
    low, high = f"dra-low-{suffix}", f"dra-high-{suffix}"
    for name, value in ((low, 10), (high, 1000)):
        await api.create(
            PRIORITY_CLASSES.collection_path(),
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
             "value": value},
        )  # fmt: skip
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(PREEMPT_CONF)
    name = f"sched-{pool}"
    try:
        await _create_template(api, namespace, _template("two", 2))
        await start_scheduler(name, scheduler_conf=str(conf))
        victim = _pod("victim", name, pool, "two")
        victim["spec"]["priorityClassName"] = low
        await api.create(PODS.collection_path(namespace), victim)
        assert await wait_until(lambda: _bound(api, namespace, "victim"), "the victim bound", 20) == nodes[1]
        old_claim = await _claim_of(api, namespace, "victim")
        assert old_claim is not None
        old_name = old_claim["metadata"]["name"]
        preemptor = _pod("preemptor", name, pool, "two")
        preemptor["spec"]["priorityClassName"] = high
        await api.create(PODS.collection_path(namespace), preemptor)
        assert (
            await wait_until(lambda: _bound(api, namespace, "preemptor"), "the preemptor bound", 60)
            == nodes[1]
        )
        claim = await _claim_of(api, namespace, "preemptor")
        assert claim is not None
        assert sorted(d for _, _, d in _devices(claim)) == ["gpu-0", "gpu-1"]

        async def deallocated() -> bool:
            try:
                gone = await api.get(RESOURCE_CLAIMS.object_path(old_name, namespace))
            except ApiError as err:
                return err.not_found
            return not (gone.get("status") or {}).get("allocation")

        await wait_until(deallocated, "the victim's claim deallocated", 20)
    finally:
        for pc in (low, high):
            with contextlib.suppress(ApiError):
                await api.delete(PRIORITY_CLASSES.object_path(pc))


BIG_GPU = f'device.capacity["{dra.EXAMPLE_GPU_DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0'


async def test_a_selector_on_device_memory_picks_only_the_devices_that_match(
    api: KubeClient, namespace: str, dra_nodes: Callable[..., tuple[str, list[str]]], start_scheduler: Any
) -> None:
    """A claim for 2 GPUs of memory >= 80Gi, on a node whose first two GPUs have 40Gi and last two 80Gi (and
    a node of two 40Gi GPUs): it gets the two 80Gi GPUs; a second such claim finds none left and waits, its
    reason quoting the selector, though four 40Gi GPUs are free.

    Upstream: ``isSelectable`` / ``selectorsMatch``: a device is a candidate for a request only if every CEL
    selector of its DeviceClass and of the request is true for it (``device.capacity[<domain>].<name>`` a
    quantity, compared with ``compareTo``); ``allocateOne`` tries devices in slice order, so an allocator
    ignoring the selector would take gpu-0 and gpu-1.
    """
    pool, nodes = dra_nodes(["40Gi", "40Gi", "80Gi", "80Gi"], ["40Gi", "40Gi"])
    name = f"sched-{pool}"
    await _create_template(api, namespace, _template("big", 2, BIG_GPU))
    await start_scheduler(name)
    await api.create(PODS.collection_path(namespace), _pod("first", name, pool, "big"))
    assert await wait_until(lambda: _bound(api, namespace, "first"), "the first pod bound", 20) == nodes[0]
    claim = await _claim_of(api, namespace, "first")
    assert claim is not None
    assert sorted(_devices(claim)) == [
        (dra.EXAMPLE_GPU_DRIVER, nodes[0], "gpu-2"),
        (dra.EXAMPLE_GPU_DRIVER, nodes[0], "gpu-3"),
    ]

    await api.create(PODS.collection_path(namespace), _pod("second", name, pool, "big"))
    second = await wait_until(lambda: _claim_of(api, namespace, "second"), "the second pod's claim", 20)
    needle = f"have fewer than 2 free {dra.EXAMPLE_GPU_CLASS} devices for ResourceClaim "
    needle += f"{namespace}/{second['metadata']['name']} (request gpus) that match {BIG_GPU}"

    async def told() -> bool:
        return any(
            e["reason"] == "FailedScheduling" and needle in e["message"]
            for e in await events_for(api, namespace, "second")
        )

    await wait_until(told, "a FailedScheduling event quoting the selector", 20)
    assert not await _bound(api, namespace, "second")
    second = await api.get(RESOURCE_CLAIMS.object_path(second["metadata"]["name"], namespace))
    assert "allocation" not in (second.get("status") or {})


@pytest.mark.parametrize(("gpus", "placed"), [((8, 8), 8), ((8, 6), 0)], ids=["room-for-8", "room-for-7"])
async def test_a_gang_of_eight_pods_claiming_two_gpus_each_is_placed_whole_or_not_at_all(
    api: KubeClient, namespace: str, dra_nodes: Callable[..., tuple[str, list[str]]], start_scheduler: Any,
    gpus: tuple[int, int], placed: int,
) -> None:  # fmt: skip
    """Eight pods of minMember 8, each claiming 2 GPUs from one template. With 16 GPUs free all eight are
    bound and every claim has its own two devices on its pod's node; with 14 (room for seven) none is bound
    and no claim is allocated.

    Upstream: kube-scheduler places pods one by one; the all-or-nothing rule is Volcano's gang plugin
    (volcano-src pkg/scheduler/plugins/gang/gang.go:191, its ``AddJobReadyFn``: ready at minMember), with
    the allocate action discarding the statement of a job that did not get ready
    (pkg/scheduler/actions/allocate/allocate.go:865, ``stmt.Discard()``). What a discarded member gives
    back is kube-scheduler's ``Unreserve``: its in-flight allocation is dropped
    (``RemoveClaimPendingAllocation``) and nothing reaches the claim. Each claim's devices are its own:
    ``Allocator.Allocate`` skips devices allocated to other claims, those in flight included
    (``ListAllAllocatedDevices``).
    """
    pool, _ = dra_nodes(*gpus)
    name = f"sched-{pool}"
    await _create_template(api, namespace, _template("two", 2))
    await start_scheduler(name)
    workers = [f"w{i}" for i in range(8)]
    await _create_job(api, namespace, "gang", workers, name, pool, "two")

    if placed:

        async def all_bound() -> bool:
            return all([await _bound(api, namespace, w) for w in workers])

        await wait_until(all_bound, "all eight workers bound", 30)
        seen: set[tuple[str, str, str]] = set()
        for worker in workers:
            pod = await api.get(PODS.object_path(worker, namespace))
            claim = await _claim_of(api, namespace, worker)
            assert claim is not None
            devices = _devices(claim)
            assert len(devices) == 2 and {pool_ for _, pool_, _ in devices} == {pod["spec"]["nodeName"]}
            assert [r["uid"] for r in claim["status"]["reservedFor"]] == [pod["metadata"]["uid"]]
            seen.update(devices)
        assert len(seen) == 16, "two workers were given the same device"
        return

    async def claims_made() -> bool:
        return all([await _claim_of(api, namespace, w) is not None for w in workers])

    await wait_until(claims_made, "every worker's claim made", 30)
    needle = f"free {dra.EXAMPLE_GPU_CLASS} devices for ResourceClaim"
    await wait_until(
        lambda: _saying(lambda: _unschedulable(api, namespace, "gang"), needle),
        f"the gang held: {needle!r}",
        20,
    )
    for worker in workers:
        assert not await _bound(api, namespace, worker)
        claim = await _claim_of(api, namespace, worker)
        assert claim is not None and "allocation" not in (claim.get("status") or {}), worker


QUOTA_CONF = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: capacity
"""


async def test_a_queue_capped_at_four_devices_of_a_class_holds_the_fifth_claims_job_with_the_reason(
    api: KubeClient, namespace: str, dra_nodes: Callable[..., tuple[str, list[str]]], start_scheduler: Any,
    tmp_path: Path,
) -> None:  # fmt: skip
    """A Queue whose capability has ``deviceclass/gpu.example.com: 4``, five one-pod jobs each claiming one
    GPU, eight GPUs on the nodes: four jobs run, the fifth is held with the queue's cap as the reason, and
    the queue's status counts four devices.

    Upstream: kube-scheduler has no queues; this is Volcano's capacity plugin with
    ``capacity.DynamicResourceAllocationEnable`` (volcano-src pkg/scheduler/plugins/capacity/capacity.go:
    51-57, ``DeviceClassCountPrefix`` ``deviceclass/``, a Queue resource counting a class's devices, read
    from capability, deserved and guarantee by ``parseDRAResourceList`` at 142; a task's devices checked
    against the cap by ``checkDRAAllocatable`` at 246).
    """
    pool, _ = dra_nodes(4, 4)
    queue = f"dra-q-{uuid.uuid4().hex[:6]}"
    quota = {"cpu": "100", f"{dra.DEVICE_CLASS_QUOTA_PREFIX}{dra.EXAMPLE_GPU_CLASS}": "4"}
    await api.create(
        QUEUES.collection_path(),
        {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.QUEUE_KIND, "metadata": {"name": queue},
         "spec": {"weight": 1, "capability": quota}},
    )  # fmt: skip
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(QUOTA_CONF)
    name = f"sched-{pool}"
    jobs = [f"job{i}" for i in range(5)]
    try:
        await _create_template(api, namespace, _template("one", 1))
        await start_scheduler(name, scheduler_conf=str(conf))
        for job in jobs:
            await _create_job(api, namespace, job, [job], name, pool, "one", queue=queue)

        async def bound() -> list[str]:
            return [job for job in jobs if await _bound(api, namespace, job)]

        needle = f"queue '{queue}' deviceclass/{dra.EXAMPLE_GPU_CLASS}: would hold 5, capability is 4"

        async def four_bound_and_the_fifth_held() -> str:
            running = await bound()
            if len(running) != 4:
                return ""
            (fifth,) = set(jobs) - set(running)
            return await _saying(lambda: _unschedulable(api, namespace, fifth), needle)

        await wait_until(four_bound_and_the_fifth_held, f"four jobs bound and the fifth held: {needle!r}", 30)
        assert len(await bound()) == 4

        async def counted() -> Any:
            status = (await api.get(QUEUES.object_path(queue))).get("status") or {}
            return (status.get("allocated") or {}).get(f"deviceclass/{dra.EXAMPLE_GPU_CLASS}")

        assert await wait_until(lambda: _equal(counted, "4"), "the queue's status to count 4 devices", 20)
    finally:
        with contextlib.suppress(ApiError):
            await api.delete(QUEUES.object_path(queue))


async def _equal(read: Callable[[], Awaitable[Any]], want: Any) -> bool:
    return await read() == want
