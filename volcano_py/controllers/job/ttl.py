"""``ttlSecondsAfterFinished``: when a finished Job is due for deletion (Volcano's garbage collector)."""

from __future__ import annotations

from datetime import datetime, timedelta

from volcano_py.api.batch import FINISHED_PHASES, JobStatus
from volcano_py.api.job_view import ResolvedJob


def expires_at(spec: ResolvedJob, status: JobStatus) -> datetime | None:
    """When the Job should be deleted; None when it has no TTL, is not finished, or has no finish time."""
    if spec.ttl_seconds_after_finished is None or status.state.phase not in FINISHED_PHASES:
        return None
    finished = status.state.last_transition_time
    if finished is None:
        return None
    return finished + timedelta(seconds=spec.ttl_seconds_after_finished)


def seconds_left(spec: ResolvedJob, status: JobStatus, now: datetime) -> float | None:
    """Seconds until deletion (<= 0: delete now), or None when the Job never expires."""
    at = expires_at(spec, status)
    return None if at is None else (at - now).total_seconds()
