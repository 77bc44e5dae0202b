"""How the two scheduler processes wire their parts, without a cluster: writes fenced by the Lease a process
elects, the agent scheduler's queue fed by its cache's watches, and a pod it cannot place told so once per
message."""

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from volcano_py.kube import patch
from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import PODS
from volcano_py.kube.store import Delta, EventType
from volcano_py.scheduler.runtime.agent import AgentOptions, AgentScheduler
from volcano_py.scheduler.runtime.cycle import default_core
from volcano_py.scheduler.runtime.runner import Scheduler, SchedulerOptions

POD: dict[str, Any] = {
    "kind": "Pod",
    "apiVersion": "v1",
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
    "spec": {"schedulerName": "agent-scheduler"},
    "status": {"phase": "Pending"},
}


@pytest.fixture
async def client() -> AsyncIterator[KubeClient]:
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration()))
    yield client
    await client.close()


def watched(agent: AgentScheduler, event: EventType, old: Any, new: Any) -> None:
    for watcher in agent.cache.watchers:
        watcher(PODS, Delta(event, "ns/p", old, new))


async def test_an_electing_scheduler_fences_its_writes_with_its_lease(client: KubeClient) -> None:
    options = SchedulerOptions(metrics_port=0)
    electing = Scheduler(options, client, default_core(options.scheduler_names))
    assert electing.elector is not None
    assert electing.binder.may_write == electing.elector.may_write
    assert not electing.is_leader
    alone = Scheduler(SchedulerOptions(leader_elect=False, metrics_port=0), client, electing.core)
    assert alone.elector is None and alone.is_leader


async def test_the_agent_lease_is_named_after_the_scheduler_unless_told(client: KubeClient) -> None:
    agent = AgentScheduler(AgentOptions(metrics_port=0), client)
    assert agent.elector is not None and agent.elector.name == "agent-scheduler"
    assert agent.binder.may_write == agent.elector.may_write
    named = AgentScheduler(AgentOptions(metrics_port=0, lease_name="lock"), client)
    assert named.elector is not None and named.elector.name == "lock"


async def test_the_agent_queue_follows_its_watches(client: KubeClient) -> None:
    agent = AgentScheduler(AgentOptions(leader_elect=False, metrics_port=0), client)
    watched(agent, EventType.ADDED, None, POD)
    assert agent.feed.work.is_set()
    assert agent.feed.queue.pop(10, time.monotonic()) == ["ns/p"]
    bound = {**POD, "spec": {**POD["spec"], "nodeName": "n1"}}
    watched(agent, EventType.MODIFIED, POD, bound)
    assert "ns/p" not in agent.feed.waiting
    assert len(agent.feed.queue) == 0


async def test_a_pod_no_node_takes_is_told_once_per_message(
    client: KubeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[str] = []

    async def set_pod_condition(_client: KubeClient, _ns: str, _name: str, condition: Any) -> None:
        written.append(condition["message"])

    monkeypatch.setattr(patch, "set_pod_condition", set_pod_condition)
    agent = AgentScheduler(AgentOptions(leader_elect=False, metrics_port=0), client)
    binder = asyncio.create_task(agent.binder.run())
    try:
        await asyncio.sleep(0)
        watched(agent, EventType.ADDED, None, POD)
        for message in ("no room", "no room", "no gpu"):
            agent.teller.tell("ns/p", POD, message)
        # A pod that stops waiting and waits again is told again.
        watched(agent, EventType.DELETED, POD, POD)
        agent.teller.tell("ns/p", POD, "no gpu")
        await agent.binder.wait_idle()
    finally:
        binder.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await binder
    assert written == ["no room", "no gpu", "no gpu"]
    events = [queue.get_nowait() for queue in agent.recorder.queues for _ in range(queue.qsize())]
    assert sorted((e.reason, e.message) for e in events) == [
        ("FailedScheduling", "no gpu"),
        ("FailedScheduling", "no gpu"),
        ("FailedScheduling", "no room"),
    ]
