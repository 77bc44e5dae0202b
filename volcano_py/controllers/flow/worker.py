"""The JobFlow, JobTemplate and CronJob controllers' shell: Kopf indexes and events in, planned writes out.

Event handlers only enqueue the owning flow or CronJob; one worker per kind runs ``plan_jobflow`` /
``plan_cronjob`` (``controllers/flow``) on what the indexes hold and performs the plan: create Jobs
(AlreadyExists means a previous sync or a previous controller made it, which is fine: names are
deterministic), delete Jobs, record events, patch status. A CronJob is re-synced at its next run time by a
timer. Jobs this controller just created are remembered until the watch delivers them, so a sync that comes
first still counts them (a Forbid CronJob never sees an empty ``active`` right after a run started).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import kopf

from volcano_py.api import constants as c
from volcano_py.api.bodies.cronjob import cronjob_status
from volcano_py.api.bodies.job import job_status
from volcano_py.api.bodies.jobflow import (
    jobflow_flows,
    jobflow_phase,
    jobflow_status,
    status_phase,
    step_name,
)
from volcano_py.api.bodies.jobtemplate import jobtemplate_status
from volcano_py.api.flow import FlowPhase
from volcano_py.api.objects import (
    Obj,
    is_deleting,
    label_of,
    metadata_of,
    name_of,
    namespace_of,
    owner_references_of,
)
from volcano_py.controllers.flow.cronjob import is_finished, job_ref, plan_cronjob
from volcano_py.controllers.flow.jobflow import plan_jobflow
from volcano_py.controllers.runtime.context import ControllerContext
from volcano_py.controllers.runtime.workqueue import KeyedQueue
from volcano_py.kube.client import NETWORK_ERRORS, ApiError
from volcano_py.kube.kinds import CRONJOBS, JOBFLOWS, JOBS, JOBTEMPLATES, ResourceKind, plain
from volcano_py.kube.leader import Fenced
from volcano_py.kube.store import Delta, EventType
from volcano_py.log import get_logger

_log = get_logger(__name__)

JSON = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)
Clock = Callable[[], datetime]


FLOW_INDEX = "vc_jobflows"
TEMPLATE_INDEX = "vc_jobtemplates"  # by namespace
CRON_INDEX = "vc_cronjobs"
INDEXES = (FLOW_INDEX, TEMPLATE_INDEX, CRON_INDEX)
# How long a Job we created is counted before the watch shows it (it normally takes milliseconds).
CREATED_MEMORY_SECONDS = 60.0
# A sync that failed on an API error is retried after this long.
RETRY_SECONDS = 2.0


# The Normal event an owner (namespace, name) gets for a Job it created (Volcano's reasons and wording).
_CREATED: dict[str, Callable[[str, str, str], tuple[str, str]]] = {
    c.JOBFLOW_KIND: lambda _ns, _owner, job: ("Created", f"create a job named {job}!"),
    c.CRONJOB_KIND: lambda ns, owner, job: (
        "SuccessfulCreate",
        f"Created job {job} for CronJob {ns}/{owner}",
    ),
}


def _owner(obj: Obj) -> tuple[str, str] | None:
    """(kind, name) of a JobFlow or CronJob controlling this object."""
    for ref in owner_references_of(obj):
        if not ref.get("controller"):
            continue
        if (ref.get("apiVersion"), ref.get("kind")) in (
            (c.FLOW_API_VERSION, c.JOBFLOW_KIND),
            (c.BATCH_API_VERSION, c.CRONJOB_KIND),
        ):
            return str(ref["kind"]), str(ref["name"])
    return None


def _slim_job(body: Obj) -> JSON:
    meta = metadata_of(body)
    keep = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels", "annotations",
            "ownerReferences", "deletionTimestamp")  # fmt: skip
    return {"metadata": {k: meta[k] for k in keep if k in meta}, "status": dict(job_status(body))}


def merge_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> JSON:
    """A JSON merge patch turning ``old`` into ``new`` (keys that went away become null)."""
    patch: JSON = {}
    for key in old:
        if key not in new:
            patch[key] = None
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            sub = merge_patch(before, value)
            if sub:
                patch[key] = sub
        elif value != before:
            patch[key] = value
    return patch


def _values(index: Mapping[Any, Iterable[Any]] | None, key: Any) -> list[Any]:
    if index is None:
        return []
    store = index.get(key)
    return list(store) if store is not None else []


class FlowControllers:
    """Registers the handlers into a Kopf registry and runs the two workers."""

    def __init__(self, ctx: ControllerContext, *, clock: Clock | None = None) -> None:
        self.ctx = ctx
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self.flows: KeyedQueue[Key, str] = KeyedQueue(is_resync=lambda _r: True)
        self.crons: KeyedQueue[Key, str] = KeyedQueue(is_resync=lambda _r: True)
        self.templates: KeyedQueue[Key, str] = KeyedQueue(is_resync=lambda _r: True)
        self.indices: dict[str, Mapping[Any, Iterable[Any]]] = {}
        # The Jobs a JobFlow or CronJob controls, by (namespace, owner kind, owner name) -> Job name -> slim
        # Job, kept from the operator's Job informer (``job_changed``), not a Kopf index (runtime/context.py).
        self.owned: dict[tuple[str, str, str], dict[str, JSON]] = {}
        self.timers: dict[Key, asyncio.TimerHandle] = {}
        # (namespace, job name) -> (monotonic time created, slim Job) until the index has that uid.
        self.created: dict[Key, tuple[float, JSON]] = {}

    # --- registration (Kopf handlers: they read the event and enqueue, nothing else) ---------------------

    def register(self, registry: kopf.OperatorRegistry) -> None:
        flows = (c.FLOW_GROUP, c.FLOW_VERSION, c.JOBFLOW_PLURAL)
        templates = (c.FLOW_GROUP, c.FLOW_VERSION, c.JOBTEMPLATE_PLURAL)
        crons = (c.BATCH_GROUP, c.BATCH_VERSION, c.CRONJOB_PLURAL)

        @kopf.index(*flows, id=FLOW_INDEX, registry=registry)
        def index_flow(body: kopf.Body, namespace: str | None, name: str, **_: Any) -> dict[Any, Any]:
            return {(namespace or "", name): plain(body)}

        @kopf.index(*templates, id=TEMPLATE_INDEX, registry=registry)
        def index_template(body: kopf.Body, namespace: str | None, **_: Any) -> dict[Any, Any]:
            return {namespace or "": plain(body)}

        @kopf.index(*crons, id=CRON_INDEX, registry=registry)
        def index_cron(body: kopf.Body, namespace: str | None, name: str, **_: Any) -> dict[Any, Any]:
            return {(namespace or "", name): plain(body)}

        @kopf.on.startup(registry=registry)
        def capture_flow_indices(**kwargs: Any) -> None:
            for name in INDEXES:
                self.indices[name] = kwargs[name]

        @kopf.on.event(*flows, registry=registry)
        async def flow_event(event: kopf.RawEvent, namespace: str | None, name: str, **_: Any) -> None:
            if event["type"] != "DELETED":
                self.flows.add((namespace or "", name), "sync")

        @kopf.on.event(*templates, registry=registry)
        async def template_event(event: kopf.RawEvent, namespace: str | None, name: str, **_: Any) -> None:
            # A flow may be waiting for this template to appear.
            ns = namespace or ""
            for flow in self._namespace_flows(ns):
                if any(step_name(step) == name for step in jobflow_flows(flow)):
                    self.flows.add((ns, name_of(flow)), "sync")
            if event["type"] != "DELETED":
                self.templates.add((ns, name), "sync")

        @kopf.on.event(*crons, registry=registry)
        async def cron_event(event: kopf.RawEvent, namespace: str | None, name: str, **_: Any) -> None:
            key = (namespace or "", name)
            if event["type"] == "DELETED":
                timer = self.timers.pop(key, None)
                if timer is not None:
                    timer.cancel()
                return
            self.crons.add(key, "sync")

    def job_changed(self, delta: Delta) -> None:
        """A Job changed (from the operator's Job informer): keep ``owned``, enqueue its owner and the
        JobTemplate it was made from."""
        body = delta.new
        ns, name = namespace_of(body), name_of(body)
        owner = _owner(body)
        if owner is not None:
            owned = self.owned.setdefault((ns, *owner), {})
            if delta.type is EventType.DELETED:
                owned.pop(name, None)
                if not owned:
                    del self.owned[(ns, *owner)]
            else:
                owned[name] = _slim_job(body)
            (self.flows if owner[0] == c.JOBFLOW_KIND else self.crons).add((ns, owner[1]), "sync")
        marked = label_of(body, c.CREATED_BY_JOB_TEMPLATE_KEY)
        if marked and marked.startswith(f"{ns}."):
            self.templates.add((ns, marked[len(ns) + 1 :]), "sync")

    def _namespace_flows(self, namespace: str) -> list[JSON]:
        index = self.indices.get(FLOW_INDEX) or {}
        return [flow for (ns, _), store in index.items() if ns == namespace for flow in store]

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(self.flows.run(self._guard(self.sync_flow, self.flows), 4))
            group.create_task(self.crons.run(self._guard(self.sync_cron, self.crons), 4))
            group.create_task(self.templates.run(self._guard(self.sync_template, self.templates), 1))

    def stop(self) -> None:
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()

    def _guard(self, sync: Callable[[Key], Any], queue: KeyedQueue[Key, str]) -> Callable[[Key, str], Any]:
        async def handle(key: Key, _request: str) -> None:
            try:
                await sync(key)
            except Fenced as exc:
                # Not the leader any more: the term is ending, and the next leader syncs this afresh.
                _log.debug("sync dropped: not the leader", key=f"{key[0]}/{key[1]}", write=str(exc))
            except (ApiError, *NETWORK_ERRORS) as exc:
                _log.warning("sync failed; retrying", key=f"{key[0]}/{key[1]}", error=str(exc))
                queue.add_after(RETRY_SECONDS, key, "sync")

        return handle

    # --- shared ------------------------------------------------------------------------------------------

    def _owned(self, namespace: str, kind: str, name: str) -> dict[str, JSON]:
        """The Jobs ``kind/name`` controls: the index's, plus ones we created that it does not show yet."""
        jobs = dict(self.owned.get((namespace, kind, name)) or {})
        now = time.monotonic()
        for key, (at, job) in list(self.created.items()):
            if now - at > CREATED_MEMORY_SECONDS or key[1] in jobs:
                del self.created[key]
            elif key[0] == namespace and _owner(job) == (kind, name):
                jobs[key[1]] = job
        return jobs

    async def _create_job(self, owner: JSON, body: JSON) -> JSON | None:
        """Create a Job; when its name is taken, the existing Job if ``owner`` controls it (an earlier sync
        or controller made it), else None with a warning on the owner (someone else's Job has that name)."""
        namespace, name = namespace_of(body), name_of(body)
        owner_kind, owner_name = str(owner["kind"]), name_of(owner)
        stamp = self.ctx.ensure_leading(f"create job {namespace}/{name}")
        try:
            created = await self.ctx.client.create(JOBS.collection_path(namespace), body)
        except ApiError as exc:
            if not exc.conflict:
                raise
            try:
                existing: JSON = await self.ctx.client.get(JOBS.object_path(name, namespace))
            except ApiError as again:
                if again.not_found:
                    return None
                raise
            if _owner(existing) != (owner_kind, owner_name):
                message = f"Job {name} exists and is not controlled by {owner_kind} {owner_name}"
                self.ctx.recorder.record(owner, "Warning", "JobExists", f"{message}; delete or rename it")
                return None
            return existing
        self.created[(namespace, name)] = (time.monotonic(), _slim_job(created))
        # The chaos suite places the write in a leader's term by its WriteStamp.
        _log.debug("job created", job=f"{namespace}/{name}", owner=owner_kind, **stamp.fields())
        created_event = _CREATED[owner_kind](namespace, owner_name, name)
        self.ctx.recorder.record(owner, "Normal", *created_event)
        return created

    async def _delete_job(self, namespace: str, name: str) -> None:
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        self.ctx.ensure_leading(f"delete job {namespace}/{name}")
        try:
            await self.ctx.client.delete(JOBS.object_path(name, namespace), options)
        except ApiError as exc:
            if not exc.not_found:
                raise
        self.created.pop((namespace, name), None)

    async def _patch_status(
        self, kind: ResourceKind, body: JSON, old: Mapping[str, Any], status: JSON
    ) -> None:
        """Merge-patch ``body``'s status from ``old`` (as stored) to ``status``."""
        patch = merge_patch(old, status)
        if patch:
            await self.ctx.client.patch(kind.object_path(name_of(body), namespace_of(body), "status"),
                                        {"status": patch})  # fmt: skip

    # --- JobFlow -----------------------------------------------------------------------------------------

    async def sync_flow(self, key: Key) -> None:
        found = _values(self.indices.get(FLOW_INDEX), key)
        if not found or is_deleting(found[0]):
            return
        body: JSON = found[0]
        namespace, name = key
        templates = {name_of(t): t for t in _values(self.indices.get(TEMPLATE_INDEX), namespace)}
        jobs = self._owned(namespace, c.JOBFLOW_KIND, name)
        plan = plan_jobflow(body, templates, jobs, self.clock())
        for job in plan.create:
            try:
                await self._create_job(body, job)
            except ApiError as exc:
                # Retried (``_guard``); a Job the Job rules refuse (from a template admitted without them, as
                # Volcano admits it) is told on the flow meanwhile, under Volcano's reason for a failed sync.
                self.ctx.recorder.record(
                    body, "Warning", "SyncJobFlow", f"failed to create job {name_of(job)}: {exc}"
                )
                raise
        for job_name in plan.delete:
            await self._delete_job(namespace, job_name)
        for event in plan.events:
            self.ctx.recorder.record(body, event.type, event.reason, event.message)
        if plan.status is not None:
            await self._patch_status(JOBFLOWS, body, jobflow_status(body), plan.status)
            self._count_phase(namespace, body, plan.status)
        if plan.create:
            # The new Jobs are not in the status yet; count them once the watch brings their first phase.
            self.flows.add_after(1.0, key, "sync")

    def _count_phase(self, namespace: str, body: JSON, status: JSON) -> None:
        before, after = jobflow_phase(body), status_phase(status)
        if after == before:
            return
        if after == FlowPhase.SUCCEED:
            self.ctx.metrics.jobflow_succeeded.labels(namespace).inc()
        elif after == FlowPhase.FAILED:
            self.ctx.metrics.jobflow_failed.labels(namespace).inc()

    # --- JobTemplate: which Jobs were made from it (Volcano's status.jobDependsOnList) ------------------

    async def sync_template(self, key: Key) -> None:
        namespace, name = key
        template = next(
            (t for t in _values(self.indices.get(TEMPLATE_INDEX), namespace) if name_of(t) == name), None
        )
        if template is None:
            return
        mark = f"{namespace}.{name}"
        made = sorted(
            name_of(j)
            for (ns, kind, _), owned in self.owned.items()
            if ns == namespace and kind == c.JOBFLOW_KIND
            for j in owned.values()
            if label_of(j, c.CREATED_BY_JOB_TEMPLATE_KEY) == mark
        )
        status = {"jobDependsOnList": made} if made else {}
        await self._patch_status(JOBTEMPLATES, template, jobtemplate_status(template), status)

    # --- CronJob -----------------------------------------------------------------------------------------

    async def sync_cron(self, key: Key) -> None:
        found = _values(self.indices.get(CRON_INDEX), key)
        if not found:
            return
        body: JSON = found[0]
        namespace, name = key
        jobs = list(self._owned(namespace, c.CRONJOB_KIND, name).values())
        plan = plan_cronjob(body, jobs, self.clock())
        for event in plan.events:
            self.ctx.recorder.record(body, event.type, event.reason, event.message)
        for job_name in plan.delete:
            await self._delete_job(namespace, job_name)
            self.ctx.recorder.record(body, "Normal", "SuccessfulDelete", f'Deleted job "{job_name}"')
        status = plan.status
        if plan.create is not None:
            try:
                made = await self._create_job(body, plan.create)
            except ApiError as exc:
                # Retried (``_guard``); the CronJob says why meanwhile, as Volcano's does.
                self.ctx.recorder.record(body, "Warning", "FailedCreate", f"Failed to create job: {exc}")
                raise
            job_name = name_of(plan.create)
            active = [ref for ref in (status or {}).get("active", []) if ref.get("name") != job_name]
            if made is not None and not is_finished(made):
                active.append(job_ref(made))
            status = {**(status or {}), "active": active}
        if status is not None:
            await self._patch_status(
                CRONJOBS, body, cronjob_status(body), {k: v for k, v in status.items() if v}
            )
        if plan.requeue_after is not None:
            old = self.timers.pop(key, None)
            if old is not None:
                old.cancel()
            self.timers[key] = self.crons.add_after(plan.requeue_after, key, "sync")
