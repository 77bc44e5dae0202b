"""The agent scheduler's pod listing: every pod as its sessions see it (its own pods as another scheduler's,
but those an attempt places), with the promises in force, and each listing saying how it differs from the
one before so that the session's views catch up by those pods alone.

No server: watch events are fed to the cache's pod informer the way a watch would.
"""

from __future__ import annotations

import functools
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from volcano_py.kube.client import KubeClient
from volcano_py.kube.store import Delta, EventType
from volcano_py.scheduler.agent import pods as agent_pods
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.shown_pods import GONE_AT_MOST, PodListing, ShownPods

AGENT = "agent-scheduler"


def pod(name: str, rv: str, *, scheduler: str = AGENT, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": scheduler}
    if node:
        spec["nodeName"] = node
    meta = {"name": name, "namespace": "ns", "uid": f"u-{name}", "resourceVersion": rv}
    return {"metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


@pytest.fixture
async def cache() -> AsyncIterator[SchedulerCache]:
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration()))
    yield SchedulerCache(
        client, scheduler_names=(AGENT,), shown_as=functools.partial(agent_pods.shown_as, AGENT)
    )
    await client.close()


def watch(cache: SchedulerCache, event: EventType, obj: dict[str, Any]) -> None:
    informer = cache.informers["pods"]
    informer._dispatch(informer.store.apply(event, obj))


def seen(cache: SchedulerCache, placing: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """Each pod of the snapshot: (schedulerName, nodeName) as the session sees it."""
    return {
        p["metadata"]["name"]: (p["spec"].get("schedulerName", ""), p["spec"].get("nodeName", ""))
        for p in cache.snapshot(placing=placing, podgroups=False).pods
    }


async def test_own_pods_are_another_schedulers_but_those_placed_now(cache: SchedulerCache) -> None:
    watch(cache, EventType.ADDED, pod("mine", "1"))
    watch(cache, EventType.ADDED, pod("bound", "2", node="n1"))
    watch(cache, EventType.ADDED, pod("theirs", "3", scheduler="volcano"))
    assert seen(cache) == {"mine": ("", ""), "bound": ("", "n1"), "theirs": ("volcano", "")}
    assert seen(cache, ("ns/mine",)) == {"mine": (AGENT, ""), "bound": ("", "n1"), "theirs": ("volcano", "")}
    # The next attempt places another: the first is another scheduler's again.
    watch(cache, EventType.ADDED, pod("next", "4"))
    assert seen(cache, ("ns/next",))["mine"] == ("", "")
    assert seen(cache, ("ns/next",))["next"] == (AGENT, "")


async def test_an_assumed_bind_shows_on_its_node_until_the_watch_brings_it(cache: SchedulerCache) -> None:
    watch(cache, EventType.ADDED, pod("a", "1"))
    cache.assume("ns/a", "u-a", "n2")
    assert seen(cache)["a"][1] == "n2"
    watch(cache, EventType.MODIFIED, pod("a", "2", node="n2"))
    assert cache.assumed_node("ns/a") is None
    assert seen(cache) == {"a": ("", "n2")}  # bound: another scheduler's, on its node
    cache.assume("ns/b", "u-b", "n3")  # not in the store: nothing to show
    assert seen(cache) == {"a": ("", "n2")}


async def test_an_eviction_in_flight_shows_the_pod_terminating_as_its_scheduler_sees_it(
    cache: SchedulerCache,
) -> None:
    watch(cache, EventType.ADDED, pod("v", "1", node="n1"))
    cache.mark_evicting("ns/v", "u-v")
    [shown] = cache.snapshot(podgroups=False).pods
    assert shown["metadata"].get("deletionTimestamp")
    assert shown["spec"]["schedulerName"] == ""
    cache.unmark_evicting("ns/v")
    [shown] = cache.snapshot(podgroups=False).pods
    assert "deletionTimestamp" not in shown["metadata"]


async def test_a_deleted_pod_is_listed_finished_in_its_place_until_the_list_is_compacted(
    cache: SchedulerCache,
) -> None:
    for i in range(3):
        watch(cache, EventType.ADDED, pod(f"p{i}", str(i), node="n1"))
    watch(cache, EventType.DELETED, pod("p1", "9", node="n1"))
    listed = cache.snapshot(podgroups=False).pods
    assert [(p["metadata"]["name"], p["status"]["phase"]) for p in listed] == [
        ("p0", "Pending"), ("p1", "Succeeded"), ("p2", "Pending"),
    ]  # fmt: skip
    watch(cache, EventType.ADDED, pod("p1", "10"))  # made again under its name: in the same place
    assert list(seen(cache)) == ["p0", "p1", "p2"]
    assert seen(cache)["p1"] == ("", "")
    # Enough deleted: the list is compacted, the finished ones gone.
    for i in range(3, 3 + GONE_AT_MOST + 8):
        watch(cache, EventType.ADDED, pod(f"p{i}", str(100 + i)))
    for i in range(3, 3 + GONE_AT_MOST + 8):
        watch(cache, EventType.DELETED, pod(f"p{i}", str(200 + i)))
    names = list(seen(cache))
    assert names[:3] == ["p0", "p1", "p2"]
    assert len(names) < 3 + GONE_AT_MOST + 8
    assert cache.shown is not None and len(cache.shown) == 3


def test_each_listing_is_the_last_with_its_changes_listed() -> None:
    """Against a listing built from scratch, through random adds, changes, deletes and patches: the same
    pods in the same order, and ``changed`` (with what was appended) covers every place that differs."""
    rng = random.Random(7)
    shown = ShownPods(lambda obj: {**obj, "shown": True})
    held: dict[str, dict[str, Any]] = {}
    last: list[dict[str, Any]] | None = None
    for version in range(1, 401):
        key = f"ns/p{rng.randrange(30)}"
        roll = rng.random()
        if roll < 0.15 and key in held:
            delta = Delta(EventType.DELETED, key, held[key], held.pop(key))
        elif roll < 0.85:
            obj = {"metadata": {"name": key, "resourceVersion": str(version)}}
            delta = Delta(EventType.MODIFIED if key in held else EventType.ADDED, key, held.get(key), obj)
            held[key] = obj
        else:
            delta = None
        if delta is not None:
            shown.observe(delta)
        patch = {k: {"patched": k} for k in rng.sample(sorted(held), min(len(held), rng.randrange(4)))}
        listing = shown.listing(patch)
        assert isinstance(listing, PodListing)
        finished = [obj for obj in listing if (obj.get("status") or {}).get("phase") == "Succeeded"]
        names = [obj.get("patched") or obj["metadata"]["name"] for obj in listing if obj not in finished]
        assert sorted(names) == sorted(held)
        assert not {obj["metadata"]["name"] for obj in finished} & set(held)  # deleted, not yet compacted
        assert all(obj.get("shown") for obj in listing if "patched" not in obj)
        for obj in listing:
            if "patched" not in obj and obj not in finished:
                assert obj["metadata"] == held[obj["metadata"]["name"]]["metadata"]
        if listing.base is not None:
            assert listing.base is last
            differs = {at for at, obj in enumerate(listing[: len(last)]) if obj is not last[at]}
            assert differs <= set(listing.changed)
        last = listing
