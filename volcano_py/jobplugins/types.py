"""The shapes a Job plugin speaks in: its protocol, the objects it wants, and its one error type."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from volcano_py.api.objects import name_of, namespace_of

JSON = dict[str, Any]


class JobPluginError(ValueError):
    """A plugin that cannot be built or applied; ``field`` is where in the Job the user must look."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ApplyPolicy(enum.Enum):
    """How the controller must reconcile an object a plugin asks for."""

    # Create when absent, never touch an existing one: an ssh key pair must not rotate under running pods,
    # and a Service's clusterIP cannot be replaced.
    CREATE = "create"
    # Create when absent, replace when it differs: the hosts ConfigMap follows the Job's replicas on scale.
    REPLACE = "replace"


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """Enough to delete an object a plugin owns."""

    api_version: str
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class ManagedObject:
    """An object a plugin needs to exist, owned by the Job through ``metadata.ownerReferences``."""

    body: JSON
    policy: ApplyPolicy

    @property
    def ref(self) -> ObjectRef:
        body = self.body
        return ObjectRef(body["apiVersion"], body["kind"], namespace_of(body), name_of(body))


class JobPlugin(Protocol):
    """One plugin named in a Job's ``spec.plugins``, built from its arguments.

    Every method is pure: ``on_pod_create`` mutates only the pod dict it is given; the others return what the
    controller must create, replace or delete.
    """

    @property
    def name(self) -> str: ...

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None: ...

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]: ...

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]: ...


@runtime_checkable
class JobUpdateHook(Protocol):
    """A plugin whose objects follow the Job's spec after it started (Volcano's ``OnJobUpdate``; only svc has
    one that does anything). Found by type, so the others need no empty method."""

    def on_job_update(self, job: Mapping[str, Any]) -> list[ManagedObject]: ...
