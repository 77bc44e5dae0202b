"""A Queue's ``status.allocated`` ends at what the last session computed, even when a write of another value
is still on its way while that session runs (the cache still shows the value before it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from volcano_py.kube.events import EventRecorder
from volcano_py.kube.store import EventType
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.decisions import QueueUpdate, SessionResult
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics


class AnsweringClient:
    """Answers each status patch as the API server would: with the next resourceVersion."""

    def __init__(self) -> None:
        self.patches: list[tuple[str, Any]] = []
        self.version = 100

    async def patch(self, path: str, body: Any, content_type: str | None = None) -> dict[str, Any]:
        self.patches.append((path, body))
        self.version += 1
        return {"metadata": {"name": path.rsplit("/", 2)[-2], "resourceVersion": str(self.version)}}


@pytest.fixture
async def binder() -> AsyncIterator[tuple[Binder, AnsweringClient]]:
    client = AnsweringClient()
    cache = SchedulerCache(client)  # type: ignore[arg-type]
    yield Binder(client, cache, EventRecorder(client), SchedulerMetrics()), client  # type: ignore[arg-type]


def watched(binder: Binder, version: int, cpu: str) -> None:
    """The watch brings the default Queue at ``version`` with ``cpu`` allocated."""
    informer = binder.cache.informers["queues"]
    obj = {
        "metadata": {"name": "default", "uid": "q-1", "resourceVersion": str(version)},
        "spec": {"weight": 1},
        "status": {"allocated": {"cpu": cpu}},
    }
    informer._dispatch(informer.store.apply(EventType.MODIFIED, obj))


async def session_says(binder: Binder, cpu: int) -> None:
    binder.submit(SessionResult(queue_updates=(QueueUpdate("default", Resource.of(cpu=cpu)),)))
    await binder.flush_statuses()


def written(client: AnsweringClient) -> list[str]:
    return [body["status"]["allocated"]["cpu"] for _, body in client.patches]


async def test_a_value_the_cache_still_shows_is_written_again_after_another_write(
    binder: tuple[Binder, AnsweringClient],
) -> None:
    b, client = binder
    watched(b, 100, "2")
    await session_says(b, 3)  # a pod bound: 3 written, answered at 101
    await session_says(b, 2)  # the pod finished before the watch showed 101
    assert written(client) == ["3", "2"]
    watched(b, 101, "3")  # the first write's event arrives late ...
    watched(b, 102, "2")  # ... and the second's after it
    await session_says(b, 2)
    assert written(client) == ["3", "2"]


async def test_a_value_on_its_way_is_not_written_twice(binder: tuple[Binder, AnsweringClient]) -> None:
    b, client = binder
    watched(b, 100, "2")
    await session_says(b, 3)
    await session_says(b, 3)  # the watch has not shown 101 yet
    assert written(client) == ["3"]
    watched(b, 101, "3")
    await session_says(b, 3)
    assert written(client) == ["3"]


async def test_once_the_watch_shows_the_write_the_cache_is_the_reference(
    binder: tuple[Binder, AnsweringClient],
) -> None:
    b, client = binder
    watched(b, 100, "2")
    await session_says(b, 3)
    watched(b, 101, "3")
    watched(b, 102, "5")  # another writer set it after ours: ours is no longer what the Queue says
    await session_says(b, 3)
    assert written(client) == ["3", "3"]
