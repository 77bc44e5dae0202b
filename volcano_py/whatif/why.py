"""The words ``vcctl job why`` and the dashboard's job page share: why a job waits, and what would make it
run (pure: API objects and a ``WhatIf`` in, text out)."""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import JobPhase
from volcano_py.api.bodies import job as job_body
from volcano_py.api.bodies.conditions import condition_fields, condition_is_true
from volcano_py.api.bodies.pod import pod_conditions, pod_node_name, pod_scheduler_name
from volcano_py.api.bodies.podgroup import podgroup_conditions, podgroup_queue, podgroup_shown_phase
from volcano_py.api.objects import annotations_of, name_of, namespace_of
from volcano_py.api.queue_charge import queue_of_pod
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.api.task_topology import ignored_because

from .model import WhatIf

JSON = dict[str, Any]


def job_phase(job: Mapping[str, Any]) -> str:
    """A Volcano Job's phase as shown: Pending until the controller has written one."""
    return job_body.job_phase(job) or JobPhase.PENDING.value


def latest_unschedulable(podgroup: Mapping[str, Any], *, unless: Container[str] = ()) -> str | None:
    """What the scheduler last wrote in the PodGroup's Unschedulable=True conditions (message, else reason),
    leaving out those whose reason is in ``unless``; None when none says so."""
    found = [
        condition_fields(cond)
        for cond in podgroup_conditions(podgroup)
        if condition_is_true(cond, c.PODGROUP_CONDITION_UNSCHEDULABLE) and cond.get("reason") not in unless
    ]
    if not found:
        return None
    _type, _status, reason, message, _when = max(found, key=lambda fields: fields[4])
    return message or reason


def why_lines(job: JSON | None, podgroup: JSON | None) -> list[str]:
    """Why a job waits, from its objects: its phase, then what the scheduler wrote on its PodGroup (the lines
    ``vcctl job why`` prints first, and the dashboard's job page shows)."""
    lines: list[str] = []
    if job is not None:
        lines.append(f"Job {namespace_of(job)}/{name_of(job)}: phase {job_phase(job)}")
    if podgroup is None:
        lines.append(
            "No PodGroup yet: the job controller has not created it (is `volcano-py controller` running?)"
        )
        return lines
    pg_phase = podgroup_shown_phase(podgroup)
    lines.append(f"PodGroup {name_of(podgroup)}: phase {pg_phase}, queue {podgroup_queue(podgroup)}")
    # The controller can see the pods run before the scheduler's PodGroup status write lands; until then the
    # PodGroup may still say it waits for pods, which its running Job shows is past.
    runs = job is not None and job_phase(job) in (JobPhase.RUNNING.value, JobPhase.COMPLETED.value)
    reason = latest_unschedulable(podgroup, unless=c.REASONS_PODS_MISSING if runs else ())
    if reason is not None:
        lines.append(f"Why pending: {reason}")
    elif pg_phase in (PodGroupPhase.RUNNING, PodGroupPhase.COMPLETED) or runs:
        lines.append("Not pending: the scheduler placed this job.")
    elif pg_phase == PodGroupPhase.PENDING:
        lines.append(
            "Waiting for enqueue: the queue or the cluster cannot yet take the job's minResources, "
            "or the scheduler has not run a session since it was created."
        )
    else:
        lines.append("No Unschedulable condition: the scheduler has not reported a reason yet.")
    if job is not None:
        tasks = {job_body.task_name(task) for task in job_body.job_tasks(job)}
        ignored = ignored_because(annotations_of(podgroup), tasks)
        if ignored:
            lines.append(f"Note: {ignored}.")
    return lines


def unschedulable_condition(pod: JSON) -> JSON | None:
    """The ``PodScheduled=False`` condition a scheduler wrote on a waiting pod, if any."""
    for condition in pod_conditions(pod):
        if condition_fields(condition)[:2] == ("PodScheduled", "False"):
            return dict(condition)
    return None


def pod_why_lines(pod: JSON) -> list[str]:
    """Why a pod without a Job or PodGroup waits (an agent scheduler's pod, placed one by one): its
    scheduler, queue and node, and what its scheduler wrote in ``PodScheduled``."""
    node = pod_node_name(pod)
    lines = [
        f"Pod {namespace_of(pod)}/{name_of(pod)}: scheduler {pod_scheduler_name(pod) or '-'}, "
        f"queue {queue_of_pod(pod, lambda _group: None)}, " + (f"bound to {node}" if node else "not bound")
    ]
    condition = unschedulable_condition(pod)
    if condition is not None:
        lines.append(f"{condition.get('reason')}: {condition.get('message')}")
    return lines


def what_would_make_it_run(answer: WhatIf, conf_source: str) -> str:
    """The what-if section of ``job why``: each change a what-if session proved lets the job run now."""
    lines = [f"What would make it run (each proved by a what-if session with {conf_source}):"]
    lines.extend(f"  {line}" for line in answer.text().splitlines())
    return "\n".join(lines) + "\n"
