"""Fluent builders for Jobs and the pods the Job controller would build from them."""

from __future__ import annotations

import copy
from typing import Any

from volcano_py.api import constants


class JobBuilder:
    def __init__(self, name: str, namespace: str = "ns1") -> None:
        self._job: dict[str, Any] = {
            "apiVersion": constants.BATCH_API_VERSION,
            "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": {"tasks": [], "plugins": {}},
        }

    def task(
        self, name: str, replicas: int = 1, *, containers: int = 1, init: int = 0, **spec: Any
    ) -> JobBuilder:
        pod_spec: dict[str, Any] = {
            "containers": [
                {"name": name if i == 0 else f"{name}-{i}", "image": "busybox"} for i in range(containers)
            ],
            **spec,
        }
        if init:
            pod_spec["initContainers"] = [{"name": f"init-{i}", "image": "busybox"} for i in range(init)]
        self._job["spec"]["tasks"].append(
            {"name": name, "replicas": replicas, "template": {"spec": pod_spec}}
        )
        return self

    def plugin(self, name: str, *args: str) -> JobBuilder:
        self._job["spec"]["plugins"][name] = list(args)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._job)


def make_job(name: str = "job1", namespace: str = "ns1") -> JobBuilder:
    return JobBuilder(name, namespace)


def make_pod(job: dict[str, Any], task_name: str, index: int) -> dict[str, Any]:
    """A pod as the Job controller's pod builder hands it to the plugins: template, name, labels."""
    task = next(task for task in job["spec"]["tasks"] if task["name"] == task_name)
    name = f"{job['metadata']['name']}-{task_name}-{index}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": job["metadata"]["namespace"],
            "labels": {
                constants.JOB_NAME_KEY: job["metadata"]["name"],
                constants.JOB_NAMESPACE_KEY: job["metadata"]["namespace"],
                constants.TASK_SPEC_KEY: task_name,
            },
            "annotations": {constants.TASK_SPEC_KEY: task_name, constants.TASK_INDEX_KEY: str(index)},
        },
        "spec": copy.deepcopy(task["template"]["spec"]),
    }


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    """name -> value (or valueFrom) of a container's env, asserting no name appears twice."""
    names = [entry["name"] for entry in container.get("env", [])]
    assert len(names) == len(set(names)), f"duplicate env names: {names}"
    return {entry["name"]: entry.get("value", entry.get("valueFrom")) for entry in container.get("env", [])}


def fixed_keys() -> tuple[bytes, bytes]:
    return b"-----BEGIN RSA PRIVATE KEY-----\nfake\n-----END RSA PRIVATE KEY-----\n", b"ssh-rsa AAAAfake\n"
