"""The words ``vcctl job why`` and the dashboard's job page share: why a job waits, and what would make it
run (pure: API objects and a ``WhatIf`` in, text out)."""

from __future__ import annotations

from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import JobPhase
from volcano_py.api.queue_charge import queue_of_pod
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.api.task_topology import ignored_because

from .model import WhatIf

JSON = dict[str, Any]


def job_phase(job: JSON) -> str:
    """A Volcano Job's phase (Pending until the controller has written one)."""
    return str(job.get("status", {}).get("state", {}).get("phase", "") or JobPhase.PENDING.value)


def why_lines(job: JSON | None, podgroup: JSON | None) -> list[str]:
    """Why a job waits, from its objects: its phase, then what the scheduler wrote on its PodGroup (the lines
    ``vcctl job why`` prints first, and the dashboard's job page shows)."""
    lines: list[str] = []
    if job is not None:
        lines.append(
            f"Job {job['metadata'].get('namespace', '')}/{job['metadata']['name']}: phase {job_phase(job)}"
        )
    if podgroup is None:
        lines.append(
            "No PodGroup yet: the job controller has not created it (is `volcano-py controller` running?)"
        )
        return lines
    pg_meta, pg_status = podgroup["metadata"], podgroup.get("status", {})
    pg_phase = pg_status.get("phase", PodGroupPhase.PENDING.value)
    lines.append(
        f"PodGroup {pg_meta['name']}: phase {pg_phase}, queue {podgroup.get('spec', {}).get('queue', '')}"
    )
    conditions = pg_status.get("conditions", [])
    # The controller can see the pods run before the scheduler's PodGroup status write lands; until then the
    # PodGroup may still say it waits for pods, which its running Job shows is past.
    runs = job is not None and job_phase(job) in (JobPhase.RUNNING.value, JobPhase.COMPLETED.value)
    unschedulable = [
        cond
        for cond in conditions
        if cond.get("type") == c.PODGROUP_CONDITION_UNSCHEDULABLE
        and cond.get("status") == "True"
        and not (runs and cond.get("reason") in c.REASONS_PODS_MISSING)
    ]
    if unschedulable:
        latest = max(unschedulable, key=lambda cond: str(cond.get("lastTransitionTime", "")))
        lines.append(f"Why pending: {latest.get('message') or latest.get('reason', '')}")
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
        tasks = {str(t.get("name") or "") for t in (job.get("spec") or {}).get("tasks") or ()}
        ignored = ignored_because(pg_meta.get("annotations") or {}, tasks)
        if ignored:
            lines.append(f"Note: {ignored}.")
    return lines


def unschedulable_condition(pod: JSON) -> JSON | None:
    """The ``PodScheduled=False`` condition a scheduler wrote on a waiting pod, if any."""
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return dict(condition)
    return None


def pod_why_lines(pod: JSON) -> list[str]:
    """Why a pod without a Job or PodGroup waits (an agent scheduler's pod, placed one by one): its
    scheduler, queue and node, and what its scheduler wrote in ``PodScheduled``."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    lines = [
        f"Pod {meta.get('namespace')}/{meta.get('name')}: scheduler {spec.get('schedulerName') or '-'}, "
        f"queue {queue_of_pod(pod, lambda _group: None)}, "
        + (f"bound to {spec['nodeName']}" if spec.get("nodeName") else "not bound")
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
