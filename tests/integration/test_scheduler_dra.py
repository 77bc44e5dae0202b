"""Dynamic Resource Allocation on a real control plane: kube-controller-manager makes each pod's claim from
its ResourceClaimTemplate, the scheduler places the pod where the claim fits, and writes the allocation and
the reservation before the bind (kube-scheduler's dynamicresources plugin: Filter, Reserve, PreBind)."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
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
def dra_pool(cluster: Any) -> Iterator[tuple[str, list[str]]]:
    """Two fresh nodes; the fake driver publishes 1 GPU on the first and 2 on the second."""
    name = f"dra{uuid.uuid4().hex[:6]}"
    nodes = cluster.create_nodes(
        2, prefix=f"{name}-", cpu="16", memory="64Gi", gpus=0, labels={POOL_LABEL: name}
    )
    objects = [device_class(), gpu_slice(nodes[0], 1), gpu_slice(nodes[1], 2)]
    cluster.kubectl("apply", "-f", "-", input=_list(objects))
    yield name, nodes
    for node in nodes:
        cluster.kubectl(
            "delete", "resourceslice", f"{node}-{dra.EXAMPLE_GPU_DRIVER}", "--ignore-not-found", check=False
        )
    cluster.delete_nodes(f"{name}-")


def _list(items: list[dict[str, Any]]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


def _template(name: str, count: int) -> dict[str, Any]:
    return {
        "apiVersion": dra.RESOURCE_API_VERSION,
        "kind": dra.RESOURCE_CLAIM_TEMPLATE_KIND,
        "metadata": {"name": name},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpus",
                            "exactly": {"deviceClassName": dra.EXAMPLE_GPU_CLASS, "count": count},
                        }
                    ]
                }
            }
        },
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


async def test_a_pod_with_a_claim_for_two_gpus_is_bound_where_they_are_and_the_claim_is_allocated(
    api: KubeClient, namespace: str, dra_pool: tuple[str, list[str]], start_scheduler: Any
) -> None:
    # Filter (only the node whose slice has 2 free matching devices), Reserve + PreBind (status.allocation
    # and status.reservedFor written before the pods/binding).
    pool, nodes = dra_pool
    name = f"sched-{pool}"
    await api.create(
        f"/apis/{dra.RESOURCE_API_VERSION}/namespaces/{namespace}/resourceclaimtemplates", _template("two", 2)
    )
    await start_scheduler(name)
    await api.create(PODS.collection_path(namespace), _pod("trainer", name, pool, "two"))

    async def bound() -> str:
        pod = await api.get(PODS.object_path("trainer", namespace))
        return str(pod["spec"].get("nodeName") or "")

    assert await wait_until(bound, "the pod to be bound", 20) == nodes[1]
    claim = await _claim_of(api, namespace, "trainer")
    assert claim is not None
    status = claim["status"]
    results = status["allocation"]["devices"]["results"]
    assert sorted(r["device"] for r in results) == ["gpu-0", "gpu-1"]
    assert {(r["driver"], r["pool"], r["request"]) for r in results} == {
        (dra.EXAMPLE_GPU_DRIVER, nodes[1], "gpus")
    }
    pod = await api.get(PODS.object_path("trainer", namespace))
    assert status["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": pod["metadata"]["uid"]}]


async def test_a_pod_whose_claim_cannot_be_satisfied_stays_pending_with_the_claim_named(
    api: KubeClient, namespace: str, dra_pool: tuple[str, list[str]], start_scheduler: Any
) -> None:
    pool, _ = dra_pool
    name = f"sched-{pool}"
    await api.create(
        f"/apis/{dra.RESOURCE_API_VERSION}/namespaces/{namespace}/resourceclaimtemplates",
        _template("three", 3),
    )
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
    pod = await api.get(PODS.object_path("greedy", namespace))
    assert not pod["spec"].get("nodeName")
    claim = await api.get(RESOURCE_CLAIMS.object_path(claim["metadata"]["name"], namespace))
    assert "allocation" not in (claim.get("status") or {})


async def test_a_preempted_pods_claim_is_freed_and_the_preemptor_gets_its_devices(
    api: KubeClient, namespace: str, dra_pool: tuple[str, list[str]], start_scheduler: Any, tmp_path: Path
) -> None:
    # Preemption with DRA: the victim's claim frees its devices only once the victim is gone (the
    # resourceclaim controller deletes a pod's claim after the pod); the preemptor, nominated meanwhile,
    # is then allocated those devices.
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
        await api.create(
            f"/apis/{dra.RESOURCE_API_VERSION}/namespaces/{namespace}/resourceclaimtemplates",
            _template("two", 2),
        )
        await start_scheduler(name, scheduler_conf=str(conf))
        victim = _pod("victim", name, pool, "two")
        victim["spec"]["priorityClassName"] = low
        await api.create(PODS.collection_path(namespace), victim)

        async def bound(pod: str) -> str:
            current = await api.get(PODS.object_path(pod, namespace))
            return str(current["spec"].get("nodeName") or "")

        assert await wait_until(lambda: bound("victim"), "the victim bound", 20) == nodes[1]
        old_claim = await _claim_of(api, namespace, "victim")
        assert old_claim is not None
        preemptor = _pod("preemptor", name, pool, "two")
        preemptor["spec"]["priorityClassName"] = high
        await api.create(PODS.collection_path(namespace), preemptor)
        assert await wait_until(lambda: bound("preemptor"), "the preemptor bound", 60) == nodes[1]
        claim = await _claim_of(api, namespace, "preemptor")
        assert claim is not None
        results = claim["status"]["allocation"]["devices"]["results"]
        assert sorted(r["device"] for r in results) == ["gpu-0", "gpu-1"]
        with contextlib.suppress(ApiError):
            gone = await api.get(RESOURCE_CLAIMS.object_path(old_claim["metadata"]["name"], namespace))
            assert not (gone.get("status") or {}).get("allocation"), "the victim's claim is still allocated"
    finally:
        for pc in (low, high):
            with contextlib.suppress(ApiError):
                await api.delete(PRIORITY_CLASSES.object_path(pc))


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


async def test_a_queue_capped_on_a_device_class_holds_the_job_beyond_it_with_the_reason(
    api: KubeClient, namespace: str, dra_pool: tuple[str, list[str]], start_scheduler: Any, tmp_path: Path
) -> None:
    # Volcano's capacity.DynamicResourceAllocationEnable: a Queue's capability names deviceclass/<class>.
    pool, _ = dra_pool
    queue = f"dra-q-{uuid.uuid4().hex[:6]}"
    # One device of the class for the queue, three in the pool: the second job's claim fits the nodes only.
    quota = {"cpu": "100", f"{dra.DEVICE_CLASS_QUOTA_PREFIX}{dra.EXAMPLE_GPU_CLASS}": "1"}
    await api.create(
        QUEUES.collection_path(),
        {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.QUEUE_KIND, "metadata": {"name": queue},
         "spec": {"weight": 1, "capability": quota}},
    )  # fmt: skip
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(QUOTA_CONF)
    name = f"sched-{pool}"
    try:
        await api.create(
            f"/apis/{dra.RESOURCE_API_VERSION}/namespaces/{namespace}/resourceclaimtemplates",
            _template("one", 1),
        )
        await start_scheduler(name, scheduler_conf=str(conf))
        for job in ("first", "second"):
            await api.create(
                PODGROUPS.collection_path(namespace),
                {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.PODGROUP_KIND, "metadata": {"name": job},
                 "spec": {"minMember": 1, "queue": queue, "minResources": {"cpu": "1"}}},
            )  # fmt: skip
            pod = _pod(job, name, pool, "one")
            pod["metadata"]["annotations"] = {c.KUBE_GROUP_NAME_KEY: job}
            await api.create(PODS.collection_path(namespace), pod)
            if job == "first":
                await wait_until(lambda: _bound(api, namespace, "first"), "the first job's pod bound", 20)

        async def held() -> str:
            pg = await api.get(PODGROUPS.object_path("second", namespace))
            return " ".join(
                f"{cond.get('reason')}: {cond.get('message')}"
                for cond in (pg.get("status") or {}).get("conditions") or ()
                if cond.get("type") == c.PODGROUP_CONDITION_UNSCHEDULABLE
            )

        # Until its claim exists the pod waits for it; then the queue's cap is the reason.
        needle = f"queue '{queue}' deviceclass/{dra.EXAMPLE_GPU_CLASS}: would hold 2, capability is 1"
        await wait_until(lambda: _saying(held, needle), f"the second job held with {needle!r}", 20)
        assert not await _bound(api, namespace, "second")

        async def counted() -> Any:
            status = (await api.get(QUEUES.object_path(queue))).get("status") or {}
            return (status.get("allocated") or {}).get(f"deviceclass/{dra.EXAMPLE_GPU_CLASS}")

        assert await wait_until(counted, "the queue's status to count the devices", 20) == "1"
    finally:
        with contextlib.suppress(ApiError):
            await api.delete(QUEUES.object_path(queue))


async def _saying(read: Callable[[], Awaitable[str]], needle: str) -> str:
    """What ``read`` says, once it says ``needle`` (a reason may come after a passing one)."""
    said = await read()
    return said if needle in said else ""


async def _bound(api: KubeClient, namespace: str, pod: str) -> str:
    current = await api.get(PODS.object_path(pod, namespace))
    return str(current["spec"].get("nodeName") or "")


async def test_a_gang_whose_claims_do_not_all_fit_is_not_placed_at_all(
    api: KubeClient, namespace: str, dra_pool: tuple[str, list[str]], start_scheduler: Any
) -> None:
    # Gang + DRA: two workers of 2 devices each, and only one node with 2 free: neither is bound, and no
    # claim is allocated (the first worker's devices are given back when the gang does not fit whole).
    pool, _ = dra_pool
    name = f"sched-{pool}"
    await api.create(
        f"/apis/{dra.RESOURCE_API_VERSION}/namespaces/{namespace}/resourceclaimtemplates", _template("two", 2)
    )
    await start_scheduler(name)
    await api.create(
        PODGROUPS.collection_path(namespace),
        {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.PODGROUP_KIND, "metadata": {"name": "gang"},
         "spec": {"minMember": 2, "queue": "default"}},
    )  # fmt: skip
    workers = ("w0", "w1")
    for worker in workers:
        pod = _pod(worker, name, pool, "two")
        pod["metadata"]["annotations"] = {c.KUBE_GROUP_NAME_KEY: "gang"}
        await api.create(PODS.collection_path(namespace), pod)

    async def told() -> str:
        pg = await api.get(PODGROUPS.object_path("gang", namespace))
        return " ".join(
            str(cond.get("message"))
            for cond in (pg.get("status") or {}).get("conditions") or ()
            if cond.get("type") == c.PODGROUP_CONDITION_UNSCHEDULABLE
        )

    needle = "free gpu.example.com devices for ResourceClaim"
    await wait_until(lambda: _saying(told, needle), f"the gang held with {needle!r}", 20)
    for worker in workers:
        assert not await _bound(api, namespace, worker)
        claim = await _claim_of(api, namespace, worker)
        assert claim is not None and "allocation" not in (claim.get("status") or {})
