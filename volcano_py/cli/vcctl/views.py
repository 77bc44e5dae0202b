"""What vcctl prints for jobs, queues and ``job why``, from plain API objects (no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.job_defaults import with_job_defaults
from volcano_py.api.queue_hierarchy import queue_parent
from volcano_py.cli.vcctl.render import age, table
from volcano_py.forecast import Forecast
from volcano_py.whatif.why import job_phase, pod_why_lines, why_lines

JSON = dict[str, Any]

JOB_LIST_HEADERS = (
    "Name", "Creation", "Phase", "JobType", "Replicas", "Min",
    "Pending", "Running", "Succeeded", "Failed", "Unknown", "RetryCount",
)  # fmt: skip
QUEUE_HEADERS = ("Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed")


def _replicas(job: JSON) -> int:
    return sum(int(task.get("replicas", 0)) for task in job.get("spec", {}).get("tasks", []))


_phase = job_phase


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
    # Shown as the controller runs it: a Job stored while the webhook was away has its defaults too.
    meta, spec, status = job["metadata"], with_job_defaults(job)["spec"], job.get("status", {})
    state = status.get("state", {})
    lines = [
        f"Name:         {meta['name']}",
        f"Namespace:    {meta.get('namespace', '')}",
        f"Age:          {age(meta.get('creationTimestamp'), now)}",
        f"Queue:        {spec.get('queue')}",
        f"Scheduler:    {spec.get('schedulerName')}",
        f"Min Available: {spec.get('minAvailable')}",
        f"Max Retry:    {spec.get('maxRetry')}",
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
    """The explanation of a pending job: its phase, what the scheduler wrote on its PodGroup, its events."""
    lines = why_lines(job, podgroup)
    # Consolidated: the scheduler moved some of its pods to make room for another gang (consolidate).
    recent = [e for e in events if e.get("reason") in ("Unschedulable", "FailedScheduling", "Consolidated")]
    if podgroup is not None and recent:
        lines.append("Recent scheduling events:")
        lines.extend(event_lines(recent[-5:], now))
    return "\n".join(lines) + "\n"


def pod_why(pod: JSON, events: Sequence[JSON], now: datetime) -> str:
    """Why a pod without a Job or PodGroup waits (``whatif.why.pod_why_lines``), with its recent events."""
    lines = pod_why_lines(pod)
    recent = [e for e in events if e.get("reason") in ("FailedScheduling", "Scheduled")]
    if recent:
        lines.append("Recent scheduling events:")
        lines.extend(event_lines(recent[-5:], now))
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
                queue_parent(queue),
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


FORECAST_HEADERS = ("Position", "Job", "Estimated start", "Basis")


def queue_forecast(forecast: Forecast, queue: str, source: str) -> str:
    """The waiting jobs of ``queue`` in the scheduler's order, each with its estimated start."""
    etas = forecast.queue(queue)
    if not etas:
        return f"\nNo job waits in queue {queue}.\n"
    rows: list[list[object]] = [[e.position, e.name, e.in_text(forecast.now), e.basis.value] for e in etas]
    head = (
        f"\nWaiting jobs in the scheduler's order, estimated starts from sessions of {source} run forward:\n"
    )
    return head + table(FORECAST_HEADERS, rows) + "".join(f"{p}\n" for p in forecast.problems)
