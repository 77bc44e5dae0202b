"""A Job as the Job controller runs it: the api model (``batch.Job``), admitted by the same rules as the
webhook's (``job_rules.validate_job``), with Volcano's defaults resolved and durations parsed.

:func:`resolve_job` reads a Job with Volcano's defaults written in (``api.job_defaults``, the webhook's own),
so a Job stored without the webhook runs as the same Job admitted through it. The spec stays the api model:
:class:`ResolvedJob` and :class:`ResolvedTask` only add what is derived.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from volcano_py.api import constants as c
from volcano_py.api.batch import (
    DEFAULT_MAX_RETRY,
    Iteration,
    Job,
    JobStatus,
    LifecyclePolicy,
    PartitionPolicySpec,
    TaskSpec,
)
from volcano_py.api.bus import Action, Event
from volcano_py.api.common import parse_duration as api_parse_duration
from volcano_py.api.job_defaults import default_task_name, with_job_defaults
from volcano_py.api.job_rules import validate_job
from volcano_py.api.problems import from_validation_error


class JobSpecError(ValueError):
    """A Job body that cannot be run as written; the message names the field and what to write instead."""


@dataclass(frozen=True, slots=True)
class ResolvedPolicy:
    """A lifecycle policy with its events merged (``event`` + ``events``) and its timeout in seconds."""

    action: Action
    events: tuple[Event, ...] = ()
    exit_code: int | None = None
    timeout_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class ResolvedTask:
    spec: TaskSpec  # as written
    name: str
    replicas: int
    min_available: int
    policies: tuple[ResolvedPolicy, ...] = ()

    @property
    def template(self) -> Mapping[str, Any]:
        return self.spec.template

    @property
    def max_retry(self) -> int:
        return self.spec.max_retry

    @property
    def topology_policy(self) -> str:
        return self.spec.topology_policy.value if self.spec.topology_policy else ""

    @property
    def partition(self) -> PartitionPolicySpec | None:
        """Volcano's partitionPolicy: the pods in groups of ``partitionSize`` (pod label partition-id)."""
        return self.spec.partition_policy

    @property
    def depends_on(self) -> tuple[str, ...]:
        return tuple(self.spec.depends_on.name) if self.spec.depends_on else ()

    @property
    def depends_on_any(self) -> bool:
        """iteration ``any``: one ready dependency is enough."""
        return self.spec.depends_on is not None and self.spec.depends_on.iteration is Iteration.ANY


@dataclass(frozen=True, slots=True)
class JobClaim:
    """A PVC a Job's pods mount; ``claim_spec`` is set when the controller must create it."""

    mount_path: str
    claim_name: str
    claim_spec: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class ResolvedJob:
    job: Job  # as stored (metadata and spec; the status is the controller's output, not read here)
    tasks: tuple[ResolvedTask, ...]
    min_available: int
    policies: tuple[ResolvedPolicy, ...]
    volumes: tuple[JobClaim, ...]
    network_topology: Mapping[str, Any] | None  # copied verbatim onto the PodGroup
    max_retry: int = DEFAULT_MAX_RETRY
    # The spec as read, defaults written in: what the Job's plugins build from.
    defaulted_spec: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.job.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.job.metadata.namespace or "default"

    @property
    def uid(self) -> str:
        return self.job.metadata.uid or ""

    @property
    def labels(self) -> Mapping[str, str]:
        return self.job.metadata.labels or {}

    @property
    def annotations(self) -> Mapping[str, str]:
        return self.job.metadata.annotations or {}

    @property
    def deleting(self) -> bool:
        return bool(self.job.metadata.deletion_timestamp)

    @property
    def queue(self) -> str:
        return self.job.spec.queue or c.DEFAULT_QUEUE

    @property
    def scheduler_name(self) -> str:
        return self.job.spec.scheduler_name or c.SCHEDULER_NAME

    @property
    def min_success(self) -> int | None:
        return self.job.spec.min_success

    @property
    def priority_class_name(self) -> str:
        return self.job.spec.priority_class_name or ""

    @property
    def ttl_seconds_after_finished(self) -> int | None:
        return self.job.spec.ttl_seconds_after_finished

    @property
    def podgroup_name(self) -> str:
        return f"{self.name}-{self.uid}"

    @property
    def total_replicas(self) -> int:
        return sum(t.replicas for t in self.tasks)

    @property
    def total_task_min_available(self) -> int:
        return sum(t.min_available for t in self.tasks)

    @property
    def plugins(self) -> Mapping[str, list[str]]:
        return self.job.spec.plugins

    def with_defaults(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``body`` (a newer copy of this Job: its status, its metadata) with the spec read here."""
        return {**body, "spec": self.defaulted_spec}

    def task(self, name: str) -> ResolvedTask | None:
        return next((t for t in self.tasks if t.name == name), None)


def parse_duration(text: str, *, field_name: str) -> float:
    """A Go ``time.Duration`` string (``"90s"``, ``"1m30s"``, ``"500ms"``) in seconds, never negative."""
    try:
        seconds = api_parse_duration(text).total_seconds()
    except ValueError as err:
        raise JobSpecError(f"{field_name}: {err}") from None
    if seconds < 0:
        raise JobSpecError(f"{field_name}: {text!r} is negative; write e.g. '30s'")
    return seconds


def _policies(models: Sequence[LifecyclePolicy], where: str) -> tuple[ResolvedPolicy, ...]:
    out: list[ResolvedPolicy] = []
    for i, model in enumerate(models):
        assert model.action is not None  # job_policies.check_policies requires one
        timeout = model.timeout
        seconds = parse_duration(timeout, field_name=f"{where}.policies[{i}].timeout") if timeout else None
        out.append(ResolvedPolicy(model.action, tuple(model.all_events()), model.exit_code, seconds))
    return tuple(out)


def _task(model: TaskSpec, i: int) -> ResolvedTask:
    # ``with_job_defaults`` named the task and set its minAvailable; the fallbacks are for a task of a shape
    # it leaves to validation, which has refused it by now.
    name = model.name or default_task_name(i)
    min_av = model.replicas if model.min_available is None else model.min_available
    return ResolvedTask(model, name, model.replicas, min_av, _policies(model.policies, f"spec.tasks[{i}]"))


def _volumes(job: Job) -> tuple[JobClaim, ...]:
    name, uid = job.metadata.name or "", job.metadata.uid or ""
    out: list[JobClaim] = []
    for i, vol in enumerate(job.spec.volumes):
        claim = vol.volume_claim_name or ""
        # A generated claim name must be the same on every reconcile (Volcano stores a random one in the
        # spec; deriving it from the uid needs no write and cannot collide with a recreated Job's claim).
        out.append(
            JobClaim(
                vol.mount_path, claim or f"{name}-pvc-{uid[:8]}-{i}", vol.volume_claim if not claim else None
            )
        )
    return tuple(out)


def resolve_job(body: Mapping[str, Any]) -> ResolvedJob:
    """Read a Job body through the api model, hold it to the admission rules, and resolve Volcano's defaults;
    raises :class:`JobSpecError` naming the offending field, in the webhook's words."""
    # The status is the controller's own output, not its input: only metadata and spec are read.
    read = with_job_defaults({k: body[k] for k in ("apiVersion", "kind", "metadata", "spec") if k in body})
    try:
        job = Job.model_validate(read)
    except ValidationError as err:
        raise JobSpecError("; ".join(map(str, from_validation_error(err)))) from None
    # A Job the API server stored without the webhook (it was down, or is not installed) is held to the
    # same rules in the same words: never admitted by one and refused by the other.
    problems = validate_job(job)
    if problems:
        raise JobSpecError("; ".join(map(str, problems)))
    spec = job.spec
    tasks = tuple(_task(t, i) for i, t in enumerate(spec.tasks))
    raw_spec = read.get("spec") or {}
    return ResolvedJob(
        job=job,
        tasks=tasks,
        min_available=spec.min_available,
        policies=_policies(spec.policies, "spec"),
        volumes=_volumes(job),
        network_topology=raw_spec.get("networkTopology"),
        max_retry=spec.max_retry,
        defaulted_spec=raw_spec,
    )


def read_status(body: Mapping[str, Any]) -> JobStatus:
    """A Job's status as stored (the controller's own last write), through the api model."""
    try:
        return JobStatus.model_validate(body.get("status") or {})
    except ValidationError as err:
        raise JobSpecError("; ".join(map(str, from_validation_error(err, "status")))) from None


def status_to_dict(status: JobStatus) -> dict[str, Any]:
    """The wire form of a status the controller writes: every counter, zeros included, as Volcano's."""
    return status.model_dump(mode="json", by_alias=True, exclude_none=True)
