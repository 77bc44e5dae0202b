"""PodGroups for plain pods, from an informer of our own. Does I/O: reads the pod's owner, creates its
PodGroup, annotates the pod.

The pods come from a watch with the server-side selector ``spec.schedulerName=<ours>``, one per scheduler
name, not from Kopf: Kopf's per-event machinery cost about 4 ms of CPU per plain pod (``bench_e2e.py
--system volcano-py-deployed``), and every pod event of the cluster passed through it. A pod is handled
once: its work item is keyed by the pod and collapses while it waits, and once the pod is annotated, the
events that still show it without the annotation (the bind, the kubelet's status) are not handled again. So
each plain pod costs one PodGroup create (none when its owner's group exists) and one patch.

ReplicaSets are watched too: one scaled to zero (a Deployment's old revision after a rollout) has its
PodGroup deleted (``rules.retired_podgroup``).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence

from volcano_py.api import constants as c
from volcano_py.api.objects import annotations_of, name_of, namespace_of, uid_of
from volcano_py.controllers.podgroup import rules
from volcano_py.controllers.runtime.context import ControllerContext
from volcano_py.controllers.runtime.workqueue import KeyedQueue
from volcano_py.kube.client import STRATEGIC_MERGE_PATCH, ApiError, is_partial
from volcano_py.kube.events import WARNING
from volcano_py.kube.informer import Informer
from volcano_py.kube.kinds import PODGROUPS, PODS, REPLICASETS
from volcano_py.kube.store import Delta, EventType, Obj
from volcano_py.log import get_logger

_log = get_logger(__name__)

# Owners whose annotations a plain pod's PodGroup inherits (group-min-member, queue, topology...).
OWNER_PATHS = {
    "ReplicaSet": "/apis/apps/v1/namespaces/{ns}/replicasets/{name}",
    "StatefulSet": "/apis/apps/v1/namespaces/{ns}/statefulsets/{name}",
    "DaemonSet": "/apis/apps/v1/namespaces/{ns}/daemonsets/{name}",
    "Job": "/apis/batch/v1/namespaces/{ns}/jobs/{name}",
}
RETRY_SECONDS = 1.0
# Pods grouped at once: each holds one request in flight.
WORKERS = 16

PodKey = tuple[str, str]


class PlainPodGroups:
    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.scheduler_names = frozenset(ctx.options.scheduler_names)
        # Every request is "look at this pod again": consecutive ones collapse.
        self.queue: KeyedQueue[PodKey, None] = KeyedQueue(is_resync=lambda _r: True)
        # The newest body of each pod waiting for its group.
        self.waiting: dict[PodKey, Obj] = {}
        # Pods annotated here whose watch has not shown the annotation yet (by uid).
        self.annotated: set[str] = set()
        # PodGroups of ReplicaSets scaled to zero, to delete: (namespace, PodGroup name).
        self.retiring: KeyedQueue[PodKey, None] = KeyedQueue(is_resync=lambda _r: True)

    def informers(self, namespaces: Sequence[str | None]) -> list[Informer]:
        pods = [
            Informer(
                self.ctx.client,
                PODS,
                functools.partial(self.changed, scheduler_name=name),
                namespace=namespace,
                field_selector=f"spec.schedulerName={name}",
                # A restarted controller lists every pod of ours, nearly all of them grouped long ago: their
                # metadata says so, at a fraction of the bytes to decode and keep.
                list_metadata_only=True,
            )
            for namespace in namespaces
            for name in sorted(self.scheduler_names)
        ]
        replicasets = [
            Informer(self.ctx.client, REPLICASETS, self.replicaset_changed, namespace=namespace)
            for namespace in namespaces
        ]
        return pods + replicasets

    def replicaset_changed(self, delta: Delta) -> None:
        """The ReplicaSet informer's handler (no I/O): a zero-replica set's group is queued for deletion."""
        if delta.type is EventType.DELETED or delta.new is None:
            return  # its PodGroup goes with it through the owner reference
        name = rules.retired_podgroup(delta.new)
        if name is not None:
            self.retiring.add((namespace_of(delta.new), name), None)

    async def retire(self, key: PodKey, _request: None) -> None:
        namespace, name = key
        if self.ctx.podgroup(namespace, name) is None:
            return  # never had one (not ours, or an old revision already cleared): no API call
        try:
            await self.ctx.client.delete(PODGROUPS.object_path(name, namespace))
        except ApiError as exc:
            if exc.not_found:
                return
            where = f"{namespace}/{name}"
            _log.warning(
                "zero-replica ReplicaSet's PodGroup not deleted yet; again", podgroup=where, error=repr(exc)
            )
            self.retiring.add_after(RETRY_SECONDS, key, None)

    def changed(self, delta: Delta, scheduler_name: str = c.SCHEDULER_NAME) -> None:
        """The informer's handler (no I/O): queue a pod that needs a group, forget one that no longer does.
        A listed pod's metadata is all there is of it: its informer's selector says whose it is."""
        body = delta.new
        key = (namespace_of(body), name_of(body))
        uid = uid_of(body)
        seen = {**body, "spec": {"schedulerName": scheduler_name}} if is_partial(body) else body
        if delta.type is EventType.DELETED or not rules.needs_podgroup(seen, self.scheduler_names):
            self.waiting.pop(key, None)
            self.annotated.discard(uid)
            return
        if uid in self.annotated:
            return  # our patch is on its way back through the watch
        self.waiting[key] = body
        self.queue.add(key, None)

    async def handle(self, key: PodKey, _request: None) -> None:
        pod = self.waiting.pop(key, None)
        if pod is None or uid_of(pod) in self.annotated:
            return  # deleted or grouped meanwhile, or an event that came while it was being grouped
        try:
            if is_partial(pod):
                whole = await self._read_whole(key)
                if whole is None:
                    return  # gone, or grouped by now
                pod = whole
            await self._group(pod)
        except Exception as exc:
            _log.warning("plain pod not grouped yet; again", pod=f"{key[0]}/{key[1]}", error=repr(exc))
            self.waiting.setdefault(key, pod)
            self.queue.add_after(RETRY_SECONDS, key, None)

    async def _read_whole(self, key: PodKey) -> Obj | None:
        """The pod as the API has it now, if it still needs a group (a listed pod came as metadata only)."""
        try:
            pod = await self.ctx.client.get(PODS.object_path(key[1], key[0]))
        except ApiError as exc:
            if exc.not_found:
                return None
            raise
        return pod if rules.needs_podgroup(pod, self.scheduler_names) else None

    async def _group(self, pod: Obj) -> None:
        namespace = namespace_of(pod)
        owner_annotations: dict[str, str] = {}
        ref = rules.controller_ref(pod)
        if ref is not None and ref.get("kind") in OWNER_PATHS:
            try:
                owner = await self.ctx.client.get(
                    OWNER_PATHS[str(ref["kind"])].format(ns=namespace, name=ref["name"])
                )
                owner_annotations = dict(annotations_of(owner))
            except ApiError as exc:
                if not exc.not_found:
                    raise
        try:
            group = rules.build_podgroup(pod, owner_annotations)
        except ValueError as exc:
            self.ctx.recorder.record(pod, WARNING, "InvalidPodGroup", str(exc))
            return
        pg_name = name_of(group)
        if self.ctx.podgroup(namespace, pg_name) is None:
            try:
                await self.ctx.client.create(PODGROUPS.collection_path(namespace), group)
            except ApiError as exc:
                if not exc.conflict:
                    raise
        patch = {"metadata": {"annotations": {c.KUBE_GROUP_NAME_KEY: pg_name}}}
        try:
            await self.ctx.client.patch(
                PODS.object_path(name_of(pod), namespace), patch, STRATEGIC_MERGE_PATCH
            )
        except ApiError as exc:
            if not exc.not_found:
                raise
            return
        self.annotated.add(uid_of(pod))

    async def run(self, workers: int = WORKERS) -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(self.queue.run(self.handle, workers))
            group.create_task(self.retiring.run(self.retire, 1))
