"""Which bound pods get a Scheduled Event of their own, and what a gang bound beyond the budget is told."""

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from volcano_py.kube import binding, patch
from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import EventRecorder, PendingEvent
from volcano_py.kube.store import EventType
from volcano_py.scheduler.framework.decisions import Bind, Evict, SessionResult
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.scheduled import EventBudget, summary

NOW = [0.0]


@pytest.mark.parametrize(
    ("qps", "burst", "takes", "granted"),
    [
        pytest.param(10.0, 3, [0.0] * 5, [True, True, True, False, False], id="burst-then-refused"),
        pytest.param(
            10.0, 3, [0.0, 0.0, 0.0, 0.0, 0.1], [True, True, True, False, True], id="refills-at-qps"
        ),
        pytest.param(
            10.0, 2, [0.0, 0.0, 5.0, 5.0, 5.0], [True, True, True, True, False], id="never-above-burst"
        ),
        pytest.param(0.0, 1, [0.0] * 4, [True] * 4, id="qps-0-is-no-limit"),
    ],
)
def test_the_budget_grants_a_burst_then_qps(
    qps: float, burst: int, takes: list[float], granted: list[bool]
) -> None:
    now = [0.0]
    budget = EventBudget(qps, burst, lambda: now[0])
    seen = []
    for at in takes:
        now[0] = at
        seen.append(budget.take())
    assert seen == granted


@pytest.mark.parametrize(
    ("qps", "burst", "flag"),
    [(-1.0, 10, "--scheduled-event-qps"), (50.0, 0, "--scheduled-event-burst")],
)
def test_a_bad_budget_names_its_flag(qps: float, burst: int, flag: str) -> None:
    with pytest.raises(ValueError, match=flag):
        EventBudget(qps, burst, lambda: 0.0)


def test_the_summary_counts_pods_and_distinct_nodes() -> None:
    assert summary(["n1", "n2", "n1"], 50.0).startswith("Successfully assigned 3 pods to 2 nodes ")
    assert summary(["n1"], 2.5).startswith("Successfully assigned 1 pod to 1 node ")
    assert "held to 2.5 per second (--scheduled-event-qps)" in summary(["n1"], 2.5)


@pytest.fixture
async def binder(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Binder]:
    async def bound(*_: Any, **__: Any) -> None:
        return None

    monkeypatch.setattr(binding, "bind_pod", bound)  # every bind answers at once, as the API server would
    NOW[0] = 0.0
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration(host="http://127.0.0.1:9")))
    cache = SchedulerCache(client)
    b = Binder(
        client,
        cache,
        EventRecorder(client),
        SchedulerMetrics(),
        scheduled_event_qps=1.0,
        scheduled_event_burst=2,
        clock=lambda: NOW[0],
    )
    runner = asyncio.create_task(b.run())
    await asyncio.sleep(0)
    yield b
    runner.cancel()
    await client.close()


def watched(binder: Binder, kind: str, obj: dict[str, Any]) -> None:
    informer = binder.cache.informers[kind]
    informer._dispatch(informer.store.apply(EventType.ADDED, obj))


def recorded(binder: Binder) -> list[PendingEvent]:
    out: list[PendingEvent] = []
    for queue in binder.recorder.queues:
        while not queue.empty():
            out.append(queue.get_nowait())
    return out


def podgroup() -> dict[str, Any]:
    meta = {"name": "pg", "namespace": "ns", "uid": "pg-1", "resourceVersion": "1"}
    return {"kind": "PodGroup", "apiVersion": "scheduling.volcano.sh/v1beta1", "metadata": meta}


def gang(n: int, job: str) -> tuple[Bind, ...]:
    return tuple(Bind("ns", f"p{i}", f"u{i}", f"node-{i % 2}", job) for i in range(n))


async def test_a_gang_bound_beyond_the_budget_is_told_once_on_its_podgroup(binder: Binder) -> None:
    watched(binder, "podgroups", podgroup())
    binder.submit(SessionResult(binds=gang(5, "ns/pg")))
    await binder.wait_idle()
    events = recorded(binder)
    pods = sorted(e.ref.name for e in events if e.ref.kind == "Pod")
    assert len(pods) == 2 and all(e.reason == "Scheduled" for e in events)
    [told] = [e for e in events if e.ref.kind == "PodGroup"]
    assert told.ref.name == "pg" and told.type == "Normal"
    assert told.message.startswith("Successfully assigned 3 pods to 2 nodes ")


async def test_a_one_pod_gang_beyond_the_budget_is_told_only_if_the_budget_has_room_again(
    binder: Binder,
) -> None:
    # A backlog of one-pod jobs: a summary per job would be an Event per pod all the same.
    for name in ("a", "b", "c"):
        meta = {"name": name, "namespace": "ns", "uid": f"pg-{name}", "resourceVersion": "1"}
        watched(binder, "podgroups", {**podgroup(), "metadata": meta})
    binder.submit(
        SessionResult(binds=tuple(Bind("ns", f"{j}0", f"u{j}", "node-0", f"ns/{j}") for j in "abc"))
    )
    await binder.wait_idle()
    assert sorted(e.ref.name for e in recorded(binder)) == ["a0", "b0"]  # the burst of two
    assert binder.metrics.scheduled_events_skipped._value.get() == 1
    NOW[0] = 2.0
    binder.submit(SessionResult(binds=(Bind("ns", "c1", "u-c1", "node-1", "ns/c"),)))
    await binder.wait_idle()
    assert [e.ref.name for e in recorded(binder)] == ["c1"]  # the budget has room again: its own Event


async def test_within_the_budget_every_pod_is_told_and_the_podgroup_is_not(binder: Binder) -> None:
    watched(binder, "podgroups", podgroup())
    binder.submit(SessionResult(binds=gang(2, "ns/pg")))
    await binder.wait_idle()
    NOW[0] = 2.0  # two seconds later the budget has room for two more
    binder.submit(
        SessionResult(binds=tuple(Bind("ns", f"q{i}", f"v{i}", "node-0", "ns/pg") for i in range(2)))
    )
    await binder.wait_idle()
    events = recorded(binder)
    assert sorted(e.ref.name for e in events) == ["p0", "p1", "q0", "q1"]
    assert [e.message for e in events if e.ref.name == "q1"] == ["Successfully assigned ns/q1 to node-0"]


async def test_a_pod_without_a_podgroup_always_gets_its_own_event(binder: Binder) -> None:
    binder.submit(SessionResult(binds=gang(4, "ns/podgroup-none")))
    await binder.wait_idle()
    events = recorded(binder)
    assert sorted(e.ref.name for e in events) == ["p0", "p1", "p2", "p3"]


async def test_binds_and_evictions_past_the_fence_are_dropped_and_taken_back_from_the_cache(
    binder: Binder, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []

    async def bound(_client: Any, _ns: str, name: str, *_: Any) -> None:
        sent.append(name)

    monkeypatch.setattr(binding, "bind_pod", bound)
    # The fence failed after two binds went out (the process froze past its lease, say).
    binder.may_write = lambda what: what in ("bind ns/p0", "bind ns/p1")
    binder.submit(SessionResult(binds=gang(4, "ns/pg"), evictions=(Evict("ns", "v0", "uv0", "preempt"),)))
    await binder.wait_idle()
    assert sorted(sent) == ["p0", "p1"], "binds went out after the fence failed"
    assert binder.fenced == 3
    assert sorted(binder.cache.promises._assumed) == ["ns/p0", "ns/p1"], "a dropped bind is still assumed"
    assert "ns/v0" not in binder.cache.promises._evicting


async def test_the_evict_event_names_the_pod_evicted_not_the_pod_made_again_under_its_name(
    binder: Binder, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def conditioned(*_: Any) -> None:
        return None

    async def deleted(_client: Any, namespace: str, name: str, _uid: str) -> None:
        # The pod's controller makes its successor before the delete answers; the watch shows it at once.
        meta = {"name": name, "namespace": namespace, "uid": "successor", "resourceVersion": "9"}
        watched(binder, "pods", {"kind": "Pod", "apiVersion": "v1", "metadata": meta})

    monkeypatch.setattr(patch, "set_pod_condition", conditioned)
    monkeypatch.setattr(patch, "delete_pod", deleted)
    binder.submit(SessionResult(evictions=(Evict("ns", "v0", "evicted-uid", "preempt"),)))
    await binder.wait_idle()
    [told] = [e for e in recorded(binder) if e.reason == "Evict"]
    assert (told.ref.name, told.ref.uid) == ("v0", "evicted-uid")
