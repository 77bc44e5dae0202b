"""ray: start a Ray cluster from a Job with a head task and a worker task.

The head task's ``--headContainer`` runs ``ray start --head --block`` and declares the GCS, dashboard and
client-server ports; the worker task's ``--workerContainer`` runs
``ray start --block --address=<head>:<port>``.
A Service ``<job>-head-svc`` selects the head pod by its task label, so clients reach the dashboard
(``:8265``) and ``ray://`` (``:10001``) by name. Arguments (Volcano's): ``--head`` (``head``),
``--headContainer`` (``head``), ``--worker`` (``worker``), ``--workerContainer`` (``worker``), ``--port``
(6379), ``--dashboardPort`` (8265), ``--clientPort`` (10001).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api import constants
from volcano_py.api.objects import name_of
from volcano_py.jobplugins.flags import Flag, parse_flags, port_flag
from volcano_py.jobplugins.helpers import (
    containers,
    find_task,
    first_host,
    job_namespace,
    job_selector,
    open_port,
    owned_metadata,
)
from volcano_py.jobplugins.types import (
    JSON,
    ApplyPolicy,
    JobPluginError,
    ManagedObject,
    ObjectRef,
)

GCS_PORT_NAME = "gcs"
DASHBOARD_PORT_NAME = "dashboard"
CLIENT_PORT_NAME = "client-server"
FLAGS = (
    Flag("head", "head"),
    Flag("headContainer", "head"),
    Flag("worker", "worker"),
    Flag("workerContainer", "worker"),
    Flag("port", 6379),
    Flag("dashboardPort", 8265),
    Flag("clientPort", 10001),
)


def head_service_name(job: Mapping[str, Any]) -> str:
    return f"{name_of(job)}-head-svc"


@dataclass(frozen=True, slots=True)
class RayPlugin:
    head: str = "head"
    head_container: str = "head"
    worker: str = "worker"
    worker_container: str = "worker"
    port: int = 6379
    dashboard_port: int = 8265
    client_port: int = 10001
    name: str = "ray"

    @classmethod
    def from_args(cls, args: Sequence[str]) -> RayPlugin:
        values = parse_flags("ray", FLAGS, args)
        return cls(
            values.get_str("head"),
            values.get_str("headContainer"),
            values.get_str("worker"),
            values.get_str("workerContainer"),
            port_flag("ray", values, "port"),
            port_flag("ray", values, "dashboardPort"),
            port_flag("ray", values, "clientPort"),
        )

    def _ports(self) -> tuple[tuple[str, int], ...]:
        return (
            (GCS_PORT_NAME, self.port),
            (DASHBOARD_PORT_NAME, self.dashboard_port),
            (CLIENT_PORT_NAME, self.client_port),
        )

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None:
        head = find_task(job, self.head)
        if head is None:
            raise JobPluginError(
                "spec.tasks",
                f"the ray plugin needs a task named {self.head!r}; add it or pass --head=<task name>",
            )
        for container in containers(pod, init=False):
            if task_name == self.head and container.get("name") == self.head_container:
                for port_name, port in self._ports():
                    open_port(container, port_name, port)
                container["command"] = [
                    "sh",
                    "-c",
                    f"ray start --head --block --dashboard-host=0.0.0.0 --port={self.port} "
                    f"--dashboard-port={self.dashboard_port} --ray-client-server-port={self.client_port}",
                ]
            if task_name == self.worker and container.get("name") == self.worker_container:
                address = f"{first_host(job, head)}:{self.port}"
                container["command"] = ["sh", "-c", f"ray start --block --address={address}"]

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        selector = {**job_selector(job), constants.TASK_SPEC_KEY: self.head}
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": owned_metadata(job, head_service_name(job)),
            "spec": {
                "selector": selector,
                "ports": [
                    {"name": name, "port": port, "targetPort": name, "protocol": "TCP"}
                    for name, port in self._ports()
                ],
            },
        }
        return [ManagedObject(service, ApplyPolicy.CREATE)]

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]:
        return [ObjectRef("v1", "Service", job_namespace(job), head_service_name(job))]
