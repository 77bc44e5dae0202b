"""env: tell each container its index within its task (``VC_TASK_INDEX`` and the legacy ``VK_TASK_INDEX``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.jobplugins.flags import parse_flags
from volcano_py.jobplugins.helpers import append_env, containers
from volcano_py.jobplugins.types import JSON, ManagedObject, ObjectRef

TASK_INDEX_ENV = "VC_TASK_INDEX"
TASK_VK_INDEX_ENV = "VK_TASK_INDEX"


@dataclass(frozen=True, slots=True)
class EnvPlugin:
    name: str = "env"

    @classmethod
    def from_args(cls, args: Sequence[str]) -> EnvPlugin:
        parse_flags("env", (), args)
        return cls()

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None:
        for container in containers(pod):
            append_env(
                container,
                {"name": TASK_VK_INDEX_ENV, "value": str(index)},
                {"name": TASK_INDEX_ENV, "value": str(index)},
            )

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        return []

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]:
        return []
