"""What vcctl prints for jobs, queues and ``job why``, from plain API objects (no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import JobPhase
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.cli.vcctl.render import age, table
from volcano_py.whatif import WhatIf

JSON = dict[str, Any]

JOB_LIST_HEADERS = (
    "Name", "Creation", "Phase", "JobType", "Replicas", "Min",
    "Pending", "Running", "Succeeded", "Failed", "Unknown", "RetryCount",
)  # fmt: skip
QUEUE_HEADERS = ("Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed")


def _replicas(job: JSON) -> int:
    return sum(int(task.get("replicas", 0)) for task in job.get("spec", {}).get("tasks", []))


def _phase(job: JSON) -> str:
    return str(job.get("status", {}).get("state", {}).get("phase", "") or JobPhase.PENDING.value)


def job_rows(jobs: Sequence[JSON], *, all_namespaces: bool) -> list[list[object]]:
    rows: list[list[object]] = []
    for job in jobs:
        meta, status = job["metadata"], job.get("status", {})
        row: list[object] = [
            meta["name"],
            str(meta.get("creationTimestamp", ""))[:10],
            _phase(job),
            meta.get("labels", {}).get(c.JOB_TYPE_KEY, "Batch"),
            _replicas(job),
            status.get("minAvailable", job.get("spec", {}).get("minAvailable", 0)),
            status.get("pending", 0),
            status.get("running", 0),
            status.get("succeeded", 0),
            status.get("failed", 0),
            status.get("unknown", 0),
            status.get("retryCount", 0),
        ]
        rows.append([meta.get("namespace", ""), *row] if all_namespaces else row)
    return rows


def job_list(jobs: Sequence[JSON], *, all_namespaces: bool) -> str:
    if not jobs:
        return "No resources found\n"
    headers = ("Namespace", *JOB_LIST_HEADERS) if all_namespaces else JOB_LIST_HEADERS
    return table(headers, job_rows(jobs, all_namespaces=all_namespaces))


def job_view(job: JSON, events: Sequence[JSON], now: datetime) -> str:
    meta, spec, status = job["metadata"], job.get("spec", {}), job.get("status", {})
    state = status.get("state", {})
    lines = [
        f"Name:         {meta['name']}",
        f"Namespace:    {meta.get('namespace', '')}",
        f"Age:          {age(meta.get('creationTimestamp'), now)}",
        f"Queue:        {spec.get('queue', c.DEFAULT_QUEUE)}",
        f"Scheduler:    {spec.get('schedulerName', c.SCHEDULER_NAME)}",
        f"Min Available: {spec.get('minAvailable', _replicas(job))}",
        f"Max Retry:    {spec.get('maxRetry', 3)}",
        f"Phase:        {_phase(job)}",
    ]
    if state.get("reason") or state.get("message"):
        lines.append(f"Reason:       {state.get('reason', '')} {state.get('message', '')}".rstrip())
    lines.append(
        "Pods:         "
        + ", ".join(
            f"{k} {status.get(k, 0)}" for k in ("pending", "running", "succeeded", "failed", "unknown")
        )
    )
    lines.append(f"Retry Count:  {status.get('retryCount', 0)}   Version: {status.get('version', 0)}")
    lines.append("Tasks:")
    task_counts = status.get("taskStatusCount", {})
    for task in spec.get("tasks", []):
        phases = task_counts.get(task.get("name", ""), {}).get("phase", {})
        counts = ", ".join(f"{k} {v}" for k, v in sorted(phases.items())) or "no pods"
        lines.append(f"  {task.get('name', '')}: replicas {task.get('replicas', 0)} ({counts})")
    lines.append("Events:")
    lines.extend(event_lines(events, now) or ["  <none>"])
    return "\n".join(lines) + "\n"


def event_lines(events: Sequence[JSON], now: datetime) -> list[str]:
    ordered = sorted(events, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    return [
        f"  {e.get('type', '')}  {e.get('reason', '')}  "
        f"{age(e.get('lastTimestamp') or e.get('eventTime'), now)} ago  {e.get('message', '')}"
        for e in ordered
    ]


def why(job: JSON | None, podgroup: JSON | None, events: Sequence[JSON], now: datetime) -> str:
    """The explanation of a pending job: its phase, then what the scheduler wrote on its PodGroup."""
    lines: list[str] = []
    if job is not None:
        lines.append(
            f"Job {job['metadata'].get('namespace', '')}/{job['metadata']['name']}: phase {_phase(job)}"
        )
    if podgroup is None:
        lines.append(
            "No PodGroup yet: the job controller has not created it (is `volcano-py controller` running?)"
        )
        return "\n".join(lines) + "\n"
    pg_meta, pg_status = podgroup["metadata"], podgroup.get("status", {})
    pg_phase = pg_status.get("phase", PodGroupPhase.PENDING.value)
    lines.append(
        f"PodGroup {pg_meta['name']}: phase {pg_phase}, queue {podgroup.get('spec', {}).get('queue', '')}"
    )
    conditions = pg_status.get("conditions", [])
    unschedulable = [
        cond
        for cond in conditions
        if cond.get("type") == c.PODGROUP_CONDITION_UNSCHEDULABLE and cond.get("status") == "True"
    ]
    if unschedulable:
        latest = max(unschedulable, key=lambda cond: str(cond.get("lastTransitionTime", "")))
        lines.append(f"Why pending: {latest.get('message') or latest.get('reason', '')}")
    elif pg_phase in (PodGroupPhase.RUNNING, PodGroupPhase.COMPLETED):
        lines.append("Not pending: the scheduler placed this job.")
    elif pg_phase == PodGroupPhase.PENDING:
        lines.append(
            "Waiting for enqueue: the queue or the cluster cannot yet take the job's minResources, "
            "or the scheduler has not run a session since it was created."
        )
    else:
        lines.append("No Unschedulable condition: the scheduler has not reported a reason yet.")
    recent = [e for e in events if e.get("reason") in ("Unschedulable", "FailedScheduling")]
    if recent:
        lines.append("Recent scheduling events:")
        lines.extend(event_lines(recent[-5:], now))
    return "\n".join(lines) + "\n"


def what_would_make_it_run(answer: WhatIf, conf_source: str) -> str:
    """The what-if section of ``job why``: each change a what-if session proved lets the job run now."""
    lines = [f"What would make it run (each proved by a what-if session with {conf_source}):"]
    lines.extend(f"  {line}" for line in answer.text().splitlines())
    return "\n".join(lines) + "\n"


def queue_rows(queues: Sequence[JSON]) -> list[list[object]]:
    rows: list[list[object]] = []
    for queue in queues:
        spec, status = queue.get("spec", {}), queue.get("status", {})
        rows.append(
            [
                queue["metadata"]["name"],
                spec.get("weight", 1),
                status.get("state", "Open"),
                spec.get("parent", "" if queue["metadata"]["name"] == c.ROOT_QUEUE else c.ROOT_QUEUE),
                status.get("inqueue", 0),
                status.get("pending", 0),
                status.get("running", 0),
                status.get("unknown", 0),
                status.get("completed", 0),
            ]
        )
    return rows


def queue_list(queues: Sequence[JSON]) -> str:
    if not queues:
        return "No resources found\n"
    return table(QUEUE_HEADERS, queue_rows(queues))
