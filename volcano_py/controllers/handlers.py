"""Event handlers that turn watch events into work requests: Kopf's, and the operator's informers'.

The Job controller's events come from informers of our own (``job_changed``, ``podgroup_changed``,
``job_pod_changed``; see ``runtime/context.py`` for why not Kopf); Queues and Commands from Kopf, one
registration function per controller. Handlers are coroutines: Kopf runs a plain function in a thread of
its executor, which costs a thread hop per event and would touch the work queues from outside their loop. Most
handlers only classify and enqueue; the writes happen in the Job and Queue workers, one key at a time. One
handler does I/O itself and says so: Commands are deleted (with a uid precondition) before they are enqueued,
as Volcano does, so two operator instances or a redelivered event can never run one Command twice. Plain pods'
PodGroups are made from an informer of our own (``plain_pods.py``), not here.
"""

from __future__ import annotations

import contextlib
from typing import Any

import kopf

from volcano_py.api import constants as c
from volcano_py.api.batch import FINAL_PHASES, JobEvent
from volcano_py.api.bus import JOB_COMMAND_ACTIONS, QUEUE_COMMAND_ACTIONS, Action, Event
from volcano_py.api.job_view import JobSpecError
from volcano_py.api.queue_hierarchy import written_state
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.controllers.job.events import on_pod_deleted, on_pod_seen
from volcano_py.controllers.job.podview import read_pod, slim_pod
from volcano_py.controllers.job.policies import Request, decide
from volcano_py.controllers.job.worker import cancel_recovered
from volcano_py.controllers.runtime.context import (
    COMMANDS,
    QUEUE_INDEX,
    SYNC_QUEUE,
    ControllerContext,
    JobKey,
)
from volcano_py.kube.client import ApiError
from volcano_py.kube.events import NORMAL
from volcano_py.kube.store import Delta, EventType
from volcano_py.log import get_logger

_log = get_logger(__name__)

_QUEUES = (c.SCHEDULING_GROUP, c.SCHEDULING_VERSION, c.QUEUE_PLURAL)
_COMMANDS = (c.BUS_GROUP, c.BUS_VERSION, c.COMMAND_PLURAL)


def _plain(body: Any) -> dict[str, Any]:
    return {k: body[k] for k in ("apiVersion", "kind", "metadata", "spec", "status") if k in body}


def _job_owner(meta: Any) -> str | None:
    for ref in meta.get("ownerReferences") or ():
        if ref.get("kind") == c.JOB_KIND and str(ref.get("apiVersion", "")).startswith(c.BATCH_GROUP):
            return str(ref.get("name"))
    return None


def build_registry(ctx: ControllerContext) -> kopf.OperatorRegistry:
    """Every controller's Kopf registrations, one function per controller below."""
    registry = kopf.OperatorRegistry()
    for register in (
        register_caches,
        register_queue_controller,
        register_command_controller,
    ):
        register(registry, ctx)
    return registry


def register_caches(registry: kopf.OperatorRegistry, ctx: ControllerContext) -> None:
    """The Queue cache (a Kopf index); Jobs, their pods and PodGroups come from the operator's informers."""

    @kopf.index(*_QUEUES, id=QUEUE_INDEX, registry=registry)
    async def index_queue(body: kopf.Body, name: str, **_: Any) -> dict[Any, Any]:
        return {name: _plain(body)}

    @kopf.on.startup(registry=registry)
    async def capture_indices(settings: kopf.OperatorSettings, **kwargs: Any) -> None:
        settings.posting.enabled = False  # our own EventRecorder writes the Events users see
        settings.watching.server_timeout = 300
        ctx.indices[QUEUE_INDEX] = kwargs[QUEUE_INDEX]


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


def register_queue_controller(registry: kopf.OperatorRegistry, ctx: ControllerContext) -> None:
    """Queue events: enqueue a sync; a deleted queue's gauges are dropped (no I/O here)."""

    @kopf.on.event(*_QUEUES, registry=registry)
    async def queue_event(event: kopf.RawEvent, name: str, body: kopf.Body, **_: Any) -> None:
        if event["type"] != "DELETED":
            if not written_state(body):
                # A queue never reconciled is opened at once: a script creates a queue, then submits to it.
                ctx.queue_queue.add(name, SYNC_QUEUE)
                return
            # Paced like a PodGroup's change: most queue events are the echo of our own status write.
            ctx.sync_queue_soon(name)
            return
        for gauge in ctx.metrics.queue_podgroups.values():
            with contextlib.suppress(KeyError):  # never reported for this queue
                gauge.remove(name)


def register_command_controller(registry: kopf.OperatorRegistry, ctx: ControllerContext) -> None:
    """Commands. Does I/O: deletes the Command (uid precondition) before enqueueing its action, so that
    it runs at most once."""

    @kopf.on.event(*_COMMANDS, registry=registry)
    async def command_event(
        event: kopf.RawEvent, namespace: str | None, name: str, body: kopf.Body, **_: Any
    ) -> None:
        if event["type"] == "DELETED":
            return
        await ctx.ready.wait()  # the Jobs are listed: a Job's command is recorded on it
        target = body.get("target") or body.get("targetObject") or {}
        raw_action = str(body.get("action") or "")
        try:
            action = Action(raw_action)
        except ValueError:
            action = None
        delete = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": body.metadata.uid}}
        try:
            await ctx.client.delete(COMMANDS.object_path(name, namespace), delete)
        except ApiError as exc:
            if exc.not_found or exc.conflict:
                return  # already consumed (by us before a restart, or by another instance)
            raise
        kind = target.get("kind")
        if kind == c.JOB_KIND and action in JOB_COMMAND_ACTIONS:
            key = (namespace or "", str(target.get("name")))
            job = ctx.job(key)
            if job is not None:
                ctx.recorder.record(
                    job, NORMAL, JobEvent.COMMAND_ISSUED,
                    f"Start to execute command {action}, and clean it up to make sure executed not more "
                    "than once.",
                )  # fmt: skip
            ctx.job_queue.add(key, Request(event=Event.COMMAND_ISSUED, action=action))
        elif kind == c.QUEUE_KIND and action in QUEUE_COMMAND_ACTIONS:
            ctx.queue_queue.add(str(target.get("name")), action.value)
        else:
            _log.warning(
                "ignored command", command=f"{namespace}/{name}", action=raw_action, target_kind=kind
            )
