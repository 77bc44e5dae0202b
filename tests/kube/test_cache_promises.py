"""The assume/evict overlay: what the next snapshot shows after a bind or an eviction was sent.

No server is involved: watch events are fed to the cache's informer stores the way a watch would.
"""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from volcano_py.kube.binding import binding_body
from volcano_py.kube.client import KubeClient
from volcano_py.kube.store import EventType
from volcano_py.scheduler.core import NodeUsage
from volcano_py.scheduler.framework.decisions import ClaimWrite
from volcano_py.scheduler.runtime.cache import SchedulerCache


def pod(name: str, rv: str, *, uid: str = "u1", node: str = "", deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": rv}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {"schedulerName": "volcano"}
    if node:
        spec["nodeName"] = node
    return {"metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


@pytest.fixture
async def cache() -> AsyncIterator[SchedulerCache]:
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration()))
    yield SchedulerCache(client)
    await client.close()


def watch(cache: SchedulerCache, event: EventType, obj: dict[str, Any]) -> None:
    informer = cache.informers["pods"]
    informer._dispatch(informer.store.apply(event, obj))


def node_of(cache: SchedulerCache, name: str) -> str | None:
    for p in cache.snapshot().pods:
        if p["metadata"]["name"] == name:
            node = p["spec"].get("nodeName")
            return str(node) if node else None
    raise AssertionError(f"pod {name} not in snapshot")


async def test_assumed_bind_shows_until_the_watch_confirms(cache: SchedulerCache) -> None:
    watch(cache, EventType.ADDED, pod("a", "1"))
    cache.assume("ns/a", "u1", "node-3")
    assert node_of(cache, "a") == "node-3"
    assert cache.informers["pods"].store.get("ns/a") == pod("a", "1")  # the mirror itself is untouched
    watch(cache, EventType.MODIFIED, pod("a", "2", node="node-3"))
    assert cache.assumed_node("ns/a") is None
    assert node_of(cache, "a") == "node-3"


async def test_assumed_bind_carries_the_chosen_gpu_cards(cache: SchedulerCache) -> None:
    # The next session must count the card as taken before the watch shows the bound pod.
    watch(cache, EventType.ADDED, pod("a", "1"))
    cache.assume("ns/a", "u1", "node-3", {"volcano.sh/gpu-index": "1"})
    (seen,) = cache.snapshot().pods
    assert seen["metadata"]["annotations"] == {"volcano.sh/gpu-index": "1"}
    assert "annotations" not in cache.informers["pods"].store.get("ns/a")["metadata"]


def test_binding_body_carries_annotations() -> None:
    body = binding_body("ns", "a", "u1", "node-3", {"volcano.sh/gpu-index": "0"})
    assert body["metadata"] == {
        "name": "a",
        "namespace": "ns",
        "uid": "u1",
        "annotations": {"volcano.sh/gpu-index": "0"},
    }
    assert "annotations" not in binding_body("ns", "a", "u1", "node-3")["metadata"]


async def test_failed_bind_rolls_back(cache: SchedulerCache) -> None:
    watch(cache, EventType.ADDED, pod("a", "1"))
    cache.assume("ns/a", "u1", "node-3")
    generation = cache.generation
    cache.forget("ns/a")
    assert node_of(cache, "a") is None
    assert cache.generation > generation


async def test_unrelated_update_keeps_the_assumption(cache: SchedulerCache) -> None:
    watch(cache, EventType.ADDED, pod("a", "1"))
    cache.assume("ns/a", "u1", "node-3")
    watch(cache, EventType.MODIFIED, pod("a", "2"))  # e.g. a label change before the bind lands
    assert node_of(cache, "a") == "node-3"


async def test_recreated_pod_under_same_name_is_not_assumed(cache: SchedulerCache) -> None:
    watch(cache, EventType.ADDED, pod("a", "1", uid="old"))
    cache.assume("ns/a", "old", "node-1")
    watch(cache, EventType.DELETED, pod("a", "2", uid="old"))
    watch(cache, EventType.ADDED, pod("a", "3", uid="new"))
    assert node_of(cache, "a") is None


async def test_eviction_in_flight_counts_as_releasing(cache: SchedulerCache) -> None:
    watch(cache, EventType.ADDED, pod("v", "1", node="node-1"))
    cache.mark_evicting("ns/v", "u1")
    [seen] = cache.snapshot().pods
    assert seen["metadata"].get("deletionTimestamp")
    watch(cache, EventType.MODIFIED, pod("v", "2", node="node-1", deleting=True))
    cache_pods = cache.snapshot().pods
    assert cache_pods[0]["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:00Z"
    watch(cache, EventType.DELETED, pod("v", "3", node="node-1", deleting=True))
    assert cache.snapshot().pods == []


async def test_scheduler_names_are_required() -> None:
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration()))
    try:
        with pytest.raises(ValueError, match="scheduler_names"):
            SchedulerCache(client, scheduler_names=())
    finally:
        await client.close()


def gated(p: dict[str, Any], *names: str) -> dict[str, Any]:
    return {**p, "spec": {**p["spec"], "schedulingGates": [{"name": n} for n in names]}}


@pytest.mark.parametrize(
    ("first", "then", "arrives"),
    [
        pytest.param(gated(pod("a", "1"), "g"), pod("a", "2"), True, id="gates-removed"),
        pytest.param(gated(pod("a", "1"), "g", "h"), gated(pod("a", "2"), "h"), False, id="one-gate-left"),
        pytest.param(pod("a", "1"), pod("a", "2"), False, id="ungated-pod-updated"),
        pytest.param(gated(pod("a", "1"), "g"), pod("a", "2", node="n1"), False, id="bound-elsewhere"),
    ],
)
async def test_a_pod_whose_gates_are_removed_is_an_arrival(
    cache: SchedulerCache, first: dict[str, Any], then: dict[str, Any], arrives: bool
) -> None:
    # An arrival starts the next cycle early: a gang whose last gate goes is placed without a period's wait.
    watch(cache, EventType.ADDED, first)
    cache.arrival.clear()
    watch(cache, EventType.MODIFIED, then)
    assert cache.arrival.is_set() is arrives


def _claim(rv: str, status: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {"name": "c", "namespace": "ns", "uid": "cu", "resourceVersion": rv}
    return {"metadata": meta, "spec": {"devices": {"requests": []}}, "status": status or {}}


def watch_claim(cache: SchedulerCache, event: EventType, obj: dict[str, Any]) -> None:
    informer = cache.informers["resource_claims"]
    informer._dispatch(informer.store.apply(event, obj))


async def test_a_claim_written_with_a_bind_counts_as_allocated_until_the_watch_shows_it(
    cache: SchedulerCache,
) -> None:
    # Else the next cycle would offer the claim's devices to another pod while the write is on its way.
    allocation = {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "g0"}]}}
    watch_claim(cache, EventType.ADDED, _claim("1"))
    cache.assume_claims("a", "u1", [ClaimWrite("ns", "c", "cu", allocation)])
    (seen,) = cache.snapshot().resource_claims
    assert seen["status"] == {
        "allocation": allocation,
        "reservedFor": [{"resource": "pods", "name": "a", "uid": "u1"}],
    }
    assert cache.informers["resource_claims"].store.get("ns/c") == _claim("1")
    written = {"allocation": allocation, "reservedFor": [{"resource": "pods", "name": "a", "uid": "u1"}]}
    watch_claim(cache, EventType.MODIFIED, _claim("2", written))
    assert cache.promises._claims == {}


async def test_a_failed_bind_forgets_its_claims(cache: SchedulerCache) -> None:
    watch_claim(cache, EventType.ADDED, _claim("1"))
    cache.assume_claims("a", "u1", [ClaimWrite("ns", "c", "cu", {"devices": {"results": []}})])
    cache.forget_claims("u1")
    assert cache.snapshot().resource_claims == [_claim("1")]


async def test_node_usage_reaches_the_snapshot_and_a_change_is_news(cache: SchedulerCache) -> None:
    at = datetime(2026, 1, 1, 12, tzinfo=UTC)
    cache.set_node_usage({"n0": NodeUsage(90.0, 10.0, at)})
    first = cache.generation
    assert cache.snapshot().node_usage == {"n0": NodeUsage(90.0, 10.0, at)}
    cache.set_node_usage({"n0": NodeUsage(90.0, 10.0, at + timedelta(seconds=30))})
    assert cache.generation == first  # the same load read again: nothing for a new cycle to decide
    assert cache.snapshot().node_usage["n0"].collected_at == at + timedelta(seconds=30)
    cache.set_node_usage({"n0": NodeUsage(20.0, 10.0, at)})
    assert cache.generation == first + 1


def podgroup(rv: str, phase: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "pg", "namespace": "ns", "uid": "pg-1", "resourceVersion": rv},
        "spec": {"minMember": 1},
        "status": {"phase": phase},
    }


def watch_podgroup(cache: SchedulerCache, event: EventType, obj: dict[str, Any]) -> None:
    informer = cache.informers["podgroups"]
    informer._dispatch(informer.store.apply(event, obj))


def phase_of(cache: SchedulerCache) -> str:
    (group,) = cache.snapshot().podgroups
    return str(group["status"]["phase"])


async def test_a_status_being_written_shows_until_the_watch_brings_a_newer_podgroup(
    cache: SchedulerCache,
) -> None:
    # Without it the next cycle sees the gang Pending still and admits it again, every cycle until the watch
    # catches up: thousands of times over in a backlog.
    watch_podgroup(cache, EventType.ADDED, podgroup("1", "Pending"))
    before = cache.generation
    cache.promise_status("ns/pg", {"phase": "Running", "running": 0})
    assert cache.generation > before  # a cycle runs to see it
    assert phase_of(cache) == "Running"
    first, again = cache.snapshot().podgroups[0], cache.snapshot().podgroups[0]
    assert first is again  # one view while nothing changes: the scheduler reads it once
    assert cache.podgroup("ns/pg") == podgroup("1", "Pending")  # the mirror itself is untouched
    watch_podgroup(cache, EventType.MODIFIED, podgroup("2", "Inqueue"))
    assert cache.promised_status("ns/pg") is None
    assert phase_of(cache) == "Inqueue"  # newer than the promise: the API's word now


async def test_a_refused_status_write_shows_the_podgroup_as_the_api_has_it(cache: SchedulerCache) -> None:
    watch_podgroup(cache, EventType.ADDED, podgroup("1", "Pending"))
    written = {"phase": "Inqueue"}
    cache.promise_status("ns/pg", written)
    cache.withdraw_status("ns/pg", {"phase": "Inqueue"})  # another write's status: not this promise
    assert phase_of(cache) == "Inqueue"
    cache.withdraw_status("ns/pg", written)
    assert phase_of(cache) == "Pending"


async def test_a_promise_the_watch_never_settles_is_dropped_in_time(
    cache: SchedulerCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    from volcano_py.scheduler.runtime import promises

    watch_podgroup(cache, EventType.ADDED, podgroup("1", "Pending"))
    clock = [100.0]
    monkeypatch.setattr(promises.time, "monotonic", lambda: clock[0])
    written = {"phase": "Inqueue"}
    cache.promise_status("ns/pg", written)
    # Still on its way (a backlog's status writes wait behind its binds): kept however long it waits.
    clock[0] += 10 * promises.STATUS_PROMISE_SECONDS
    assert phase_of(cache) == "Inqueue"
    cache.status_written("ns/pg", written)  # answered: the watch should show it soon
    clock[0] += promises.STATUS_PROMISE_SECONDS - 1
    assert phase_of(cache) == "Inqueue"
    clock[0] += 2
    assert phase_of(cache) == "Pending"


async def test_a_new_podgroup_and_a_failed_bind_are_news_a_held_cycle_waits_for(
    cache: SchedulerCache,
) -> None:
    # A Volcano Job's pods come only once enqueue admits its PodGroup, and a pod whose bind failed waits
    # again: either ends the hold on cycles while a backlog's binds go out (``Pacing``).
    before = cache.last_news
    podgroups = cache.informers["podgroups"]
    group = {"metadata": {"name": "g", "namespace": "ns", "resourceVersion": "1"}, "spec": {"minMember": 1}}
    podgroups._dispatch(podgroups.store.apply(EventType.ADDED, group))
    added = cache.last_news
    assert added > before
    podgroups._dispatch(podgroups.store.apply(EventType.MODIFIED, {**group, "status": {"phase": "Inqueue"}}))
    assert cache.last_news == added  # a status the scheduler itself wrote, most likely: no news
    watch(cache, EventType.ADDED, pod("a", "1"))
    cache.assume("ns/a", "u1", "node-3")
    assert cache.last_news == added
    cache.forget("ns/a")
    assert cache.last_news > added
