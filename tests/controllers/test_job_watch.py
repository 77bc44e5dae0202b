"""``--job-watch kopf``: Kopf's event handlers feed the same functions as the informers, and the Job workers
wait until Kopf has shown every object that existed at the start (or it is gone), without a Kopf index."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ctl_builders import JobBuilder  # type: ignore[import-not-found]

from volcano_py.api import constants as c
from volcano_py.controllers.handlers import build_registry, register_job_watch
from volcano_py.controllers.job import watch as job_watch
from volcano_py.controllers.job.watch import JobFeed, KopfWatch, delta_of
from volcano_py.controllers.runtime.context import ControllerContext, ControllerOptions
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.kube.store import Delta, EventType
from volcano_py.kube.waiting import within


def context() -> ControllerContext:
    return ControllerContext(
        options=ControllerOptions(job_watch="kopf"),
        client=None,
        recorder=None,
        metrics=ControllerMetrics(),  # type: ignore[arg-type]
    )


class Lists:
    """A client whose lists answer from ``items`` (by collection path), as they stand at each call."""

    def __init__(self, items: dict[str, list[dict[str, Any]]]) -> None:
        self.items = items
        self.lists: list[str] = []

    async def get(self, path: str, **_: Any) -> dict[str, Any]:
        self.lists.append(path)
        return {
            "items": [dict(obj) for obj in self.items.get(path, [])],
            "metadata": {"resourceVersion": "7"},
        }


def meta(name: str, uid: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "uid": uid, "labels": labels}}


JOBS_PATH = "/apis/batch.volcano.sh/v1alpha1/jobs"
PODGROUPS_PATH = "/apis/scheduling.volcano.sh/v1beta1/podgroups"
PODS_PATH = "/api/v1/pods"


def watch_of(client: Lists, seen: list[Delta] | None = None) -> tuple[ControllerContext, KopfWatch]:
    ctx = context()
    feed = JobFeed(ctx, (seen if seen is not None else []).append)
    return ctx, KopfWatch(client, feed, [None])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kopf_type", "expected"),
    [
        pytest.param(None, EventType.ADDED, id="listed"),
        pytest.param("ADDED", EventType.ADDED, id="added"),
        pytest.param("MODIFIED", EventType.MODIFIED, id="modified"),
        pytest.param("DELETED", EventType.DELETED, id="deleted"),
    ],
)
def test_a_kopf_event_is_the_informers_delta_without_the_field_ledger(
    kopf_type: str | None, expected: EventType
) -> None:
    body = JobBuilder("job").obj()
    body["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    delta = delta_of({"type": kopf_type, "object": body})
    assert delta is not None
    assert (delta.type, delta.key, delta.old) == (expected, "ns/job", None)
    assert "managedFields" not in delta.new["metadata"] and delta.new["spec"] == body["spec"]
    assert "managedFields" in body["metadata"]  # Kopf's own copy is left as it is


def test_an_event_without_an_object_change_is_no_delta() -> None:
    assert delta_of({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}) is None
    assert delta_of({"type": "ADDED", "object": None}) is None


def test_kopf_watches_the_three_kinds_with_plain_event_handlers_and_no_index() -> None:
    ctx, watch = watch_of(Lists({}))
    registry = build_registry(ctx)
    before = {selector.any_name for selector in registry._watching.get_all_selectors()}
    register_job_watch(registry, watch)
    watched = {selector.any_name for selector in registry._watching.get_all_selectors()} - before
    indexed = {selector.any_name for selector in registry._indexing.get_all_selectors()}
    assert watched == {c.JOB_PLURAL, c.PODGROUP_PLURAL, "pods"}
    assert not watched & indexed


async def test_kopf_events_feed_the_job_controller_as_the_informers_do() -> None:
    seen: list[Delta] = []
    ctx, watch = watch_of(Lists({}), seen)
    job = JobBuilder("job").obj()
    watch.job_event({"type": None, "object": job})
    assert ctx.job(("ns", "job")) is not None and ctx.job_queue.depth() == 1
    assert [d.key for d in seen] == ["ns/job"]  # the flow controllers' view too
    owner = {"apiVersion": c.BATCH_API_VERSION, "kind": c.JOB_KIND, "name": "job"}
    group = {"metadata": {"name": "job-pg", "namespace": "ns", "uid": "pg", "ownerReferences": [owner]},
             "spec": {"queue": "q"}, "status": {"phase": "Inqueue"}}  # fmt: skip
    watch.podgroup_event({"type": "ADDED", "object": group})
    assert ctx.podgroup("ns", "job-pg") is not None
    pod = meta("job-w-0", "pod-uid", **{c.JOB_NAME_KEY: "job"})
    watch.pod_event({"type": "ADDED", "object": pod})
    assert len(ctx.job_pods(("ns", "job"))) == 1
    watch.job_event({"type": "DELETED", "object": job})
    assert ctx.job(("ns", "job")) is None


async def test_listed_once_kopf_has_shown_every_object_listed_at_the_start() -> None:
    client = Lists({
        JOBS_PATH: [meta("a", "job-a"), meta("b", "job-b")],
        PODGROUPS_PATH: [meta("a-pg", "pg-a")],
        PODS_PATH: [meta("a-w-0", "pod-a", **{c.JOB_NAME_KEY: "a"})],
    })  # fmt: skip
    _, watch = watch_of(client)
    watch.job_event({"type": None, "object": JobBuilder("a", uid="job-a").obj()})  # before the gate's list
    listed = asyncio.create_task(watch.listed())
    await asyncio.sleep(0.05)
    assert not listed.done()
    watch.podgroup_event({"type": None, "object": meta("a-pg", "pg-a")})
    watch.pod_event({"type": None, "object": meta("a-w-0", "pod-a", **{c.JOB_NAME_KEY: "a"})})
    await asyncio.sleep(0.05)
    assert not listed.done()  # job b is not shown yet
    watch.job_event({"type": None, "object": JobBuilder("b", uid="job-b").obj()})
    await within(listed, 5)
    assert sorted(client.lists) == sorted([JOBS_PATH, PODGROUPS_PATH, PODS_PATH])


async def test_an_object_deleted_before_kopf_listed_it_does_not_hold_the_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(job_watch, "STALL_SECONDS", 0.05)
    client = Lists({JOBS_PATH: [meta("a", "job-a"), meta("gone", "job-gone")]})
    _, watch = watch_of(client)
    listed = asyncio.create_task(watch.listed())
    await asyncio.sleep(0.02)
    watch.job_event({"type": None, "object": JobBuilder("a", uid="job-a").obj()})
    await asyncio.sleep(0.2)
    assert not listed.done()  # "gone" still exists: Kopf has yet to show it
    client.items[JOBS_PATH] = [meta("a", "job-a")]  # deleted before Kopf's list
    await within(listed, 5)
