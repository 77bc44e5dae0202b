"""Reads of a raw ``batch.volcano.sh`` Job: its spec as written and the status the Job controller wrote.

Volcano's defaults are not applied here (``api.job_defaults`` does that, ``api.job_view.resolve_job`` reads a
Job through them): these are the fields as stored, a missing or null one as its zero value, as in
``api.objects``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from volcano_py.api import constants as c
from volcano_py.api.bodies._fields import int_at, list_at, mapping_at, str_at, written_mapping
from volcano_py.api.objects import Obj

# The status's pod counters (``JobStatus``), by their wire names.
PodCount = Literal["pending", "running", "succeeded", "failed", "terminating", "unknown"]


# --- spec -------------------------------------------------------------------------------------------------


def job_spec(job: Obj) -> Mapping[str, Any]:
    """The spec as written, whole: for what takes it as a whole (an update's diff, a copy into a new Job).
    A field of it is read through its own function below."""
    return mapping_at(job, "spec")


def job_written_spec(job: Obj) -> Mapping[str, Any] | None:
    """The spec as sent: None when absent or null, ``ValueError`` when it is no mapping (admission tells
    these apart; validation names the field)."""
    return written_mapping(job, "spec")


def job_queue(job: Obj) -> str:
    """``spec.queue``; ``default`` when left out (the CRD's and the webhook's default)."""
    return str_at(job_spec(job), "queue") or c.DEFAULT_QUEUE


def job_scheduler_name(job: Obj) -> str:
    """``spec.schedulerName`` as written (``""`` when left out; the webhook writes ``volcano``)."""
    return str_at(job_spec(job), "schedulerName")


def job_min_available(job: Obj) -> int:
    """``spec.minAvailable`` as written (0 when left out; the webhook writes the tasks' sum)."""
    return int_at(job_spec(job), "minAvailable")


def job_max_retry(job: Obj) -> int:
    """``spec.maxRetry`` as written (0 when left out; the webhook writes ``DEFAULT_MAX_RETRY``)."""
    return int_at(job_spec(job), "maxRetry")


def job_tasks(job: Obj) -> Sequence[Mapping[str, Any]]:
    """``spec.tasks`` as written: each a TaskSpec mapping (name, replicas, template, ...)."""
    return list_at(job_spec(job), "tasks")


def job_plugins(job: Obj) -> object:
    """``spec.plugins`` unchecked (None when left out): ``jobplugins.registry.plugin_args`` checks its shape
    and names the field when it is wrong."""
    return job_spec(job).get("plugins")


def task_name(task: Mapping[str, Any]) -> str:
    """A task's ``name`` as written (``""`` when unnamed; ``job_defaults`` names it ``default<i>``)."""
    return str_at(task, "name")


def task_replicas(task: Mapping[str, Any]) -> int:
    return int_at(task, "replicas")


def task_pod_spec(task: Mapping[str, Any]) -> Mapping[str, Any]:
    """The pod spec of a task's template (``template.spec``), as written."""
    return mapping_at(mapping_at(task, "template"), "spec")


# --- status -----------------------------------------------------------------------------------------------


def job_status(job: Obj) -> Mapping[str, Any]:
    """The status as the controller wrote it, whole: for a copy kept in memory. A field of it is read through
    its own function below."""
    return mapping_at(job, "status")


def _state(job: Obj) -> Mapping[str, Any]:
    return mapping_at(job_status(job), "state")


def job_phase(job: Obj) -> str:
    """``status.state.phase``: a ``JobPhase`` value, ``""`` until the controller has written one (a caller
    that shows it as Pending says so)."""
    return str_at(_state(job), "phase")


def job_state_reason(job: Obj) -> str:
    return str_at(_state(job), "reason")


def job_state_message(job: Obj) -> str:
    return str_at(_state(job), "message")


def job_state_transition_time(job: Obj) -> str:
    """When the Job entered its phase (``status.state.lastTransitionTime``), ``""`` when not written."""
    return str_at(_state(job), "lastTransitionTime")


def job_version(job: Obj) -> int:
    """``status.version``: bumped at each restart; a pod of an older version is a leftover."""
    return int_at(job_status(job), "version")


def job_retry_count(job: Obj) -> int:
    return int_at(job_status(job), "retryCount")


def job_pod_count(job: Obj, phase: PodCount) -> int:
    """One of the status's pod counters (``pending``, ``running``, ...)."""
    return int_at(job_status(job), phase)


def job_status_min_available(job: Obj) -> int | None:
    """``status.minAvailable``, the gang size the controller last wrote; None before its first write."""
    status = job_status(job)
    return int_at(status, "minAvailable") if "minAvailable" in status else None


def job_running_duration(job: Obj) -> str:
    """``status.runningDuration``, a Go duration string; ``""`` when not written."""
    return str_at(job_status(job), "runningDuration")


def job_task_status_count(job: Obj) -> Mapping[str, Mapping[str, Any]]:
    """``status.taskStatusCount``: task name -> ``{"phase": {pod phase: count}}``."""
    return mapping_at(job_status(job), "taskStatusCount")


def job_task_phase_counts(job: Obj, task: str) -> Mapping[str, int]:
    """A task's pods by phase, from ``status.taskStatusCount``."""
    return mapping_at(mapping_at(job_task_status_count(job), task), "phase")


# --- writes -----------------------------------------------------------------------------------------------


def job_with_status(job: Obj, status: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``job`` carrying ``status``: the body of a write to the ``status`` subresource."""
    return {**job, "status": status}
