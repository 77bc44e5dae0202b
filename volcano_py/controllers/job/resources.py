"""The objects a Job needs besides its pods: its PVCs and its PodGroup, created or brought up to date."""

from __future__ import annotations

from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import JobEvent
from volcano_py.api.bodies.conditions import condition_fields
from volcano_py.api.bodies.podgroup import podgroup_conditions, podgroup_phase
from volcano_py.api.job_view import ResolvedJob
from volcano_py.api.objects import uid_of
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.controllers.job.podbuilder import build_pvc
from volcano_py.controllers.job.podgroup import build_podgroup, spec_patch
from volcano_py.controllers.runtime.context import ControllerContext
from volcano_py.kube.client import ApiError
from volcano_py.kube.events import WARNING
from volcano_py.kube.kinds import PODGROUPS, PVCS


class JobResources:
    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        # PodGroups deleted by a kill: the cache may show them for a moment longer, and a restarted job
        # must not start pods on its old, already-admitted group.
        self.deleted_podgroups: set[str] = set()

    async def ensure_volumes(self, spec: ResolvedJob, body: dict[str, Any]) -> None:
        for vol in spec.volumes:
            path = PVCS.object_path(vol.claim_name, spec.namespace)
            if vol.claim_spec is None:
                try:
                    await self.ctx.client.get(path)
                except ApiError as exc:
                    if exc.not_found:
                        self.ctx.recorder.record(
                            body,
                            WARNING,
                            JobEvent.PVC_ERROR,
                            f"pvc {vol.claim_name} is not found; the job waits for it",
                        )
                    raise
                continue
            try:
                await self.ctx.client.create(
                    PVCS.collection_path(spec.namespace), build_pvc(spec, vol.claim_name, vol.claim_spec)
                )
            except ApiError as exc:
                if not exc.conflict:
                    raise

    async def priorities(self, spec: ResolvedJob) -> dict[str, int]:
        names = {t.spec.pod_spec.get("priorityClassName") for t in spec.tasks} - {None, ""}
        out: dict[str, int] = {}
        for name in names:
            try:
                pc = await self.ctx.client.get(f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")
                out[str(name)] = int(pc.get("value", 0))
            except ApiError as exc:
                if not exc.not_found:
                    raise
        return out

    def report_podgroup(self, body: dict[str, Any], spec: ResolvedJob, podgroup: dict[str, Any]) -> None:
        """Volcano's PodGroupPending event: the newest true condition, when it is not Scheduled."""
        # (type, status, reason, message, lastTransitionTime) of each condition that holds.
        held = [f for f in map(condition_fields, podgroup_conditions(podgroup)) if f[1] == "True"]
        if not held:
            return
        kind, _, _, said, _ = max(held, key=lambda f: f[4])
        if kind != c.PODGROUP_CONDITION_SCHEDULED:
            message = f"PodGroup {spec.namespace}:{spec.name} {kind.lower()}, reason: {said}"
            self.ctx.recorder.record(body, WARNING, JobEvent.PODGROUP_PENDING, message)

    async def ensure_podgroup(self, spec: ResolvedJob) -> str | None:
        """Create or update the Job's PodGroup; return its phase (None: just created, not admitted)."""
        current = self.ctx.podgroup(spec.namespace, spec.podgroup_name)
        if current is not None and uid_of(current) in self.deleted_podgroups:
            current = None
        priorities = await self.priorities(spec) if len(spec.tasks) > 1 else {}
        if current is None:
            try:
                await self.ctx.client.create(
                    PODGROUPS.collection_path(spec.namespace), build_podgroup(spec, priorities)
                )
            except ApiError as exc:
                if not exc.conflict:
                    raise
            return None
        patch = spec_patch(current, spec, priorities)
        if patch is not None:
            await self.ctx.client.patch(PODGROUPS.object_path(spec.podgroup_name, spec.namespace), patch)
        return podgroup_phase(current) or PodGroupPhase.PENDING.value
