"""Which lifecycle event a pod change means, from its previous and current phase (Volcano's pod handlers).

Unlike Volcano, a pod first seen already Failed (the controller was down when it failed) yields ``PodFailed``:
the policy still fires after a restart, and because the restart bumps the job version, it fires once.
A pod that failed because it was preempted or evicted yields ``PodEvicted``, not ``PodFailed``.
"""

from __future__ import annotations

from collections.abc import Iterable

from volcano_py.api.bus import Event
from volcano_py.api.job_view import ResolvedJob
from volcano_py.controllers.job.podview import FAILED, PENDING, RUNNING, SUCCEEDED, PodView
from volcano_py.controllers.job.policies import Request

DEFAULT_TASK_MAX_RETRY = 3


def task_completed(spec: ResolvedJob, task: str, task_pods: Iterable[PodView]) -> bool:
    t = spec.task(task)
    if t is None or t.replicas <= 0:
        return False
    return sum(1 for p in task_pods if p.phase == SUCCEEDED) >= t.replicas


def task_failed(spec: ResolvedJob, task: str, task_pods: Iterable[PodView]) -> bool:
    """Volcano: the live pods of the task restarted their containers ``maxRetry`` times (default 3) in all."""
    t = spec.task(task)
    if t is None or t.replicas == 0 or t.max_retry == -1:
        return False
    limit = t.max_retry or DEFAULT_TASK_MAX_RETRY
    return sum(p.restarts for p in task_pods if p.phase in (RUNNING, PENDING)) >= limit


def _request(pod: PodView, event: Event, exit_code: int = 0) -> Request:
    return Request(
        event=event,
        task=pod.task,
        pod=pod.name,
        pod_uid=pod.uid,
        exit_code=exit_code,
        job_version=pod.version,
        job_uid=pod.job_uid,
        disrupted=pod.disrupted,
        partition=pod.partition,
    )


def on_pod_seen(
    spec: ResolvedJob, old_phase: str | None, pod: PodView, task_pods: Iterable[PodView]
) -> Request:
    """A pod was added or updated; ``old_phase`` is None when the controller has not seen it before."""
    if pod.out_of_sync:
        return _request(pod, Event.OUT_OF_SYNC)
    if pod.phase == FAILED:
        if old_phase == FAILED:
            return _request(pod, Event.OUT_OF_SYNC)
        if pod.disrupted:
            return _request(pod, Event.POD_EVICTED)
        return _request(pod, Event.POD_FAILED, pod.exit_code)
    if old_phase is None:
        return _request(pod, Event.POD_PENDING)
    # ``task_pods`` may be a lazy iterable: only these two checks read it, so most events never pay for it.
    if pod.phase == SUCCEEDED:
        if old_phase != SUCCEEDED and task_completed(spec, pod.task, task_pods):
            return _request(pod, Event.TASK_COMPLETED)
        return _request(pod, Event.OUT_OF_SYNC)
    if pod.phase in (RUNNING, PENDING):
        if old_phase != pod.phase:
            return _request(pod, Event.POD_RUNNING if pod.phase == RUNNING else Event.POD_PENDING)
        if task_failed(spec, pod.task, task_pods):
            return _request(pod, Event.TASK_FAILED)
    return _request(pod, Event.OUT_OF_SYNC)


def on_pod_deleted(pod: PodView, *, known: bool, killed: bool = False) -> Request:
    """A pod is gone: an eviction, unless the controller itself was killing it (``killed``, or the out-of-sync
    mark a controller before a restart left)."""
    if killed or pod.out_of_sync or not known:
        return _request(pod, Event.OUT_OF_SYNC)
    return _request(pod, Event.POD_EVICTED)
