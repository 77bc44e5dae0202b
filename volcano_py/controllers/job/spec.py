"""A Volcano Job (``batch.volcano.sh/v1alpha1``) read from its JSON body into typed, defaulted records.

The controller works from these records rather than from raw dicts so that every default (queue
``default``, ``maxRetry`` 3, task ``minAvailable`` = replicas, job ``minAvailable`` = the tasks' sum) is
applied in one place, exactly as Volcano's admission webhook would have applied it, and so that a malformed
Job fails with an error naming the field instead of a ``KeyError`` deep inside a reconcile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from volcano_py.api import constants as c
from volcano_py.api.batch import DEFAULT_MAX_RETRY
from volcano_py.api.bus import POLICY_ACTIONS, Action, Event
from volcano_py.api.common import parse_duration as api_parse_duration

_E = TypeVar("_E", bound=StrEnum)

# Policy actions and events Volcano accepts that this controller does not carry out; refused by name.
_UNSUPPORTED_ACTIONS = {
    Action.RESTART_PARTITION: "partitions (spec.tasks[].partitionPolicy) are not supported"
}
_UNSUPPORTED_EVENTS = {Event.JOB_UPDATED: "the controller raises no event when a Job's spec is updated"}


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


def _int(value: Any, field_name: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise JobSpecError(f"{field_name}: expected an integer, got {value!r}")
    if value < minimum:
        raise JobSpecError(f"{field_name}: must be >= {minimum}, got {value}")
    return value


def _enum(kind: type[_E], value: Any, field_name: str) -> _E:
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        raise JobSpecError(f"{field_name}: unknown value {value!r}; use one of {allowed}") from None


def _event(value: Any, field_name: str) -> Event:
    event = _enum(Event, value, field_name)
    if event in _UNSUPPORTED_EVENTS:
        raise JobSpecError(f"{field_name}: {event} is not supported: {_UNSUPPORTED_EVENTS[event]}")
    return event


def parse_policies(raw: Sequence[Mapping[str, Any]] | None, where: str) -> tuple[LifecyclePolicy, ...]:
    out: list[LifecyclePolicy] = []
    for i, item in enumerate(raw or ()):
        path = f"{where}.policies[{i}]"
        action = _enum(Action, item.get("action"), f"{path}.action")
        if action not in POLICY_ACTIONS:
            raise JobSpecError(f"{path}.action: {action} is internal; use one of {sorted(POLICY_ACTIONS)}")
        if action in _UNSUPPORTED_ACTIONS:
            raise JobSpecError(f"{path}.action: {action} is not supported: {_UNSUPPORTED_ACTIONS[action]}")
        events = [_event(e, f"{path}.events") for e in item.get("events") or ()]
        if item.get("event"):
            events.append(_event(item["event"], f"{path}.event"))
        exit_code = item.get("exitCode")
        if exit_code is not None:
            exit_code = _int(exit_code, f"{path}.exitCode", minimum=-(2**31))
            if exit_code == 0:
                raise JobSpecError(f"{path}.exitCode: 0 means success and cannot trigger a policy")
        if exit_code is not None and events:
            raise JobSpecError(f"{path}: set either event(s) or exitCode, not both")
        if exit_code is None and not events:
            raise JobSpecError(f"{path}: needs an event, events or exitCode to match")
        timeout = item.get("timeout")
        seconds = parse_duration(str(timeout), field_name=f"{path}.timeout") if timeout else None
        out.append(LifecyclePolicy(action, tuple(events), exit_code, seconds))
    return tuple(out)


def _parse_task(raw: Mapping[str, Any], i: int) -> TaskSpec:
    path = f"spec.tasks[{i}]"
    name = raw.get("name") or (c.DEFAULT_TASK_SPEC if i == 0 else f"{c.DEFAULT_TASK_SPEC}{i}")
    replicas = _int(raw.get("replicas", 1), f"{path}.replicas")
    min_available = raw.get("minAvailable")
    min_av = replicas if min_available is None else _int(min_available, f"{path}.minAvailable")
    if min_av > replicas:
        raise JobSpecError(
            f"{path}.minAvailable: {min_av} exceeds replicas {replicas}; lower it or add replicas"
        )
    template = raw.get("template")
    if not isinstance(template, Mapping) or not (template.get("spec") or {}).get("containers"):
        raise JobSpecError(f"{path}.template.spec.containers: a task needs a pod template with containers")
    depends = raw.get("dependsOn")
    depends_on = None
    if depends:
        names = tuple(depends.get("name") or ())
        if not names:
            raise JobSpecError(f"{path}.dependsOn.name: list the task names this task waits for")
        depends_on = DependsOn(names, any_of=str(depends.get("iteration", "")).lower() == "any")
    return TaskSpec(
        name=str(name),
        replicas=replicas,
        min_available=min_av,
        template=template,
        policies=parse_policies(raw.get("policies"), path),
        max_retry=int(raw.get("maxRetry") or 0),
        depends_on=depends_on,
        topology_policy=str(raw.get("topologyPolicy") or ""),
    )


def _parse_volumes(
    raw: Sequence[Mapping[str, Any]] | None, job_name: str, uid: str
) -> tuple[VolumeSpec, ...]:
    out: list[VolumeSpec] = []
    for i, vol in enumerate(raw or ()):
        path = f"spec.volumes[{i}]"
        mount = vol.get("mountPath")
        if not mount:
            raise JobSpecError(
                f"{path}.mountPath: required, the path the claim is mounted at in every container"
            )
        claim = vol.get("volumeClaimName") or ""
        claim_spec = vol.get("volumeClaim")
        if not claim and not claim_spec:
            raise JobSpecError(
                f"{path}: set volumeClaimName (an existing PVC) or volumeClaim (one to create)"
            )
        # A generated claim name must be the same on every reconcile (Volcano stores a random one in the
        # spec; deriving it from the uid needs no write and cannot collide with a recreated Job's claim).
        out.append(
            VolumeSpec(
                str(mount), claim or f"{job_name}-pvc-{uid[:8]}-{i}", claim_spec if not claim else None
            )
        )
    return tuple(out)


def parse_job(body: Mapping[str, Any]) -> JobSpec:
    """Read a Job body; raises :class:`JobSpecError` naming the offending field."""
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    raw_tasks = spec.get("tasks") or ()
    if not raw_tasks:
        raise JobSpecError("spec.tasks: a Job needs at least one task")
    tasks = tuple(_parse_task(t, i) for i, t in enumerate(raw_tasks))
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        raise JobSpecError(f"spec.tasks[].name: task names must be unique, got {names}")
    for t in tasks:
        for dep in t.depends_on.names if t.depends_on else ():
            if dep not in names:
                raise JobSpecError(f"spec.tasks[{t.name}].dependsOn.name: no task named {dep!r}")
    total_min = sum(t.min_available for t in tasks)
    min_available = spec.get("minAvailable")
    min_av = total_min if min_available is None else _int(min_available, "spec.minAvailable")
    total = sum(t.replicas for t in tasks)
    if min_av > total:
        raise JobSpecError(f"spec.minAvailable: {min_av} exceeds the {total} replicas of all tasks")
    min_success = spec.get("minSuccess")
    if min_success is not None:
        min_success = _int(min_success, "spec.minSuccess", minimum=1)
        if min_success > total:
            raise JobSpecError(f"spec.minSuccess: {min_success} exceeds the {total} replicas of all tasks")
    ttl = spec.get("ttlSecondsAfterFinished")
    max_retry = spec.get("maxRetry")
    name, uid = str(meta.get("name", "")), str(meta.get("uid", ""))
    return JobSpec(
        name=name,
        namespace=str(meta.get("namespace", "default")),
        uid=uid,
        tasks=tasks,
        min_available=min_av,
        queue=str(spec.get("queue") or c.DEFAULT_QUEUE),
        scheduler_name=str(spec.get("schedulerName") or c.SCHEDULER_NAME),
        max_retry=DEFAULT_MAX_RETRY if max_retry is None else _int(max_retry, "spec.maxRetry"),
        min_success=min_success,
        priority_class_name=str(spec.get("priorityClassName") or ""),
        ttl_seconds_after_finished=None if ttl is None else _int(ttl, "spec.ttlSecondsAfterFinished"),
        policies=parse_policies(spec.get("policies"), "spec"),
        volumes=_parse_volumes(spec.get("volumes"), name, uid),
        network_topology=spec.get("networkTopology"),
        labels=dict(meta.get("labels") or {}),
        annotations=dict(meta.get("annotations") or {}),
        deleting=bool(meta.get("deletionTimestamp")),
    )
