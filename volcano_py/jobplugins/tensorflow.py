"""tensorflow: ``TF_CONFIG`` for ``tf.distribute`` (parameter-server and multi-worker strategies).

Every container gets ``TF_CONFIG = {"cluster": {"ps": [...], "worker": [...], "chief": [...],
"evaluator": [...]}, "task": {"type": <role>, "index": <i>}}`` with ``host:port`` entries for each role whose
task exists; a task under another name keeps its own name as the type. A Job of a single pod gets nothing
(local training needs no cluster spec). Arguments (Volcano's): ``--ps``, ``--worker``, ``--chief``,
``--evaluator`` (task names, defaulting to the role), ``--port`` (2222).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api.bodies.job import job_tasks, task_replicas
from volcano_py.jobplugins.flags import Flag, parse_flags, port_flag
from volcano_py.jobplugins.helpers import (
    append_env,
    containers,
    domain_name,
)
from volcano_py.jobplugins.types import JSON, ManagedObject, ObjectRef

TF_CONFIG_ENV = "TF_CONFIG"
ROLES = ("ps", "worker", "chief", "evaluator")  # the order TF_CONFIG lists them in
FLAGS = (*(Flag(role, role) for role in ROLES), Flag("port", 2222))


@dataclass(frozen=True, slots=True)
class TensorflowPlugin:
    ps: str = "ps"
    worker: str = "worker"
    chief: str = "chief"
    evaluator: str = "evaluator"
    port: int = 2222
    name: str = "tensorflow"

    @classmethod
    def from_args(cls, args: Sequence[str]) -> TensorflowPlugin:
        values = parse_flags("tensorflow", FLAGS, args)
        ps, worker, chief, evaluator = (values.get_str(role) for role in ROLES)
        return cls(ps, worker, chief, evaluator, port_flag("tensorflow", values, "port"))

    def _roles(self) -> dict[str, str]:
        """task name -> TF role."""
        return {self.ps: "ps", self.worker: "worker", self.chief: "chief", self.evaluator: "evaluator"}

    def tf_config(self, job: Mapping[str, Any], task_name: str, index: int) -> str:
        roles = self._roles()
        cluster: dict[str, list[str]] = {}
        for task in job_tasks(job):
            role = roles.get(task["name"])
            # One entry per replica, even when a pinned hostname makes them equal: TF counts workers by it.
            hosts = [f"{domain_name(job, task, i)}:{self.port}" for i in range(task_replicas(task))]
            if role is not None and hosts:
                cluster[role] = hosts
        ordered = {role: cluster[role] for role in ROLES if role in cluster}
        config = {"cluster": ordered, "task": {"type": roles.get(task_name, task_name), "index": index}}
        return json.dumps(config, separators=(",", ":"))

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None:
        all_tasks = job_tasks(job)
        if len(all_tasks) == 1 and task_replicas(all_tasks[0]) == 1:
            return
        value = self.tf_config(job, task_name, index)
        for container in containers(pod, init=False):
            append_env(container, {"name": TF_CONFIG_ENV, "value": value})

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        return []

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]:
        return []
