"""What vcctl prints for jobs, queues and ``job why``, from plain API objects (no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import JobPhase
from volcano_py.api.bodies.job import (
    PodCount,
    job_max_retry,
    job_min_available,
    job_phase,
    job_pod_count,
    job_queue,
    job_retry_count,
    job_scheduler_name,
    job_state_message,
    job_state_reason,
    job_status_min_available,
    job_task_phase_counts,
    job_tasks,
    job_version,
    task_name,
    task_replicas,
)
from volcano_py.api.bodies.queue import queue_podgroup_count, queue_state, queue_weight
from volcano_py.api.job_defaults import with_job_defaults
from volcano_py.api.objects import creation_timestamp_of, label_of, name_of, namespace_of
from volcano_py.api.queue_hierarchy import queue_parent
from volcano_py.cli.vcctl.render import age, table
from volcano_py.forecast import Forecast
from volcano_py.whatif.why import pod_why_lines, why_lines

JSON = dict[str, Any]

JOB_LIST_HEADERS = (
    "Name", "Creation", "Phase", "JobType", "Replicas", "Min",
    "Pending", "Running", "Succeeded", "Failed", "Unknown", "RetryCount",
)  # fmt: skip
QUEUE_HEADERS = ("Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed")


# The pod counters a Job's row and view show, in this order.
_POD_COUNTS: tuple[PodCount, ...] = ("pending", "running", "succeeded", "failed", "unknown")


def _replicas(job: JSON) -> int:
    return sum(task_replicas(task) for task in job_tasks(job))


def _phase(job: JSON) -> str:
    """A Job's phase as shown: Pending until the controller has written one."""
    return job_phase(job) or JobPhase.PENDING.value


def _min_available(job: JSON) -> int:
    """The gang size the controller last wrote, else the spec's."""
    written = job_status_min_available(job)
    return job_min_available(job) if written is None else written


def job_rows(jobs: Sequence[JSON], *, all_namespaces: bool) -> list[list[object]]:
    rows: list[list[object]] = []
    for job in jobs:
        row: list[object] = [
            name_of(job),
            creation_timestamp_of(job)[:10],
            _phase(job),
            label_of(job, c.JOB_TYPE_KEY, "Batch"),
            _replicas(job),
            _min_available(job),
            *(job_pod_count(job, count) for count in _POD_COUNTS),
            job_retry_count(job),
        ]
        rows.append([namespace_of(job), *row] if all_namespaces else row)
    return rows


def job_list(jobs: Sequence[JSON], *, all_namespaces: bool) -> str:
    if not jobs:
        return "No resources found\n"
    headers = ("Namespace", *JOB_LIST_HEADERS) if all_namespaces else JOB_LIST_HEADERS
    return table(headers, job_rows(jobs, all_namespaces=all_namespaces))


def job_view(job: JSON, events: Sequence[JSON], now: datetime) -> str:
    # Shown as the controller runs it: a Job stored while the webhook was away has its defaults too.
    defaulted = with_job_defaults(job)
    lines = [
        f"Name:         {name_of(job)}",
        f"Namespace:    {namespace_of(job)}",
        f"Age:          {age(creation_timestamp_of(job), now)}",
        f"Queue:        {job_queue(defaulted)}",
        f"Scheduler:    {job_scheduler_name(defaulted)}",
        f"Min Available: {job_min_available(defaulted)}",
        f"Max Retry:    {job_max_retry(defaulted)}",
        f"Phase:        {_phase(job)}",
    ]
    reason, message = job_state_reason(job), job_state_message(job)
    if reason or message:
        lines.append(f"Reason:       {reason} {message}".rstrip())
    lines.append("Pods:         " + ", ".join(f"{k} {job_pod_count(job, k)}" for k in _POD_COUNTS))
    lines.append(f"Retry Count:  {job_retry_count(job)}   Version: {job_version(job)}")
    lines.append("Tasks:")
    for task in job_tasks(defaulted):
        name = task_name(task)
        phases = job_task_phase_counts(job, name)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(phases.items())) or "no pods"
        lines.append(f"  {name}: replicas {task_replicas(task)} ({counts})")
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
        rows.append(
            [
                name_of(queue),
                queue_weight(queue),
                queue_state(queue),
                queue_parent(queue),
                *(
                    queue_podgroup_count(queue, count)
                    for count in ("inqueue", "pending", "running", "unknown", "completed")
                ),
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
