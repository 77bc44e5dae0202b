"""A PodGroup's status ends as the last session said, whatever became of the write before: one refused, one
that never reached the API server, one another writer replaced after it landed are written again by the next
session, not a retell window later; one that landed and that the watch has not shown yet is not written twice;
and a writer that takes a status after the lease was lost writes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.kube.client import ApiError
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.store import EventType
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.decisions import Condition, PodGroupUpdate, QueueUpdate, SessionResult
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics

SCHEDULED = Condition("Scheduled", "True", "tasks in gang are ready to be scheduled", "")
RUNNING = {"phase": "Running", "running": 1, "succeeded": 0, "failed": 0}


class FakeApi:
    """The API server's copy of one PodGroup, ``ns/pg``: status patches land on it (or are refused, or never
    arrive), each change takes the next resourceVersion, and the watch shows it when a test says so."""

    def __init__(self) -> None:
        self.version = 100
        self.status: dict[str, Any] = dict(RUNNING)
        self.history = {self.version: self.status}  # each version's status
        self.landed = 0
        self.queue_writes = 0
        self.fails: Exception | None = None  # what the next patch meets instead of landing
        self.binder: Binder | None = None

    def podgroup(self, version: int) -> dict[str, Any]:
        return {
            "metadata": {"name": "pg", "namespace": "ns", "uid": "pg-1", "resourceVersion": str(version)},
            "spec": {"minMember": 1, "queue": "default"},
            "status": dict(self.history[version]),
        }

    async def patch(self, path: str, body: Any, content_type: str | None = None) -> dict[str, Any]:
        if self.fails is not None:
            failure, self.fails = self.fails, None
            raise failure
        if "/queues/" in path:
            self.queue_writes += 1
            return {"metadata": {"name": "default", "resourceVersion": "1"}}
        self.landed += 1
        self.change(body["status"])
        return self.podgroup(self.version)

    def change(self, status: dict[str, Any]) -> None:
        self.status = {**self.status, **status}
        self.version += 1
        self.history[self.version] = self.status

    def watch(self, version: int | None = None) -> None:
        """The watch brings the PodGroup as the API holds it, or as it was at an earlier ``version``."""
        assert self.binder is not None
        informer = self.binder.cache.informers["podgroups"]
        obj = self.podgroup(self.version if version is None else version)
        informer._dispatch(informer.store.apply(EventType.MODIFIED, obj))

    def counts(self) -> tuple[str, int, int]:
        return self.status["phase"], self.status["running"], self.status["succeeded"]


NOW = [1000.0]


@pytest.fixture
async def api() -> AsyncIterator[FakeApi]:
    NOW[0] = 1000.0
    fake = FakeApi()
    cache = SchedulerCache(fake)  # type: ignore[arg-type]
    fake.binder = Binder(
        fake,  # type: ignore[arg-type]
        cache,
        EventRecorder(fake),  # type: ignore[arg-type]
        SchedulerMetrics(),
        clock=lambda: NOW[0],
    )
    fake.watch()
    yield fake


async def session_says_completed(binder: Binder) -> None:
    """A session finds the PodGroup's one pod Succeeded, and its status is flushed."""
    done = PodGroupUpdate("ns", "pg", PodGroupPhase.COMPLETED, (SCHEDULED,), 0, 1, 0)
    binder.submit(SessionResult(podgroup_updates=(done,)))
    await binder.flush_statuses()


def refused(api: FakeApi) -> None:
    api.fails = ApiError(500, "InternalError", "etcd leader changed")


def unreachable(api: FakeApi) -> None:
    api.fails = aiohttp.ClientConnectionError("Cannot connect to host: connection refused")


def nothing_happens(api: FakeApi) -> None:
    pass


def watched(api: FakeApi) -> None:
    api.watch()


def replaced_by_another_writer(api: FakeApi) -> None:
    # A leader frozen past its lease wakes with a write of the pod still running already sent.
    api.watch()
    api.change(RUNNING)
    api.watch()


def spec_patched(api: FakeApi) -> None:
    # The Job controller's patch (its spec) lands just before the status write.
    api.change({})


def watch_behind_the_write(api: FakeApi) -> None:
    # The watch brings that patch (a new version, the status still as before) and not yet the write.
    api.watch(version=api.version - 1)


@dataclass(frozen=True, slots=True)
class Case:
    before_write: Any  # what the API does to the first write
    after_write: Any  # what the watch shows before the next session
    landed: int  # writes the API server took in all


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(Case(refused, nothing_happens, 1), id="refused"),
        pytest.param(Case(unreachable, nothing_happens, 1), id="api-server-unreachable"),
        pytest.param(Case(nothing_happens, replaced_by_another_writer, 2), id="replaced-after-it-landed"),
        pytest.param(Case(nothing_happens, watched, 1), id="landed-and-shown"),
        pytest.param(Case(nothing_happens, nothing_happens, 1), id="landed-not-shown-yet"),
        pytest.param(Case(spec_patched, watch_behind_the_write, 1), id="landed-watch-behind"),
    ],
)
async def test_the_podgroup_ends_saying_its_pod_succeeded_within_a_session_of_a_failed_write(
    api: FakeApi, case: Case
) -> None:
    assert api.binder is not None
    case.before_write(api)
    await session_says_completed(api.binder)
    case.after_write(api)
    NOW[0] += 1  # the next session, well within the retell window
    await session_says_completed(api.binder)
    assert api.counts() == ("Completed", 0, 1)
    assert api.landed == case.landed


async def test_a_status_a_writer_takes_after_the_lease_was_lost_is_not_written(api: FakeApi) -> None:
    # Handed over while leading; the process freezes before a writer takes it, and wakes deposed.
    binder = api.binder
    assert binder is not None
    leading = [True]
    binder.may_write = lambda _what: leading[0]
    queues = binder.cache.informers["queues"]
    queue = {"metadata": {"name": "default", "uid": "q-1", "resourceVersion": "1"}, "spec": {"weight": 1}}
    queues._dispatch(queues.store.apply(EventType.ADDED, queue))
    done = PodGroupUpdate("ns", "pg", PodGroupPhase.COMPLETED, (SCHEDULED,), 0, 1, 0)
    held = QueueUpdate("default", Resource.of(cpu=1))
    binder.submit(SessionResult(podgroup_updates=(done,), queue_updates=(held,)))
    binder.statuses._hand_over()
    leading[0] = False
    await binder.flush_statuses()
    assert (api.landed, api.queue_writes) == (0, 0)
    (shown,) = binder.cache.snapshot().podgroups
    assert shown["status"]["running"] == 1  # not promised any more: the next leader writes it
    # Leading again later: its next session's status goes out at once.
    leading[0] = True
    NOW[0] += 1
    await session_says_completed(binder)
    assert api.counts() == ("Completed", 0, 1)
