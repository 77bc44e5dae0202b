"""Job pods reach the Job controller through an informer of its own, not through a Kopf index.

Kopf holds every handler until each object of each indexed kind has been indexed, at a cost growing faster
than linearly with the objects: with 1,500 finished pods a restarted controller took 13-25 s to handle its
first Job (docs/reliability.md). These pin that pods stay out of Kopf's indexes, and that the informer's view
of a Job's pods and the work it enqueues follow the pod events.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctl_builders import JobBuilder, PodBuilder  # type: ignore[import-not-found]

from volcano_py.api import constants as c
from volcano_py.controllers.handlers import build_registry, job_pod_changed
from volcano_py.controllers.runtime.context import JOB_INDEX, ControllerContext, ControllerOptions
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.kube.store import Delta, EventType


def context() -> ControllerContext:
    # The handler under test does no I/O: no client or recorder is needed.
    ctx = ControllerContext(
        options=ControllerOptions(),
        client=None,
        recorder=None,
        metrics=ControllerMetrics(),  # type: ignore[arg-type]
    )
    job = JobBuilder("job").task("w", replicas=2).obj()
    ctx.indices[JOB_INDEX] = {("ns", "job"): [job]}
    return ctx


def pod(index: int, phase: str = "Pending") -> dict[str, Any]:
    body = PodBuilder("job", "w", index).phase(phase).obj()
    body["metadata"]["labels"] = {c.JOB_NAME_KEY: "job"}
    return body


def test_pods_are_not_a_kopf_indexed_kind() -> None:
    registry = build_registry(context())
    indexed = {selector.any_name for selector in registry._indexing.get_all_selectors()}
    assert "pods" not in indexed, indexed
    assert {"jobs", "podgroups", "queues"} <= indexed


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
    job_pod_changed(ctx, Delta(EventType.DELETED, "ns/job-w-1", pod(1), None))
    job_pod_changed(ctx, Delta(EventType.DELETED, "ns/job-w-0", pod(0, "Running"), None))
    assert ctx.job_pods(("ns", "job")) == []
    assert ctx.job_queue.depth() >= 1


@pytest.mark.parametrize("known_job", [True, False])
def test_a_pod_of_an_unknown_job_is_kept_but_enqueues_nothing(known_job: bool) -> None:
    ctx = context()
    if not known_job:
        ctx.indices[JOB_INDEX] = {}
    job_pod_changed(ctx, Delta(EventType.ADDED, "ns/job-w-0", None, pod(0)))
    assert len(ctx.job_pods(("ns", "job"))) == 1
    assert (ctx.job_queue.depth() > 0) is known_job
