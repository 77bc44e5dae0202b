"""hcclrank: annotate Ascend NPU pods with their HCCL rank (``hccl/rankIndex``).

The rank is the ``RANK`` a container already carries (set by the pytorch plugin, which therefore runs first),
else the pod's index for the master task and ``master replicas + index`` for the worker task. Arguments
(Volcano's): ``--master`` (``master``), ``--worker`` (``worker``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api.bodies.job import task_replicas
from volcano_py.jobplugins.flags import Flag, parse_flags
from volcano_py.jobplugins.helpers import (
    containers,
    find_task,
)
from volcano_py.jobplugins.types import JSON, ManagedObject, ObjectRef

RANK_ANNOTATION = "hccl/rankIndex"
FLAGS = (Flag("master", "master"), Flag("worker", "worker"))


def _existing_rank(pod: JSON) -> str:
    for container in containers(pod, init=False):
        for env in container.get("env") or []:
            if env.get("name") == "RANK" and env.get("value"):
                return str(env["value"])
    return ""


@dataclass(frozen=True, slots=True)
class HcclRankPlugin:
    master: str = "master"
    worker: str = "worker"
    name: str = "hcclrank"

    @classmethod
    def from_args(cls, args: Sequence[str]) -> HcclRankPlugin:
        values = parse_flags("hcclrank", FLAGS, args)
        return cls(values.get_str("master"), values.get_str("worker"))

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None:
        annotations: dict[str, str] = pod.setdefault("metadata", {}).setdefault("annotations", {})
        if annotations.get(RANK_ANNOTATION):
            return
        rank = _existing_rank(pod)
        if not rank:
            if task_name == self.master:
                rank = str(index)
            elif task_name == self.worker:
                master = find_task(job, self.master)
                rank = str((task_replicas(master) if master is not None else 0) + index)
            else:
                return
        annotations[RANK_ANNOTATION] = rank

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        return []

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]:
        return []
