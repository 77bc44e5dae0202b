"""Fluent builders for wire-form manifests: ``make_job("j").task("w", replicas=2).policy(...).obj()``."""

from __future__ import annotations

import copy
from typing import Any


def pod_template(cpu: str = "1", memory: str = "1Gi", **spec: Any) -> dict[str, Any]:
    container = {
        "name": "main",
        "image": "busybox",
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
    }
    return {"spec": {"containers": [container], **spec}}


class JobBuilder:
    def __init__(self, name: str, namespace: str | None = None) -> None:
        metadata: dict[str, Any] = {"name": name}
        if namespace:
            metadata["namespace"] = namespace
        self._obj: dict[str, Any] = {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": metadata,
            "spec": {"tasks": []},
        }

    @property
    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._obj["spec"]
        return spec

    def task(self, name: str | None, replicas: int = 1, **fields: Any) -> JobBuilder:
        task: dict[str, Any] = {"replicas": replicas, "template": fields.pop("template", pod_template())}
        if name is not None:
            task["name"] = name
        task.update(fields)
        self.spec["tasks"].append(task)
        return self

    def min_available(self, value: int) -> JobBuilder:
        self.spec["minAvailable"] = value
        return self

    def policy(self, **policy: Any) -> JobBuilder:
        self.spec.setdefault("policies", []).append(policy)
        return self

    def set(self, **fields: Any) -> JobBuilder:
        self.spec.update(fields)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._obj)


def make_job(name: str = "job", namespace: str | None = None) -> JobBuilder:
    return JobBuilder(name, namespace)


def make_queue(name: str = "q", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }


def make_podgroup(name: str = "pg", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def make_hypernode(name: str = "hn", tier: int = 1, members: list[Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "members": members if members is not None else []},
    }
