"""Builders for admission tests: Jobs, Queues, PodGroups as the API server sends them, and queue snapshots."""

from __future__ import annotations

import copy
from typing import Any


def container(name: str = "main") -> dict[str, Any]:
    return {"name": name, "image": "busybox", "command": ["sleep", "1"]}


def task(name: str | None = "worker", replicas: int = 2, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "replicas": replicas,
        "template": {"spec": {"containers": [container()]}},
        **fields,
    }
    if name is not None:
        out["name"] = name
    return out


def job(name: str = "job1", *, tasks: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {"queue": "default", "schedulerName": "volcano", "minAvailable": 2, "maxRetry": 3},
    }
    body["spec"]["tasks"] = [task()] if tasks is None else tasks
    body["spec"].update(spec)
    return body


def queue(
    name: str,
    *,
    state: str | None = "Open",
    parent: str | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "reclaimable": True, **spec},
    }
    if parent is not None:
        body["spec"]["parent"] = parent
    if annotations:
        body["metadata"]["annotations"] = annotations
    if state is not None:
        body["status"] = {"state": state}
    return body


def podgroup(name: str = "pg1", *, queue: str | None = "default", min_member: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member}
    if queue is not None:
        spec["queue"] = queue
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": spec,
    }


def snapshot(*queues: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The admission's view of the cluster: the queues by name (``default`` and ``root`` always there)."""
    out = {"root": queue("root"), "default": queue("default")}
    out.update({q["metadata"]["name"]: copy.deepcopy(q) for q in queues})
    return out
