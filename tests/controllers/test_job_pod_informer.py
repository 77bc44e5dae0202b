"""Jobs, their pods and PodGroups reach the Job controller through informers of its own, not through Kopf.

Kopf holds every handler until each object of each indexed kind has been indexed, at a cost growing faster
than linearly with the objects: with 1,500 finished pods a restarted controller took 13-25 s to handle its
first Job, with 1,000 finished Jobs some 5 s more (docs/reliability.md, docs/performance-log.md). These
pin that those kinds stay out of Kopf, that the informers' views and the work they enqueue follow the
events, and that a finished Job's check waits behind a new Job.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ctl_builders import JobBuilder, PodBuilder  # type: ignore[import-not-found]

from volcano_py.api import constants as c
from volcano_py.controllers.flow.worker import FlowControllers
from volcano_py.controllers.handlers import build_registry
from volcano_py.controllers.hypernode.worker import TopologyDiscovery
from volcano_py.controllers.job.feed import job_changed, job_pod_changed, podgroup_changed
from volcano_py.controllers.job.plan import Plan
from volcano_py.controllers.job.worker import JobWorker
from volcano_py.controllers.runtime.context import ControllerContext, ControllerOptions
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.kube.client import ApiError
from volcano_py.kube.store import Delta, EventType
from volcano_py.kube.waiting import within


def context() -> ControllerContext:
    # The handler under test does no I/O: no client or recorder is needed.
    ctx = ControllerContext(
        options=ControllerOptions(),
        client=None,
        recorder=None,
        metrics=ControllerMetrics(),  # type: ignore[arg-type]
    )
    job = JobBuilder("job").task("w", replicas=2).obj()
    ctx.jobs[("ns", "job")] = job
    return ctx


def pod(index: int, phase: str = "Pending") -> dict[str, Any]:
    body = PodBuilder("job", "w", index).phase(phase).obj()
    body["metadata"]["labels"] = {c.JOB_NAME_KEY: "job"}
    return body


def test_jobs_their_pods_and_podgroups_are_no_kopf_kind() -> None:
    """Kopf's start-up gate costs the square of the objects it indexes: a cluster's history of finished Jobs
    (and their pods) must not pass through it, nor through a Kopf handler held behind it."""
    ctx = context()
    registry = build_registry(ctx)
    FlowControllers(ctx).register(registry)
    TopologyDiscovery(ctx).register(registry)
    indexed = {selector.any_name for selector in registry._indexing.get_all_selectors()}
    watched = {selector.any_name for selector in registry._watching.get_all_selectors()}
    assert not {"jobs", "pods", "podgroups", "nodes"} & (indexed | watched), indexed | watched
    assert {"queues", "commands", "jobflows", "cronjobs"} <= indexed | watched  # the registry was read


def test_the_pods_of_a_job_follow_added_modified_and_deleted_and_each_change_enqueues_the_job() -> None:
    ctx = context()
    job_pod_changed(ctx, Delta(EventType.ADDED, "ns/job-w-0", None, pod(0)))
    job_pod_changed(ctx, Delta(EventType.ADDED, "ns/job-w-1", None, pod(1)))
    assert sorted(p["metadata"]["name"] for p in ctx.job_pods(("ns", "job"))) == ["job-w-0", "job-w-1"]
    job_pod_changed(ctx, Delta(EventType.MODIFIED, "ns/job-w-0", pod(0), pod(0, "Running")))
    assert ctx.pod_phases["pod-job-w-0"] == "Running"
    assert [
        p["status"]["phase"] for p in ctx.job_pods(("ns", "job")) if p["metadata"]["name"] == "job-w-0"
    ] == ["Running"]
    job_pod_changed(ctx, Delta(EventType.DELETED, "ns/job-w-1", pod(1), pod(1)))
    job_pod_changed(ctx, Delta(EventType.DELETED, "ns/job-w-0", pod(0, "Running"), pod(0, "Running")))
    assert ctx.job_pods(("ns", "job")) == []
    assert ctx.job_queue.depth() >= 1


@pytest.mark.parametrize("known_job", [True, False])
def test_a_pod_of_an_unknown_job_is_kept_but_enqueues_nothing(known_job: bool) -> None:
    ctx = context()
    if not known_job:
        ctx.jobs.clear()
    job_pod_changed(ctx, Delta(EventType.ADDED, "ns/job-w-0", None, pod(0)))
    assert len(ctx.job_pods(("ns", "job"))) == 1
    assert (ctx.job_queue.depth() > 0) is known_job


async def test_a_new_job_is_handled_before_the_finished_ones_listed_with_it() -> None:
    ctx = context()
    ctx.jobs.clear()
    for i in range(3):
        done = JobBuilder(f"done-{i}", uid=f"uid-{i}").status(state={"phase": "Completed"}).obj()
        job_changed(ctx, Delta(EventType.ADDED, f"ns/done-{i}", None, done))
    aborted = JobBuilder("aborted", uid="uid-a").status(state={"phase": "Aborted"}).obj()
    job_changed(ctx, Delta(EventType.ADDED, "ns/aborted", None, aborted))
    running = JobBuilder("running", uid="uid-r").status(state={"phase": "Running"}).obj()
    job_changed(ctx, Delta(EventType.ADDED, "ns/running", None, running))
    job_changed(ctx, Delta(EventType.ADDED, "ns/new", None, JobBuilder("new", uid="uid-n").obj()))
    assert set(ctx.jobs) == {("ns", n) for n in ("done-0", "done-1", "done-2", "aborted", "running", "new")}
    handled: list[str] = []
    all_handled = asyncio.Event()

    async def handle(key: tuple[str, str], _request: Any) -> None:
        handled.append(key[1])
        if len(handled) == 6:
            all_handled.set()

    worker = asyncio.create_task(ctx.job_queue.run(handle, 1))
    await within(all_handled.wait(), 10)
    worker.cancel()
    await asyncio.gather(worker, return_exceptions=True)
    assert handled == ["running", "new", "done-0", "done-1", "done-2", "aborted"]
    done_0 = JobBuilder("done-0", uid="uid-0").obj()
    job_changed(ctx, Delta(EventType.DELETED, "ns/done-0", done_0, done_0))
    assert ("ns", "done-0") not in ctx.jobs


async def test_the_podgroups_follow_their_events_and_enqueue_their_job() -> None:
    ctx = context()
    owner = {"apiVersion": c.BATCH_API_VERSION, "kind": c.JOB_KIND, "name": "job"}
    group = {
        "metadata": {"name": "job-pg", "namespace": "ns", "uid": "pg-uid", "ownerReferences": [owner]},
        "spec": {"queue": "q", "minMember": 2},
        "status": {"phase": "Inqueue"},
    }  # fmt: skip
    podgroup_changed(ctx, Delta(EventType.ADDED, "ns/job-pg", None, group))
    found = ctx.podgroup("ns", "job-pg")
    assert found is not None and found["status"]["phase"] == "Inqueue" and found["spec"]["queue"] == "q"
    assert ctx.job_queue.depth() == 1 and ctx.recounts_due == {"q"}
    podgroup_changed(ctx, Delta(EventType.DELETED, "ns/job-pg", group, group))
    assert ctx.podgroup("ns", "job-pg") is None and list(ctx.podgroups()) == []


class Deleting:
    """A client whose pod writes all succeed."""

    async def patch(self, path: str, *_: Any) -> dict[str, Any]:
        return {}

    async def delete(self, path: str, *_: Any) -> dict[str, Any]:
        return {}


async def _events_queued(ctx: ControllerContext) -> list[str]:
    """The events of the Job's requests, as its worker would take them."""
    seen: list[str] = []
    while ctx.job_queue.depth():
        _, request = await ctx.job_queue._take()
        seen.append(request.event.value)
        ctx.job_queue._done(("ns", "job"))
    return seen


async def _known(ctx: Any, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the job-pod informer shows it, its events handled."""
    job_pod_changed(ctx, Delta(EventType.ADDED, "ns/job-w-1", None, body))
    await _events_queued(ctx)
    return body


async def _kill(ctx: Any, body: dict[str, Any], worker: JobWorker | None = None) -> None:
    """One sync's kill of ``body`` (pod job-w-1), as the worker sends it."""
    job = ctx.jobs[("ns", "job")]
    uids = {"job-w-1": body["metadata"]["uid"]}
    await (worker or JobWorker(ctx))._execute(ctx.spec(job), job, Plan(delete=("job-w-1",)), None, uids)


@pytest.mark.parametrize("killed_by_us", [True, False])
async def test_a_pod_the_controller_killed_is_no_eviction_even_when_its_deletion_shows_no_mark(
    killed_by_us: bool,
) -> None:
    """A watch that was cut and relisted shows a deletion with the last version of the pod it saw, which may
    predate the controller's out-of-sync mark: the pod must not count as evicted (its task would be restarted,
    and ``retryCount`` raised, a second time)."""
    ctx = context()
    ctx.client = Deleting()  # type: ignore[assignment]
    running = await _known(ctx, pod(1, "Running"))
    if killed_by_us:
        await _kill(ctx, running)
    # The deletion as a relist shows it: the pod as last seen, without the mark.
    job_pod_changed(ctx, Delta(EventType.DELETED, "ns/job-w-1", running, running))
    assert await _events_queued(ctx) == (["OutOfSync"] if killed_by_us else ["PodEvicted"])
    assert ctx.killed_pods == set()


class GoneOnSecondKill:
    """A client on which the pod is gone by the second kill: KWOK removed it once the first was sent."""

    def __init__(self) -> None:
        self.patches = 0

    async def patch(self, path: str, *_: Any) -> dict[str, Any]:
        self.patches += 1
        if self.patches > 1:
            raise ApiError(404, "NotFound", f"pods {path.rsplit('/', 1)[-1]!r} not found")
        return {}

    async def delete(self, path: str, *_: Any) -> dict[str, Any]:
        return {}


async def test_a_pod_killed_twice_stays_the_controllers_when_the_second_kill_finds_it_gone() -> None:
    """A sync that read the pod before its deletion showed kills it a second time; the pod is gone by then
    (404). Its deletion is still the first kill's: were it shown without the mark (a relisted watch), it
    must not count as an eviction (``killed_pods`` must keep it)."""
    ctx = context()
    ctx.client = GoneOnSecondKill()  # type: ignore[assignment]
    running = await _known(ctx, pod(1, "Running"))
    worker = JobWorker(ctx)
    for _ in range(2):
        await _kill(ctx, running, worker)
    assert ctx.killed_pods == {running["metadata"]["uid"]}
    job_pod_changed(ctx, Delta(EventType.DELETED, "ns/job-w-1", running, running))
    assert await _events_queued(ctx) == ["OutOfSync"]
    assert ctx.killed_pods == set()


async def test_a_pod_found_gone_by_its_only_kill_is_someone_elses_deletion() -> None:
    """The other side: a kill whose pod is already gone (404) did not delete it, so the deletion, unmarked,
    is an eviction (Volcano's reading of any deletion its controller did not make)."""
    ctx = context()
    client = GoneOnSecondKill()
    client.patches = 1  # gone before the first kill
    ctx.client = client  # type: ignore[assignment]
    running = await _known(ctx, pod(1, "Running"))
    await _kill(ctx, running)
    assert ctx.killed_pods == set()
    job_pod_changed(ctx, Delta(EventType.DELETED, "ns/job-w-1", running, running))
    assert await _events_queued(ctx) == ["PodEvicted"]


@pytest.mark.parametrize("killed_by_us", [True, False])
async def test_a_pod_replaced_under_its_name_while_the_watch_was_cut_is_gone_from_the_jobs_pods(
    killed_by_us: bool,
) -> None:
    """A relist shows a pod deleted and made again under the same name as one change of the name (the store
    is by name). The pod held is gone: it must leave the Job's pods (else every sync counts it beyond the
    replicas and kills the new pod in its place) and its deletion must be read as any other."""
    ctx = context()
    ctx.client = Deleting()  # type: ignore[assignment]
    old = await _known(ctx, pod(1, "Running"))
    if killed_by_us:
        await _kill(ctx, old)
    new = pod(1)
    new["metadata"]["uid"] = "pod-job-w-1-successor"
    job_pod_changed(ctx, Delta(EventType.MODIFIED, "ns/job-w-1", old, new))
    assert [p["metadata"]["uid"] for p in ctx.job_pods(("ns", "job"))] == ["pod-job-w-1-successor"]
    assert old["metadata"]["uid"] not in ctx.pod_phases
    # The new pod's change is a plain resync, which collapses with the deletion's when that is one too.
    assert await _events_queued(ctx) == (["OutOfSync"] if killed_by_us else ["PodEvicted", "OutOfSync"])
    assert ctx.killed_pods == set()
