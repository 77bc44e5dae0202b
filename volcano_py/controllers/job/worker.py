"""Reconcile one Job for one request: decide the action, plan, then write pods, PodGroup and status.

Reads come from the context's caches; every write is idempotent (pods have fixed names, a 409 on create
means the pod is there, a 404 on delete means it is gone), and the status is written with the
resourceVersion read, so a stale decision is rejected by the API server and retried from fresh state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import JobEvent, JobPhase, JobStatus
from volcano_py.api.bodies.job import job_with_status
from volcano_py.api.bus import Action, Event
from volcano_py.api.common import now_time
from volcano_py.api.job_view import JobSpecError, ResolvedJob, read_status, status_to_dict
from volcano_py.api.objects import creation_timestamp_of, name_of, uid_of
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.controllers.job import policies
from volcano_py.controllers.job.plan import Plan, plan_step
from volcano_py.controllers.job.plugin_objects import JobPluginError, JobPlugins
from volcano_py.controllers.job.podbuilder import build_pod
from volcano_py.controllers.job.podview import read_pod
from volcano_py.controllers.job.policies import Decision, Request, cancels_delayed
from volcano_py.controllers.job.resources import JobResources
from volcano_py.controllers.job.state import Op, Target, step_for
from volcano_py.controllers.job.status import transition
from volcano_py.controllers.job.ttl import seconds_left
from volcano_py.controllers.runtime.context import ControllerContext, DelayedAction, JobKey
from volcano_py.jobplugins import PluginSet
from volcano_py.kube.client import JSON_PATCH, NETWORK_ERRORS, ApiError
from volcano_py.kube.events import NORMAL, WARNING
from volcano_py.kube.kinds import JOBS, PODGROUPS, PODS
from volcano_py.kube.leader import Fenced
from volcano_py.log import get_logger

_log = get_logger(__name__)

# Phases in which Volcano releases what plugins created (Services, ConfigMaps, Secrets).
_RELEASING_PHASES = frozenset({JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.ABORTED, JobPhase.TERMINATED})
RETRY_BASE_SECONDS = 0.5
RETRY_MAX_SECONDS = 60.0


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


class JobWorker:
    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self._create_limit = asyncio.Semaphore(ctx.options.create_concurrency)
        self._job_created: dict[str, datetime] = {}
        self.resources = JobResources(ctx)
        self._failures: dict[JobKey, int] = {}
        self.plugins = JobPlugins(ctx.client)
        self._retrying: set[JobKey] = set()

    async def handle(self, key: JobKey, req: Request) -> None:
        self.ctx.metrics.queue_depth.set(self.ctx.job_queue.depth())
        try:
            await self._reconcile(key, req)
        except Fenced as exc:
            # Not the leader any more: the term is ending, and the next leader reconciles this Job afresh.
            _log.debug("job reconcile dropped: not the leader", job=f"{key[0]}/{key[1]}", write=str(exc))
            return
        except (ApiError, *NETWORK_ERRORS) as exc:
            # A conflict means we decided on stale data: redo it from the cache once the watch catches up.
            # Anything else (no answer at all, too) backs off exponentially per Job, so one broken Job cannot
            # flood the API server.
            failures = self._failures.get(key, 0) + 1
            self._failures[key] = failures
            delay = min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2 ** (failures - 1))
            level = _log.debug if isinstance(exc, ApiError) and exc.conflict else _log.warning
            level("job reconcile failed; retrying", job=f"{key[0]}/{key[1]}", error=str(exc), retry_in=delay)
            self.ctx.written_jobs.pop(key, None)
            if req.action is not None or req.event is not Event.OUT_OF_SYNC:
                # A command or a policy-triggering event must not be lost to a failed write: retry it as is.
                self.ctx.job_queue.add_after(delay, key, req)
            elif key not in self._retrying:
                self._retrying.add(key)
                self.ctx.job_queue.add_after(delay, key, Request(event=Event.OUT_OF_SYNC))
            return
        self._failures.pop(key, None)

    async def _reconcile(self, key: JobKey, req: Request) -> None:
        self._retrying.discard(key)
        body = self.ctx.job(key)
        if body is None:
            self.ctx.cancel_timers(key)
            return
        try:
            spec = self.ctx.spec(body)
            status = read_status(body)
        except JobSpecError as exc:
            self.ctx.recorder.record(body, WARNING, "InvalidJob", str(exc))
            return
        if spec.deleting:
            return
        # The plugins read the Job as the webhook would have admitted it (svc for a framework, task names).
        job = spec.with_defaults(body)
        try:
            plugin_set = self.plugins.plugins(job)
        except JobPluginError as exc:
            self.ctx.recorder.record(body, WARNING, JobEvent.PLUGIN_ERROR, str(exc))
            return
        cancel_recovered(self.ctx, key, req)
        decision = policies.decide(spec, status.version, req)
        if decision.delay_seconds > 0:
            self._delay(key, body, decision)
            return
        if decision.action is not Action.SYNC_JOB:
            if req.action is None:
                # Which pod's event set a policy off: the Job's Event does not say (Volcano's text).
                _log.info(
                    "policy triggered",
                    job=f"{key[0]}/{key[1]}",
                    action=str(decision.action),
                    pod_event=str(req.event),
                    pod=req.pod,
                    pod_uid=req.pod_uid,
                    phase=str(status.state.phase),
                    retry_count=status.retry_count,
                )
            self.ctx.recorder.record(
                body, NORMAL, JobEvent.EXECUTE_ACTION, f"Start to execute action {decision.action}"
            )
        now = now_time()
        if status.state.phase is None:
            status = transition(status, JobPhase.PENDING, now)
        target = None
        if decision.action in (Action.RESTART_TASK, Action.RESTART_POD) and decision.task:
            target = Target(decision.task, decision.pod if decision.action is Action.RESTART_POD else "")
        elif decision.action is Action.RESTART_PARTITION and decision.task:
            target = Target(decision.task, partition=decision.partition)
        step = step_for(status.state.phase, decision.action, target, count_retry=not req.disrupted)
        pg_phase: str | None = None
        controlled = dict(status.controlled_resources)
        if step.op is Op.SYNC:
            await self.resources.ensure_volumes(spec, body)
            for vol in spec.volumes:
                controlled[f"volume-pvc-{vol.claim_name}"] = vol.claim_name
            if plugin_set is not None:
                await self.plugins.apply(job, plugin_set, status.version)
                controlled.update(plugin_set.controlled_resources())
            pg_phase = await self.resources.ensure_podgroup(spec)
            podgroup = self.ctx.podgroup(spec.namespace, spec.podgroup_name)
            if podgroup is not None and pg_phase in (None, PodGroupPhase.PENDING):
                self.resources.report_podgroup(body, spec, podgroup)
        pods = [p for p in map(read_pod, self.ctx.job_pods(key)) if not p.job_uid or p.job_uid == spec.uid]
        plan = plan_step(spec, status, pods, pg_phase, step, now)
        await self._execute(spec, job, plan, plugin_set, {p.name: p.uid for p in pods})
        holds_plugin_objects = any(k.startswith("plugin-") for k in controlled)
        if plugin_set is not None and holds_plugin_objects and plan.status.state.phase in _RELEASING_PHASES:
            await self.plugins.release(job, plugin_set)
            controlled = {k: v for k, v in controlled.items() if not k.startswith("plugin-")}
        plan = replace(plan, status=plan.status.model_copy(update={"controlled_resources": controlled}))
        await self._write_status(key, body, read_status(body), plan.status, spec)
        if not policies.is_internal(decision.action):
            self._cleanup_superseded(key, decision)
        await self._apply_ttl(key, spec, plan.status)

    # --- delayed actions ------------------------------------------------------------------------------

    def _delay(self, key: JobKey, body: dict[str, Any], decision: Decision) -> None:
        per_job = self.ctx.delayed.setdefault(key, {})
        existing = per_job.get(decision.pod)
        if existing is not None and existing.decision.action is decision.action:
            return
        if existing is not None:
            existing.handle.cancel()
        fire = Request(
            event=decision.event,
            action=decision.action,
            task=decision.task,
            pod=decision.pod,
            pod_uid=decision.pod_uid,
            partition=decision.partition,
        )
        handle = self.ctx.job_queue.add_after(decision.delay_seconds, key, fire)
        per_job[decision.pod] = DelayedAction(decision, handle)
        self.ctx.recorder.record(
            body,
            NORMAL,
            JobEvent.EXECUTE_ACTION,
            f"Execute action {decision.action} after {decision.delay_seconds:g}s",
        )

    def _cleanup_superseded(self, key: JobKey, executed: Decision) -> None:
        per_job = self.ctx.delayed.get(key)
        if not per_job:
            return
        for pod, entry in list(per_job.items()):
            if policies.superseded(entry.decision, executed):
                entry.handle.cancel()
                del per_job[pod]

    # --- writes -----------------------------------------------------------------------------------------

    async def _create_pod(self, spec: ResolvedJob, pod: dict[str, Any]) -> None:
        async with self._create_limit:
            name = f"{spec.namespace}/{name_of(pod)}"
            stamp = self.ctx.ensure_leading(f"create pod {name}")
            try:
                created = await self.ctx.client.create(PODS.collection_path(spec.namespace), pod)
            except ApiError as exc:
                if exc.conflict:
                    return  # created before a restart, or by a retry: the name is the identity
                raise
        self.ctx.metrics.pods_created.inc()
        # Per pod, so at debug only: a Job's progress; the chaos suite times its mid-creation kills from it,
        # and places the write in a leader's term by its WriteStamp.
        _log.debug("pod created", pod=name, **stamp.fields())
        created_at = creation_timestamp_of(created)
        job_created = self._job_created.get(spec.uid)
        if created_at and job_created:
            delta = datetime.fromisoformat(created_at.replace("Z", "+00:00")) - job_created
            self.ctx.metrics.job_to_pod_latency.observe(max(delta.total_seconds(), 0.0) * 1000)

    async def _kill_pod(self, spec: ResolvedJob, name: str, uid: str) -> None:
        path = PODS.object_path(name, spec.namespace)
        stamp = self.ctx.ensure_leading(f"delete pod {spec.namespace}/{name}")
        # Taken back below only if this call added it: when an earlier kill of ours marked and deleted the pod
        # (a sync that read it before its deletion showed kills it again), the pod's deletion is still ours.
        added = bool(uid) and uid not in self.ctx.killed_pods
        if added:
            self.ctx.killed_pods.add(uid)
        # Mark first, so the pod's deletion reads as the controller's doing (OutOfSync), not an eviction.
        mark: list[dict[str, str]] = [
            {
                "op": "add",
                "path": f"/metadata/annotations/{_escape(c.CONTROLLER_OUT_OF_SYNC_KEY)}",
                "value": "true",
            }
        ]
        if uid:
            # Only the pod this plan read: a failed test (422) leaves a successor unmarked, and the delete's
            # precondition below then leaves it alone.
            mark.insert(0, {"op": "test", "path": "/metadata/uid", "value": uid})
        try:
            await self.ctx.client.patch(path, mark, JSON_PATCH)
        except ApiError as exc:
            if exc.not_found:
                if added:
                    self.ctx.killed_pods.discard(uid)  # gone already: its deletion was someone else's
                return
            if exc.status != 422:  # 422: the pod has no annotations map at all; deletion still proceeds
                if added:
                    self.ctx.killed_pods.discard(uid)  # not deleted: the retried request kills it again
                raise
        # With its uid as a precondition: a successor under the same name (one the Job's next sync made once
        # the old pod was gone) is never killed in its place, and so never read as evicted.
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}}
        try:
            await self.ctx.client.delete(path, options if uid else None)
        except ApiError as exc:
            if exc.not_found or (uid and exc.conflict):
                return  # the pod this plan read is gone already
            raise
        _log.debug("pod deleted", pod=f"{spec.namespace}/{name}", **stamp.fields())

    async def _execute(
        self,
        spec: ResolvedJob,
        body: dict[str, Any],
        plan: Plan,
        plugin_set: PluginSet | None,
        uids: Mapping[str, str],
    ) -> None:
        created_at = creation_timestamp_of(body)
        if created_at and spec.uid not in self._job_created:
            self._job_created[spec.uid] = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
        writes = [self._kill_pod(spec, name, uids.get(name, "")) for name in plan.delete]
        for task_name, index in plan.create:
            task = spec.task(task_name)
            assert task is not None
            pod = build_pod(
                spec, task, index, version=plan.status.version, retry_count=plan.status.retry_count
            )
            if plugin_set is not None:
                plugin_set.on_pod_create(body, pod, task_name, index)
            writes.append(self._create_pod(spec, pod))
        results = await asyncio.gather(*writes, return_exceptions=True)
        fenced = next((r for r in results if isinstance(r, Fenced)), None)
        if fenced is not None:
            raise fenced
        errors = [r for r in results if isinstance(r, BaseException)]
        pg = self.ctx.podgroup(spec.namespace, spec.podgroup_name) if plan.delete_podgroup else None
        pg_uid = uid_of(pg) if pg is not None else ""
        if pg is not None and pg_uid not in self.resources.deleted_podgroups:
            self.ctx.ensure_leading(f"delete PodGroup {spec.namespace}/{spec.podgroup_name}")
            try:
                await self.ctx.client.delete(
                    PODGROUPS.object_path(spec.podgroup_name, spec.namespace),
                    {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": pg_uid}},
                )
                self.resources.deleted_podgroups.add(pg_uid)
            except ApiError as exc:
                if exc.not_found or exc.conflict:
                    self.resources.deleted_podgroups.add(pg_uid)
                else:
                    errors.append(exc)
        if errors:
            reason = "FailedCreatePod" if plan.create else "FailedDeletePod"
            self.ctx.recorder.record(body, WARNING, reason, f"{len(errors)} pod writes failed: {errors[0]}")
            first = errors[0]
            raise first if isinstance(first, ApiError) else ApiError(500, "InternalError", str(first))

    async def _write_status(
        self, key: JobKey, body: dict[str, Any], before: JobStatus, after: JobStatus, spec: ResolvedJob
    ) -> None:
        if after == before:
            return
        self.ctx.ensure_leading(f"Job status {key[0]}/{key[1]}")
        written = await self.ctx.client.replace(
            JOBS.object_path(spec.name, spec.namespace, "status"),
            job_with_status(body, status_to_dict(after)),
        )
        self.ctx.remember_written(key, written)
        phase = after.state.phase
        if phase != before.state.phase and phase is not None:
            # The echo of this write is skipped, and a new phase may have work to do at once (Restarting ->
            # Pending with no pod left to send an event), so look again.
            self.ctx.job_queue.add(key, Request())
            self.ctx.recorder.record(body, NORMAL, str(phase), f"Job {spec.name} is {phase}")
            if phase is JobPhase.COMPLETED:
                self.ctx.metrics.job_completed.labels(f"{spec.namespace}/{spec.name}", spec.queue).inc()
            elif phase is JobPhase.FAILED:
                self.ctx.metrics.job_failed.labels(f"{spec.namespace}/{spec.name}", spec.queue).inc()

    async def _delete_expired(self, key: JobKey, spec: ResolvedJob) -> None:
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": "Background",
        }
        body["preconditions"] = {"uid": spec.uid}
        try:
            await self.ctx.client.delete(JOBS.object_path(spec.name, spec.namespace), body)
            _log.info("deleted finished job after its TTL", job=f"{spec.namespace}/{spec.name}")
        except ApiError as exc:
            if not (exc.not_found or exc.conflict):
                raise

    async def _apply_ttl(self, key: JobKey, spec: ResolvedJob, status: JobStatus) -> None:
        left = seconds_left(spec, status, datetime.now(UTC))
        if left is None:
            return
        if left <= 0:
            self.ctx.ttl_timers.pop(key, None)
            await self._delete_expired(key, spec)
        elif key not in self.ctx.ttl_timers:
            self.ctx.ttl_timers[key] = self.ctx.job_queue.add_after(left + 0.05, key, Request())


def cancel_recovered(ctx: ControllerContext, key: JobKey, req: Request) -> None:
    """Cancel the action delayed for ``req``'s pod if this event shows the pod recovered."""
    delayed = ctx.delayed.get(key) or {}
    entry = delayed.get(req.pod) if req.pod else None
    if entry is not None and cancels_delayed(entry.decision, req):
        _log.info("cancel delayed action", job=key[1], action=entry.decision.action, pod=req.pod)
        entry.handle.cancel()
        del delayed[req.pod]
