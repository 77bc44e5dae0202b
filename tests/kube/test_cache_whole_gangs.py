"""The cache knows when a new pod makes its gang whole (its PodGroup's minMember pods exist), the moment an
early cycle can place it; a pod of a gang still short of pods is only an arrival.

No server is involved: watch events are fed to the cache's informer stores the way a watch would.
"""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from volcano_py.api import constants as c
from volcano_py.kube.client import KubeClient
from volcano_py.kube.store import EventType
from volcano_py.scheduler.runtime.cache import SchedulerCache

NEVER = float("-inf")


def pod(
    name: str, group: str | None, *, rv: str = "1", scheduler: str = "volcano", node: str = ""
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": rv}
    if group is not None:
        meta["annotations"] = {c.KUBE_GROUP_NAME_KEY: group}
    spec: dict[str, Any] = {"schedulerName": scheduler}
    if node:
        spec["nodeName"] = node
    return {"metadata": meta, "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def podgroup(name: str, min_member: int) -> dict[str, Any]:
    meta = {"name": name, "namespace": "ns", "uid": f"uid-pg-{name}", "resourceVersion": "1"}
    return {"metadata": meta, "spec": {"minMember": min_member}, "status": {"phase": "Inqueue"}}


@pytest.fixture
async def cache() -> AsyncIterator[SchedulerCache]:
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration()))
    yield SchedulerCache(client)
    await client.close()


def watch(cache: SchedulerCache, kind: str, event: EventType, obj: dict[str, Any]) -> None:
    informer = cache.informers[kind]
    informer._dispatch(informer.store.apply(event, obj))


def whole_after(cache: SchedulerCache, event: EventType, obj: dict[str, Any]) -> bool:
    """Whether this pod event counted as a whole gang arriving (and as an arrival at all)."""
    cache.last_arrival = cache.last_whole = NEVER
    watch(cache, "pods", event, obj)
    return cache.last_whole > NEVER


async def test_the_last_pod_of_a_gang_makes_it_whole(cache: SchedulerCache) -> None:
    watch(cache, "podgroups", EventType.ADDED, podgroup("g", 3))
    assert not whole_after(cache, EventType.ADDED, pod("g-0", "g"))
    assert cache.last_arrival > NEVER  # still an arrival: a pause in the burst starts a cycle
    assert not whole_after(cache, EventType.ADDED, pod("g-1", "g"))
    assert not whole_after(cache, EventType.ADDED, pod("x-0", "g", scheduler="default-scheduler"))
    assert whole_after(cache, EventType.ADDED, pod("g-2", "g"))
    # A member replaced (deleted, then created again) makes it whole once more, and not before.
    watch(cache, "pods", EventType.DELETED, pod("g-1", "g"))
    assert whole_after(cache, EventType.ADDED, pod("g-0b", "g", rv="2"))
    watch(cache, "pods", EventType.DELETED, pod("g-0b", "g"))
    watch(cache, "pods", EventType.DELETED, pod("g-0", "g"))
    assert not whole_after(cache, EventType.ADDED, pod("g-3", "g"))
    assert whole_after(cache, EventType.ADDED, pod("g-4", "g"))


async def test_a_gang_without_its_podgroup_is_not_whole(cache: SchedulerCache) -> None:
    assert not whole_after(cache, EventType.ADDED, pod("early-0", "early"))
    watch(cache, "podgroups", EventType.ADDED, podgroup("early", 2))
    assert whole_after(cache, EventType.ADDED, pod("early-1", "early"))


async def test_a_plain_pod_is_whole_once_its_podgroup_is_named_on_it(cache: SchedulerCache) -> None:
    # Volcano's PodGroup controller makes a one-pod PodGroup for a plain pod, then names it on the pod.
    assert not whole_after(cache, EventType.ADDED, pod("plain", None))
    watch(cache, "podgroups", EventType.ADDED, podgroup("podgroup-plain", 1))
    assert whole_after(cache, EventType.MODIFIED, pod("plain", "podgroup-plain", rv="2"))
    # Once bound, a change to it is no arrival.
    watch(cache, "pods", EventType.MODIFIED, pod("plain", "podgroup-plain", rv="3", node="n1"))
    assert not whole_after(cache, EventType.MODIFIED, pod("plain", "podgroup-plain", rv="4", node="n1"))
    assert cache.last_arrival == NEVER
