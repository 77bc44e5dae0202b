"""Reads of a raw ``batch.volcano.sh`` CronJob: its schedule and Job template as written, and the status the
CronJob controller wrote.

The model (``api.cron``) says what the CRD defaults; these read the stored object, a missing or null field
as its zero value (``api.objects``'s rule). The Job template has ``metadata``, so its labels and annotations
are ``api.objects.labels_of`` / ``annotations_of`` of :func:`cronjob_job_template`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.bodies._fields import list_at, mapping_at, str_at
from volcano_py.api.objects import Obj


def cronjob_schedule(cronjob: Obj) -> str:
    return str_at(mapping_at(cronjob, "spec"), "schedule")


def cronjob_time_zone(cronjob: Obj) -> str:
    """``spec.timeZone``; ``""`` when left out (the controller's local zone)."""
    return str_at(mapping_at(cronjob, "spec"), "timeZone")


def cronjob_suspended(cronjob: Obj) -> bool:
    return bool(mapping_at(cronjob, "spec").get("suspend"))


def cronjob_job_template(cronjob: Obj) -> Mapping[str, Any]:
    """``spec.jobTemplate``: the ``metadata`` and ``spec`` of the Job each run makes."""
    return mapping_at(mapping_at(cronjob, "spec"), "jobTemplate")


def cronjob_job_spec(cronjob: Obj) -> Mapping[str, Any]:
    """The Job spec each run copies, whole and as written."""
    return mapping_at(cronjob_job_template(cronjob), "spec")


def cronjob_status(cronjob: Obj) -> Mapping[str, Any]:
    """The status as the controller wrote it, whole: what a new status is diffed against."""
    return mapping_at(cronjob, "status")


def cronjob_active(cronjob: Obj) -> Sequence[Mapping[str, Any]]:
    """``status.active``: ObjectReferences to the runs' Jobs still running."""
    return list_at(cronjob_status(cronjob), "active")


def cronjob_last_schedule_time(cronjob: Obj) -> str:
    """``status.lastScheduleTime`` (RFC 3339), ``""`` before the first run."""
    return str_at(cronjob_status(cronjob), "lastScheduleTime")


def cronjob_last_successful_time(cronjob: Obj) -> str:
    """``status.lastSuccessfulTime`` (RFC 3339), ``""`` before a run completed."""
    return str_at(cronjob_status(cronjob), "lastSuccessfulTime")
