"""The Job controller's feed: watch events of Jobs, their PodGroups and their pods, from the operator's own
informers, turned into requests on the Job work queue (``runtime/context.py`` says why these three kinds are
not watched through Kopf). Each handler keeps its part of the context's mirror, classifies the change (a pod's
event against the Job's lifecycle policies) and enqueues; the writes are the worker's.
"""

from __future__ import annotations

from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import FINAL_PHASES
from volcano_py.api.bus import Action, Event
from volcano_py.api.job_view import JobSpecError
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.controllers.job.events import on_pod_deleted, on_pod_seen
from volcano_py.controllers.job.podview import read_pod, slim_pod
from volcano_py.controllers.job.policies import Request, decide
from volcano_py.controllers.job.worker import cancel_recovered
from volcano_py.controllers.runtime.context import ControllerContext, JobKey
from volcano_py.kube.store import Delta, EventType


def _job_owner(meta: Any) -> str | None:
    for ref in meta.get("ownerReferences") or ():
        if ref.get("kind") == c.JOB_KIND and str(ref.get("apiVersion", "")).startswith(c.BATCH_GROUP):
            return str(ref.get("name"))
    return None


def _job_key(body: dict[str, Any]) -> JobKey:
    meta = body.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def job_changed(ctx: ControllerContext, delta: Delta) -> None:
    """A Job changed (from the Job informer): keep ``ctx.jobs``, classify the change, enqueue the Job."""
    body = delta.new
    key = _job_key(body)
    meta = body.get("metadata") or {}
    uid = str(meta.get("uid") or "")
    if delta.type is EventType.DELETED:
        ctx.cancel_timers(key)
        ctx.jobs.pop(key, None)
        ctx.written_jobs.pop(key, None)
        ctx.specs.pop(uid, None)
        return
    ctx.jobs[key] = body
    written = ctx.written_jobs.get(key)
    if written is not None and written["metadata"].get("resourceVersion") == meta.get("resourceVersion"):
        return  # the echo of our own status write
    seen = ctx.specs.get(uid)
    status = body.get("status") or {}
    if seen is not None and seen[0] != int(meta.get("generation") or 0):
        # The spec changed since the controller last read it (a scale up or down): JobUpdated, at the
        # Job's current version so that it is not mistaken for an event of older pods.
        version = int(status.get("version") or 0)
        ctx.job_queue.add(key, Request(event=Event.JOB_UPDATED, job_uid=uid, job_version=version))
        return
    # A finished Job's check (its leftover pods, its TTL) waits until no other Job is ready: after a restart
    # the whole history is listed again, and a Job submitted meanwhile goes first.
    finished = str((status.get("state") or {}).get("phase") or "") in FINAL_PHASES
    ctx.job_queue.add(key, Request(job_uid=uid), background=finished)


def podgroup_changed(ctx: ControllerContext, delta: Delta) -> None:
    """A PodGroup changed (from the PodGroup informer): keep ``ctx.podgroups_by_key``, enqueue its Job and
    its queue's recount."""
    body = delta.new
    key = _job_key(body)
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    status = body.get("status") or {}
    if delta.type is EventType.DELETED:
        ctx.podgroups_by_key.pop(key, None)
    else:
        ctx.podgroups_by_key[key] = {
            "metadata": {"name": key[1], "namespace": key[0], "uid": meta.get("uid"),
                         "ownerReferences": list(meta.get("ownerReferences") or ())},
            "spec": dict(spec),
            "status": {"phase": status.get("phase"), "conditions": list(status.get("conditions") or ())},
        }  # fmt: skip
    owner = _job_owner(meta)
    if owner is not None:
        unknown = status.get("phase") == PodGroupPhase.UNKNOWN and delta.type is not EventType.DELETED
        ctx.job_queue.add((key[0], owner), Request(event=Event.JOB_UNKNOWN if unknown else Event.OUT_OF_SYNC))
    ctx.sync_queue_soon(str(spec.get("queue") or c.DEFAULT_QUEUE))


def job_pod_changed(ctx: ControllerContext, delta: Delta) -> None:
    """A pod of a Job changed (from the job-pod informer): keep ``ctx.pods_by_job``, enqueue the Job."""
    body = delta.new
    meta = body.get("metadata") or {}
    namespace = str(meta.get("namespace") or "")
    job_name = (meta.get("labels") or {}).get(c.JOB_NAME_KEY)
    if not job_name:
        return
    key = (namespace, str(job_name))
    uid = str(meta.get("uid") or "")
    pods = ctx.pods_by_job.setdefault(key, {})
    killed = False
    if delta.type is EventType.DELETED:
        pods.pop(uid, None)
        if not pods:
            del ctx.pods_by_job[key]
        if uid in ctx.killed_pods:
            ctx.killed_pods.discard(uid)
            killed = True
    else:
        pods[uid] = slim_pod(body)
    job_body = ctx.job(key)
    pod = read_pod(body)
    if job_body is None or not pod.task:
        return
    if delta.type is EventType.DELETED:
        known = ctx.pod_phases.pop(pod.uid, None) is not None
        ctx.job_queue.add(key, on_pod_deleted(pod, known=known, killed=killed))
        return
    try:
        spec = ctx.spec(job_body)
    except JobSpecError:
        return
    old = ctx.pod_phases.get(pod.uid)
    ctx.pod_phases[pod.uid] = pod.phase
    task_pods = (p for p in map(read_pod, ctx.job_pods(key)) if p.task == pod.task)
    req = on_pod_seen(spec, old, pod, task_pods)
    cancel_recovered(ctx, key, req)
    version = int((job_body.get("status") or {}).get("version") or 0)
    decision = decide(spec, version, req)
    if decision.action is Action.SYNC_JOB and not decision.delay_seconds:
        # No policy cares about this event: a plain resync, which collapses with the ones queued.
        req = Request(job_uid=spec.uid)
    ctx.job_queue.add(key, req)
