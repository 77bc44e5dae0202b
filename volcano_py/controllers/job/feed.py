"""The Job controller's feed: watch events of Jobs, their PodGroups and their pods, from the operator's own
informers, turned into requests on the Job work queue (``runtime/context.py`` says why these three kinds are
not watched through Kopf). Each handler keeps its part of the context's mirror, classifies the change (a pod's
event against the Job's lifecycle policies) and enqueues; the writes are the worker's.
"""

from __future__ import annotations

from volcano_py.api import constants as c
from volcano_py.api.batch import FINAL_PHASES
from volcano_py.api.bodies.job import job_phase, job_version
from volcano_py.api.bodies.podgroup import podgroup_conditions, podgroup_phase, podgroup_queue, podgroup_spec
from volcano_py.api.bus import Action, Event
from volcano_py.api.job_view import JobSpecError
from volcano_py.api.objects import (
    Obj,
    generation_of,
    label_of,
    name_of,
    namespace_of,
    owner_references_of,
    resource_version_of,
    uid_of,
)
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.controllers.job.events import on_pod_deleted, on_pod_seen
from volcano_py.controllers.job.podview import read_pod, slim_pod
from volcano_py.controllers.job.policies import Request, decide
from volcano_py.controllers.job.worker import cancel_recovered
from volcano_py.controllers.runtime.context import ControllerContext, JobKey
from volcano_py.kube.store import Delta, EventType


def _job_owner(body: Obj) -> str | None:
    for ref in owner_references_of(body):
        if ref.get("kind") == c.JOB_KIND and str(ref.get("apiVersion", "")).startswith(c.BATCH_GROUP):
            return str(ref.get("name"))
    return None


def _job_key(body: Obj) -> JobKey:
    return namespace_of(body), name_of(body)


def job_changed(ctx: ControllerContext, delta: Delta) -> None:
    """A Job changed (from the Job informer): keep ``ctx.jobs``, classify the change, enqueue the Job."""
    body = delta.new
    key = _job_key(body)
    uid = uid_of(body)
    if delta.type is EventType.DELETED:
        ctx.cancel_timers(key)
        ctx.jobs.pop(key, None)
        ctx.written_jobs.pop(key, None)
        ctx.specs.pop(uid, None)
        return
    ctx.jobs[key] = body
    written = ctx.written_jobs.get(key)
    if written is not None and resource_version_of(written) == resource_version_of(body):
        return  # the echo of our own status write
    seen = ctx.specs.get(uid)
    if seen is not None and seen[0] != generation_of(body):
        # The spec changed since the controller last read it (a scale up or down): JobUpdated, at the
        # Job's current version so that it is not mistaken for an event of older pods.
        version = job_version(body)
        ctx.job_queue.add(key, Request(event=Event.JOB_UPDATED, job_uid=uid, job_version=version))
        return
    # A finished Job's check (its leftover pods, its TTL) waits until no other Job is ready: after a restart
    # the whole history is listed again, and a Job submitted meanwhile goes first.
    finished = job_phase(body) in FINAL_PHASES
    ctx.job_queue.add(key, Request(job_uid=uid), background=finished)


def podgroup_changed(ctx: ControllerContext, delta: Delta) -> None:
    """A PodGroup changed (from the PodGroup informer): keep ``ctx.podgroups_by_key``, enqueue its Job and
    its queue's recount."""
    body = delta.new
    key = _job_key(body)
    phase = podgroup_phase(body)
    if delta.type is EventType.DELETED:
        ctx.podgroups_by_key.pop(key, None)
    else:
        ctx.podgroups_by_key[key] = {
            "metadata": {"name": key[1], "namespace": key[0], "uid": uid_of(body) or None,
                         "ownerReferences": list(owner_references_of(body))},
            "spec": dict(podgroup_spec(body)),
            "status": {"phase": phase or None, "conditions": list(podgroup_conditions(body))},
        }  # fmt: skip
    owner = _job_owner(body)
    if owner is not None:
        unknown = phase == PodGroupPhase.UNKNOWN and delta.type is not EventType.DELETED
        ctx.job_queue.add((key[0], owner), Request(event=Event.JOB_UNKNOWN if unknown else Event.OUT_OF_SYNC))
    ctx.sync_queue_soon(podgroup_queue(body))


def job_pod_changed(ctx: ControllerContext, delta: Delta) -> None:
    """A pod of a Job changed (from the job-pod informer): keep ``ctx.pods_by_job``, enqueue the Job."""
    held = delta.old
    if delta.type is not EventType.DELETED and held is not None and uid_of(held) != uid_of(delta.new):
        # A relist found another pod under the name (the one held was deleted and replaced while the watch
        # was cut): the one held is gone, and its deletion is told as any other, before the new pod.
        job_pod_changed(ctx, Delta(EventType.DELETED, delta.key, held, held))
    body = delta.new
    job_name = label_of(body, c.JOB_NAME_KEY)
    if not job_name:
        return
    key = (namespace_of(body), job_name)
    uid = uid_of(body)
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
    decision = decide(spec, job_version(job_body), req)
    if decision.action is Action.SYNC_JOB and not decision.delay_seconds:
        # No policy cares about this event: a plain resync, which collapses with the ones queued.
        req = Request(job_uid=spec.uid)
    ctx.job_queue.add(key, req)
