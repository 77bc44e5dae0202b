"""The Job controller's resolved view of a Volcano Job (``batch.volcano.sh/v1alpha1``).

A Job body is read once, through the api model (``volcano_py.api.batch.Job``: field types, enums, durations),
and resolved here into frozen records. The controller works from these records rather than from raw dicts
so that every default (queue
``default``, ``maxRetry`` 3, task ``minAvailable`` = replicas, job ``minAvailable`` = the tasks' sum) is
applied in one place, exactly as Volcano's admission webhook would have applied it, and so that a malformed
Job fails with an error naming the field instead of a ``KeyError`` deep inside a reconcile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from volcano_py.api import batch as api
from volcano_py.api import constants as c
from volcano_py.api.batch import DEFAULT_MAX_RETRY
from volcano_py.api.bus import POLICY_ACTIONS, POLICY_EVENTS, Action, Event
from volcano_py.api.common import parse_duration as api_parse_duration
from volcano_py.api.job_rules import validate_job
from volcano_py.api.problems import join_path


class JobSpecError(ValueError):
    """A Job body that cannot be run as written; the message names the field and what to write instead."""


@dataclass(frozen=True, slots=True)
class LifecyclePolicy:
    action: Action
    events: tuple[Event, ...] = ()
    exit_code: int | None = None
    timeout_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class DependsOn:
    names: tuple[str, ...]
    any_of: bool  # iteration "any": one ready dependency is enough


@dataclass(frozen=True, slots=True)
class TaskSpec:
    name: str
    replicas: int
    min_available: int
    template: Mapping[str, Any]
    policies: tuple[LifecyclePolicy, ...] = ()
    max_retry: int = 0
    depends_on: DependsOn | None = None
    topology_policy: str = ""
    # Volcano's partitionPolicy: the task's pods in groups of ``partitionSize`` (pod label partition-id),
    # each group a sub-group of the PodGroup (spec.subGroupPolicy) the scheduler places as one.
    partition: api.PartitionPolicySpec | None = None


@dataclass(frozen=True, slots=True)
class VolumeSpec:
    mount_path: str
    claim_name: str
    claim_spec: Mapping[str, Any] | None  # set when the controller must create the PVC


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str
    namespace: str
    uid: str
    tasks: tuple[TaskSpec, ...]
    min_available: int
    queue: str = c.DEFAULT_QUEUE
    scheduler_name: str = c.SCHEDULER_NAME
    max_retry: int = DEFAULT_MAX_RETRY
    min_success: int | None = None
    priority_class_name: str = ""
    ttl_seconds_after_finished: int | None = None
    policies: tuple[LifecyclePolicy, ...] = ()
    volumes: tuple[VolumeSpec, ...] = ()
    network_topology: Mapping[str, Any] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    deleting: bool = False

    @property
    def podgroup_name(self) -> str:
        return f"{self.name}-{self.uid}"

    @property
    def total_replicas(self) -> int:
        return sum(t.replicas for t in self.tasks)

    @property
    def total_task_min_available(self) -> int:
        return sum(t.min_available for t in self.tasks)

    def task(self, name: str) -> TaskSpec | None:
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


def _model_error(err: ValidationError) -> JobSpecError:
    """pydantic's first complaint about a Job body, in the controller's words, naming the field."""
    error = err.errors()[0]
    path = join_path(*error["loc"])
    value = error.get("input")
    kind = error["type"]
    field_name = next((part for part in reversed(error["loc"]) if isinstance(part, str)), "")
    if field_name in ("action", "event", "events") and isinstance(value, str):
        allowed_values = POLICY_ACTIONS if field_name == "action" else POLICY_EVENTS
        return JobSpecError(f"{path}: unknown value {value!r}; use one of {', '.join(allowed_values)}")
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return JobSpecError(f"{path}: expected an integer, got {value!r}")
    if kind == "enum":
        allowed = str((error.get("ctx") or {}).get("expected", "")).replace(" or ", ", ")
        return JobSpecError(f"{path}: unknown value {value!r}; use one of {allowed}")
    if kind == "greater_than_equal":
        return JobSpecError(f"{path}: must be >= {(error.get('ctx') or {}).get('ge')}, got {value!r}")
    if kind == "value_error":
        return JobSpecError(f"{path}: {(error.get('ctx') or {}).get('error', error['msg'])}")
    return JobSpecError(f"{path}: {error['msg']} (got {value!r})")


def _policies(models: Sequence[api.LifecyclePolicy], where: str) -> tuple[LifecyclePolicy, ...]:
    out: list[LifecyclePolicy] = []
    for i, model in enumerate(models):
        assert model.action is not None  # api.job_rules.check_policies requires one
        timeout = model.timeout
        seconds = parse_duration(timeout, field_name=f"{where}.policies[{i}].timeout") if timeout else None
        out.append(LifecyclePolicy(model.action, tuple(model.all_events()), model.exit_code, seconds))
    return tuple(out)


def _task(model: api.TaskSpec, i: int) -> TaskSpec:
    path = f"spec.tasks[{i}]"
    name = model.name or (c.DEFAULT_TASK_SPEC if i == 0 else f"{c.DEFAULT_TASK_SPEC}{i}")
    # A task that leaves replicas out runs one pod.
    replicas = model.replicas if "replicas" in model.model_fields_set else 1
    min_av = replicas if model.min_available is None else model.min_available
    partition = model.partition_policy
    if model.min_available is None and partition is not None and partition.min_partitions > 0:
        min_av = partition.min_partitions * partition.partition_size  # Volcano's getMinTaskMember
    depends_on = None
    if model.depends_on is not None and model.depends_on.name:
        depends_on = DependsOn(
            tuple(model.depends_on.name), any_of=model.depends_on.iteration is api.Iteration.ANY
        )
    return TaskSpec(
        name=str(name),
        replicas=replicas,
        min_available=min_av,
        template=model.template,
        policies=_policies(model.policies, path),
        max_retry=model.max_retry,
        depends_on=depends_on,
        topology_policy=model.topology_policy.value if model.topology_policy else "",
        partition=model.partition_policy,
    )


def _volumes(models: Sequence[api.VolumeSpec], job_name: str, uid: str) -> tuple[VolumeSpec, ...]:
    out: list[VolumeSpec] = []
    for i, vol in enumerate(models):
        claim = vol.volume_claim_name or ""
        # A generated claim name must be the same on every reconcile (Volcano stores a random one in the
        # spec; deriving it from the uid needs no write and cannot collide with a recreated Job's claim).
        out.append(
            VolumeSpec(
                vol.mount_path,
                claim or f"{job_name}-pvc-{uid[:8]}-{i}",
                vol.volume_claim if not claim else None,
            )
        )
    return tuple(out)


def parse_job(body: Mapping[str, Any]) -> JobSpec:
    """Read a Job body through the api model (``api.batch.Job``), then resolve Volcano's defaults into the
    controller's record; raises :class:`JobSpecError` naming the offending field."""
    try:
        # The status is the controller's own output, not its input: only metadata and spec are read.
        job = api.Job.model_validate(
            {k: body[k] for k in ("apiVersion", "kind", "metadata", "spec") if k in body}
        )
    except ValidationError as err:
        raise _model_error(err) from None
    # The admission rules the webhook and ``volcano-py validate`` apply: a Job the API server stored without
    # the webhook is held to the same rules, in the same words.
    problems = validate_job(job)
    if problems:
        raise JobSpecError("; ".join(str(p) for p in problems))
    spec = job.spec
    tasks = tuple(_task(t, i) for i, t in enumerate(spec.tasks))
    total_min = sum(t.min_available for t in tasks)
    min_av = spec.min_available if "min_available" in spec.model_fields_set else total_min
    meta = job.metadata
    name, uid = meta.name or "", meta.uid or ""
    raw_spec = body.get("spec") or {}
    return JobSpec(
        name=name,
        namespace=meta.namespace or "default",
        uid=uid,
        tasks=tasks,
        min_available=min_av,
        queue=spec.queue or c.DEFAULT_QUEUE,
        scheduler_name=spec.scheduler_name or c.SCHEDULER_NAME,
        max_retry=spec.max_retry,
        min_success=spec.min_success,
        priority_class_name=spec.priority_class_name or "",
        ttl_seconds_after_finished=spec.ttl_seconds_after_finished,
        policies=_policies(spec.policies, "spec"),
        volumes=_volumes(spec.volumes, name, uid),
        network_topology=raw_spec.get("networkTopology"),  # copied verbatim onto the PodGroup
        labels=dict(meta.labels or {}),
        annotations=dict(meta.annotations or {}),
        deleting=bool(meta.deletion_timestamp),
    )
