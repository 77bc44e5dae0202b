"""The binder sends each bind once when a session hands some over while it runs and submits its result
after: the result's binds that went over already are not sent again, and every pod is assumed bound."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from kubernetes_asyncio import client as k8s_client

from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import EventRecorder
from volcano_py.scheduler.framework.decisions import Bind, SessionResult
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics


def bind(job: str, n: int) -> Bind:
    return Bind("ns", f"{job}-{n}", f"uid-{job}-{n}", f"node-{n}", f"ns/{job}")


@pytest.fixture
async def binder() -> AsyncIterator[Binder]:
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration(host="http://127.0.0.1:9")))
    binder = Binder(client, SchedulerCache(client), EventRecorder(client), SchedulerMetrics())
    running = asyncio.create_task(binder.run())
    await asyncio.sleep(0)
    yield binder
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    await client.close()


async def test_binds_handed_over_are_not_sent_again_with_the_result(binder: Binder) -> None:
    sent: list[str] = []

    async def bind_one(b: Bind, _untold: list[str] | None = None) -> bool:
        sent.append(b.name)
        return True

    binder.binds._bind_one = bind_one  # type: ignore[method-assign]
    gang = [bind("gang", n) for n in range(3)]
    solo = [bind("solo", 0)]
    late = [bind("late", 0), bind("late", 1)]
    binder.submit_binds((*gang, *solo))  # while the session runs
    binder.submit(SessionResult(binds=(*gang, *solo, *late), handed_over=len(gang) + len(solo)))
    await binder.wait_idle()
    assert sorted(sent) == sorted(b.name for b in (*gang, *solo, *late))
    assert all(binder.cache.assumed_node(f"ns/{b.name}") == b.node for b in (*gang, *solo, *late))
