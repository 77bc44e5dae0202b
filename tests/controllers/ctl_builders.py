"""Fluent builders of Job and pod bodies for the controller's table tests."""

from __future__ import annotations

import copy
from typing import Any

from volcano_py.api import constants as c


def container(cpu: str = "1", memory: str = "1Gi", gpu: int = 0) -> dict[str, Any]:
    requests: dict[str, Any] = {"cpu": cpu, "memory": memory}
    resources: dict[str, Any] = {"requests": requests}
    if gpu:
        # A device cannot be overcommitted: the API server (and Volcano's Job webhook) want its limit too.
        requests["nvidia.com/gpu"] = gpu
        resources["limits"] = {"nvidia.com/gpu": gpu}
    return {"name": "main", "image": "busybox", "resources": resources}


class JobBuilder:
    def __init__(self, name: str = "job", namespace: str = "ns", uid: str = "uid-1234") -> None:
        self.body: dict[str, Any] = {
            "apiVersion": c.BATCH_API_VERSION,
            "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "spec": {"tasks": []},
        }

    def task(
        self,
        name: str,
        replicas: int = 1,
        *,
        min_available: int | None = None,
        cpu: str = "1",
        gpu: int = 0,
        priority_class: str = "",
        policies: list[dict[str, Any]] | None = None,
        depends_on: list[str] | None = None,
        any_of: bool = False,
    ) -> JobBuilder:
        spec: dict[str, Any] = {"containers": [container(cpu, gpu=gpu)], "restartPolicy": "Never"}
        if priority_class:
            spec["priorityClassName"] = priority_class
        task: dict[str, Any] = {"name": name, "replicas": replicas, "template": {"spec": spec}}
        if min_available is not None:
            task["minAvailable"] = min_available
        if policies:
            task["policies"] = policies
        if depends_on:
            task["dependsOn"] = {"name": depends_on, **({"iteration": "any"} if any_of else {})}
        self.body["spec"]["tasks"].append(task)
        return self

    def set(self, **fields: Any) -> JobBuilder:
        self.body["spec"].update(fields)
        return self

    def policy(
        self, action: str, *, event: str = "", exit_code: int | None = None, timeout: str = ""
    ) -> JobBuilder:
        self.body["spec"].setdefault("policies", []).append(
            policy(action, event=event, exit_code=exit_code, timeout=timeout)
        )
        return self

    def status(self, **fields: Any) -> JobBuilder:
        self.body["status"] = fields
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self.body)


def policy(
    action: str, *, event: str = "", exit_code: int | None = None, timeout: str = ""
) -> dict[str, Any]:
    out: dict[str, Any] = {"action": action}
    if event:
        out["event"] = event
    if exit_code is not None:
        out["exitCode"] = exit_code
    if timeout:
        out["timeout"] = timeout
    return out


class PodBuilder:
    def __init__(
        self, job: str, task: str, index: int, *, namespace: str = "ns", job_uid: str = "uid-1234"
    ) -> None:
        self.body: dict[str, Any] = {
            "metadata": {
                "name": f"{job}-{task}-{index}",
                "namespace": namespace,
                "uid": f"pod-{job}-{task}-{index}",
                "annotations": {
                    c.TASK_SPEC_KEY: task,
                    c.TASK_INDEX_KEY: str(index),
                    c.JOB_NAME_KEY: job,
                    c.JOB_VERSION_KEY: "0",
                    c.JOB_RETRY_COUNT_KEY: "0",
                },
                "ownerReferences": [{"kind": "Job", "uid": job_uid, "controller": True}],
            },
            "status": {"phase": "Pending"},
        }

    def phase(self, phase: str) -> PodBuilder:
        self.body["status"]["phase"] = phase
        return self

    def version(self, version: int) -> PodBuilder:
        self.body["metadata"]["annotations"][c.JOB_VERSION_KEY] = str(version)
        return self

    def exit_code(self, code: int) -> PodBuilder:
        self.body["status"]["phase"] = "Failed"
        self.body["status"]["containerStatuses"] = [
            {"ready": False, "restartCount": 0, "state": {"terminated": {"exitCode": code}}}
        ]
        return self

    def ready(self) -> PodBuilder:
        self.body["status"]["phase"] = "Running"
        self.body["status"]["containerStatuses"] = [
            {"ready": True, "restartCount": 0, "state": {"running": {}}}
        ]
        return self

    def restarts(self, n: int) -> PodBuilder:
        self.body["status"].setdefault("containerStatuses", [{"ready": False, "state": {}}])[0][
            "restartCount"
        ] = n
        return self

    def deleting(self) -> PodBuilder:
        self.body["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def out_of_sync(self) -> PodBuilder:
        self.body["metadata"]["annotations"][c.CONTROLLER_OUT_OF_SYNC_KEY] = ""
        return self

    def preempted(self) -> PodBuilder:
        self.body["status"].setdefault("conditions", []).append(
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
        )
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self.body)
