"""Job plugins (``spec.plugins``: svc, ssh, env, mpi, pytorch, ...) wired into the Job worker.

The plugins themselves are pure (``volcano_py.jobplugins``); this module builds them once per Job
generation (the ssh plugin makes a key pair, which must not change while the Job lives), applies the objects
they ask for (all on first sight, then on each scale or restart only what follows the spec), and deletes them
when the Job finishes, as Volcano's ``pluginOnJobAdd`` / ``OnJobUpdate`` / ``OnJobDelete`` do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.bodies.job import job_plugins
from volcano_py.api.objects import generation_of, resource_version_of, uid_of, with_resource_version
from volcano_py.jobplugins import (
    ApplyPolicy,
    JobPluginError,
    ManagedObject,
    ObjectRef,
    PluginSet,
    build_plugins,
)
from volcano_py.kube.client import ApiError, KubeClient

_PLURALS = {
    "Service": "services",
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "NetworkPolicy": "networkpolicies",
}


def object_path(api_version: str, kind: str, namespace: str, name: str | None = None) -> str:
    plural = _PLURALS.get(kind, kind.lower() + "s")
    prefix = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    path = f"{prefix}/namespaces/{namespace}/{plural}"
    return f"{path}/{name}" if name else path


def _differs(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    return any(have.get(k) != v for k, v in want.items() if k not in ("metadata", "apiVersion", "kind"))


class JobPlugins:
    """Per-Job plugin sets, cached by (uid, generation); applied once per (uid, generation, version)."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self._sets: dict[str, tuple[int, PluginSet]] = {}
        self._applied: dict[str, tuple[int, int]] = {}

    def plugins(self, body: Mapping[str, Any]) -> PluginSet | None:
        """The Job's plugins, or None when it names none; raises ``JobPluginError`` for a bad entry."""
        if not job_plugins(body):
            return None
        uid, generation = uid_of(body), generation_of(body)
        cached = self._sets.get(uid)
        if cached is not None and cached[0] == generation:
            return cached[1]
        built = build_plugins(body)
        self._sets[uid] = (generation, built)
        return built

    async def apply(self, body: Mapping[str, Any], plugins: PluginSet, version: int) -> None:
        """The plugins' objects: all of them the first time this process sees the Job (Volcano's
        ``OnJobAdd``), then, per new generation or version, only what follows the spec (``OnJobUpdate``)."""
        uid, stamp = uid_of(body), (generation_of(body), version)
        seen = self._applied.get(uid)
        if seen == stamp:
            return
        if seen is None:
            for obj in plugins.on_job_add(body):
                await self._ensure(obj)
        else:
            for obj in plugins.on_job_update(body):
                await self._rewrite(obj)
        self._applied[uid] = stamp

    async def _ensure(self, obj: ManagedObject) -> None:
        ref = obj.ref
        try:
            await self.client.create(object_path(ref.api_version, ref.kind, ref.namespace), obj.body)
        except ApiError as exc:
            if not exc.conflict:
                raise
            if obj.policy is ApplyPolicy.REPLACE:
                path = object_path(ref.api_version, ref.kind, ref.namespace, ref.name)
                current = await self.client.get(path)
                if _differs(current, obj.body):
                    await self.client.replace(
                        path, with_resource_version(obj.body, resource_version_of(current))
                    )

    async def _rewrite(self, obj: ManagedObject) -> None:
        # One unconditional PUT: pods mounting the hosts file see a scale as soon as the Job says it
        # (Volcano's e2e reads the ConfigMap 100 ms after the update), and nothing else writes this object.
        ref = obj.ref
        try:
            await self.client.replace(
                object_path(ref.api_version, ref.kind, ref.namespace, ref.name), obj.body
            )
        except ApiError as exc:
            if not exc.not_found:
                raise
            await self.client.create(object_path(ref.api_version, ref.kind, ref.namespace), obj.body)

    async def release(self, body: Mapping[str, Any], plugins: PluginSet) -> None:
        refs: list[ObjectRef] = plugins.on_job_delete(body)
        for ref in refs:
            try:
                await self.client.delete(object_path(ref.api_version, ref.kind, ref.namespace, ref.name))
            except ApiError as exc:
                if not exc.not_found:
                    raise
        self.forget(uid_of(body))

    def forget(self, uid: str) -> None:
        self._sets.pop(uid, None)
        self._applied.pop(uid, None)


__all__ = ["JobPluginError", "JobPlugins", "object_path"]
