"""The JobFlow controller's decisions, without I/O: which Jobs to create or delete, and the flow's status.

Level-triggered like Volcano's: every sync looks at the flow, its templates and the Jobs it owns, and
recomputes. A step's Job is ``<flow>-<step>``, so a controller that restarts (or two syncs racing) can only
ever try to create the same name twice, which the API server refuses: nothing runs twice. A step starts when
it has no targets, or when the Job of every target is Completed. The phase follows Volcano's state machine:
Pending -> Running once a Job runs or completed (and none failed), -> Succeed when every step's Job is
Completed, -> Failed as soon as one failed or was terminated; a Failed flow starts nothing more.
``jobRetainPolicy: delete`` removes the Jobs of a flow that succeeded. A flow is admitted before its
JobTemplates exist (as Volcano's is): a step whose template is missing waits for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import JobPhase
from volcano_py.api.bodies.job import (
    job_phase,
    job_retry_count,
    job_running_duration,
    job_task_status_count,
)
from volcano_py.api.bodies.jobflow import jobflow_flows, jobflow_status, status_phase, step_job_spec_patch
from volcano_py.api.bodies.jobtemplate import jobtemplate_job_spec
from volcano_py.api.common import format_time, parse_duration
from volcano_py.api.flow import FlowPhase, JobFlow, RetainPolicy
from volcano_py.api.flow_rules import MAX_JOB_NAME, flow_graph, flow_job_name
from volcano_py.api.objects import creation_timestamp_of, name_of, namespace_of, uid_of

JSON = dict[str, Any]

# Job phases that have their own list in the flow's status; every other phase counts as unknown.
_LISTED = {
    JobPhase.PENDING: "pendingJobs",
    JobPhase.RUNNING: "runningJobs",
    JobPhase.FAILED: "failedJobs",
    JobPhase.COMPLETED: "completedJobs",
    JobPhase.TERMINATED: "terminatedJobs",
}
# Volcano also buckets Completing and Terminating but never reports those buckets: they are neither listed
# nor unknown.
_UNLISTED = {JobPhase.COMPLETING, JobPhase.TERMINATING}


@dataclass(frozen=True, slots=True)
class FlowEvent:
    type: str  # Normal / Warning
    reason: str
    message: str


@dataclass(slots=True)
class FlowPlan:
    create: list[JSON] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    status: JSON | None = None  # the new status, or None when it is unchanged
    events: list[FlowEvent] = field(default_factory=list)


def owner_value(namespace: str, name: str) -> str:
    """The value of the createdByJobFlow / createdByJobTemplate label: ``<namespace>.<name>`` (Volcano's)."""
    return f"{namespace}.{name}"


def _merge(base: Any, patch: Any) -> Any:
    """Lay ``patch`` over ``base``: mappings merge key by key; lists whose items all have a ``name`` (tasks,
    containers, env, volumes) merge item by item on it, new names appended; anything else is replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = _merge(base[key], value) if key in base else value
        return out
    if isinstance(base, list) and isinstance(patch, list) and _named(base) and _named(patch):
        merged = [dict(item) for item in base]
        index = {item["name"]: i for i, item in enumerate(merged)}
        for item in patch:
            if item["name"] in index:
                merged[index[item["name"]]] = _merge(merged[index[item["name"]]], item)
            else:
                merged.append(item)
        return merged
    return patch


def _named(items: list[Any]) -> bool:
    return all(isinstance(item, dict) and "name" in item for item in items)


def patched_spec(template_spec: Mapping[str, Any], patch: Mapping[str, Any] | None) -> JSON:
    merged: JSON = _merge(dict(template_spec), dict(patch or {}))
    return merged


def build_job(flow_body: Mapping[str, Any], step: str, template_body: Mapping[str, Any],
              patch: Mapping[str, Any] | None) -> JSON:  # fmt: skip
    namespace, flow_name = namespace_of(flow_body), name_of(flow_body)
    marks = {
        c.CREATED_BY_JOB_TEMPLATE_KEY: owner_value(namespace, step),
        c.CREATED_BY_JOB_FLOW_KEY: owner_value(namespace, flow_name),
    }
    return {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.JOB_KIND,
        "metadata": {
            "name": flow_job_name(flow_name, step),
            "namespace": namespace,
            "labels": dict(marks),
            "annotations": dict(marks),
            "ownerReferences": [
                {
                    "apiVersion": c.FLOW_API_VERSION,
                    "kind": c.JOBFLOW_KIND,
                    "name": flow_name,
                    "uid": uid_of(flow_body),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": patched_spec(jobtemplate_job_spec(template_body), patch),
    }


def _end_time(job: Mapping[str, Any]) -> str | None:
    created, duration = creation_timestamp_of(job), job_running_duration(job)
    if not created or not duration:
        return None
    try:
        start = datetime.fromisoformat(created.replace("Z", "+00:00"))
        return format_time(start + parse_duration(duration))
    except ValueError:
        return None


def _histories(previous: list[JSON], phase: str, now: str) -> list[JSON]:
    """A Job's phase history: a new entry each time its phase changes, the previous one closed then."""
    if not phase:
        return previous
    if not previous:
        return [{"startTimestamp": now, "state": phase}]
    if previous[-1].get("state") == phase:
        return previous
    closed = {**previous[-1], "endTimestamp": now}
    return [*previous[:-1], closed, {"startTimestamp": now, "state": phase}]


def flow_status(flow: JobFlow, old: Mapping[str, Any], jobs: Mapping[str, Mapping[str, Any]],
                now: datetime) -> JSON:  # fmt: skip
    """The status lists, per-Job records and conditions from the Jobs as they are; the phase is left as it
    was (``next_phase`` moves it)."""
    stamp = format_time(now)
    lists: dict[str, list[str]] = {key: [] for key in _LISTED.values()}
    unknown: list[str] = []
    conditions: JSON = {}
    records = {str(r.get("name")): dict(r) for r in old.get("jobStatusList") or () if r.get("name")}
    order = [str(r.get("name")) for r in old.get("jobStatusList") or () if r.get("name")]
    for name in sorted(jobs):
        job = jobs[name]
        phase = job_phase(job)
        try:
            listed = _LISTED.get(JobPhase(phase))
            unlisted = JobPhase(phase) in _UNLISTED
        except ValueError:
            listed, unlisted = None, False
        if listed is not None:
            lists[listed].append(name)
        elif not unlisted:
            unknown.append(name)
        created = creation_timestamp_of(job) or None
        condition: JSON = {"phase": phase or None, "createTime": created,
                           "runningDuration": job_running_duration(job),
                           "taskStatusCount": job_task_status_count(job)}  # fmt: skip
        conditions[name] = {k: v for k, v in condition.items() if v}
        record: JSON = {
            "name": name,
            "state": phase or None,
            "startTimestamp": created,
            "endTimestamp": _end_time(job),
            "restartCount": job_retry_count(job) or None,
            "runningHistories": _histories(list(records.get(name, {}).get("runningHistories") or ()),
                                           phase, stamp) or None,
        }  # fmt: skip
        records[name] = {k: v for k, v in record.items() if v is not None}
        if name not in order:
            order.append(name)
    status: JSON = {k: v for k, v in lists.items() if v}
    if unknown:
        status["unKnowJobs"] = unknown
    if order:
        status["jobStatusList"] = [records[name] for name in order]
    if conditions:
        status["conditions"] = conditions
    if phase := status_phase(old):
        status["state"] = {"phase": phase}
    return status


def next_phase(current: FlowPhase, status: Mapping[str, Any], steps: int) -> FlowPhase:
    """Volcano's transitions: only Pending and Running move; Succeed, Failed and Terminating stay."""
    running, completed = status.get("runningJobs") or [], status.get("completedJobs") or []
    failed = bool(status.get("failedJobs") or status.get("terminatedJobs"))
    if current is FlowPhase.PENDING:
        if (running or completed) and not status.get("failedJobs"):
            return FlowPhase.RUNNING
        return FlowPhase.FAILED if failed else FlowPhase.PENDING
    if current is FlowPhase.RUNNING:
        if len(completed) == steps:
            return FlowPhase.SUCCEED
        return FlowPhase.FAILED if failed else FlowPhase.RUNNING
    return current


def current_phase(flow: JobFlow) -> FlowPhase:
    phase = flow.status.state.phase if flow.status is not None else None
    return phase or FlowPhase.PENDING


def plan_jobflow(flow_body: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]],
                 jobs: Mapping[str, Mapping[str, Any]], now: datetime) -> FlowPlan:  # fmt: skip
    """One sync of one flow. ``templates``: the namespace's JobTemplates by name; ``jobs``: the Jobs this flow
    created, by name."""
    flow = JobFlow.model_validate(flow_body)
    plan = FlowPlan()
    phase = current_phase(flow)
    if phase is FlowPhase.SUCCEED and flow.spec.job_retain_policy is RetainPolicy.DELETE:
        plan.delete = sorted(jobs)
        return plan
    if phase in (FlowPhase.PENDING, FlowPhase.RUNNING):
        plan.create, plan.events = _start_ready_steps(flow, flow_body, templates, jobs)
        if plan.events:
            # Held at a step it cannot create: Volcano's sync stops there and writes no status. A client that
            # updates the flow it has just created (before its templates) must not meet a conflict from us.
            return plan
    old = jobflow_status(flow_body)
    status = flow_status(flow, old, jobs, now)
    if phase in (FlowPhase.PENDING, FlowPhase.RUNNING):
        # A name listed twice is one step with one Job (Volcano's), so the flow succeeds once each distinct
        # step's Job completed; an empty flow has nothing to run and stays Pending, as Volcano's does.
        new = next_phase(phase, status, len(flow_graph(flow)))
        status["state"] = {"phase": new.value}
    if status != {k: v for k, v in old.items() if v}:
        plan.status = status
    return plan


def _start_ready_steps(
    flow: JobFlow,
    flow_body: Mapping[str, Any],
    templates: Mapping[str, Mapping[str, Any]],
    jobs: Mapping[str, Mapping[str, Any]],
) -> tuple[list[JSON], list[FlowEvent]]:
    """The Jobs of the steps whose targets completed, in the order the steps are listed.

    A ready step whose Job cannot be made yet (its JobTemplate does not exist, or the Job's name would not
    fit) holds back the steps listed after it, as Volcano's sync stops at the first step it cannot create;
    the flow waits, and a JobTemplate created later re-syncs it. A name listed twice runs once, from the
    first of its entries whose targets completed.
    """
    create: list[JSON] = []
    started = set(jobs)
    for step, raw in zip(flow.spec.flows, jobflow_flows(flow_body), strict=True):
        name = flow_job_name(flow.name, step.name)
        if name in started:
            continue
        if any(
            job_phase(jobs.get(flow_job_name(flow.name, t), {})) != JobPhase.COMPLETED for t in step.targets()
        ):
            continue
        template = templates.get(step.name)
        if template is None:
            return create, [
                FlowEvent(
                    "Warning",
                    "TemplateNotFound",
                    f"no JobTemplate {step.name!r} in namespace {flow.namespace}; job {name} (and the steps "
                    "listed after it) waits until it exists",
                )
            ]
        if len(name) > MAX_JOB_NAME:
            return create, [
                FlowEvent(
                    "Warning",
                    "InvalidJobName",
                    f"job {name} would be longer than the {MAX_JOB_NAME} characters a Job's name may have; "
                    "the flow waits (recreate it with a shorter JobFlow or JobTemplate name)",
                )
            ]
        patch = step_job_spec_patch(raw)
        create.append(build_job(flow_body, step.name, template, patch))
        started.add(name)
    return create, []
