"""Reads of a raw ``flow.volcano.sh`` JobFlow: its steps as written and the status the flow controller wrote.

A missing or null field reads as its zero value (``api.objects``'s rule). The model, its enums and the rules
are ``api.flow`` and ``api.flow_rules``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.bodies._fields import list_at, mapping_at, str_at
from volcano_py.api.objects import Obj


def jobflow_flows(flow: Obj) -> Sequence[Mapping[str, Any]]:
    """``spec.flows`` as written: one step each (``name``, ``dependsOn``, ``patch``)."""
    return list_at(mapping_at(flow, "spec"), "flows")


def step_name(step: Mapping[str, Any]) -> str:
    """The JobTemplate a step runs."""
    return str_at(step, "name")


def step_job_spec_patch(step: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A step's ``patch.jobSpec`` as written (laid over its template's spec), or None."""
    patch = mapping_at(step, "patch").get("jobSpec")
    return patch if isinstance(patch, Mapping) else None


def jobflow_status(flow: Obj) -> Mapping[str, Any]:
    """The status as the controller wrote it, whole: what a new status is diffed against."""
    return mapping_at(flow, "status")


def status_phase(status: Mapping[str, Any]) -> str:
    """The ``FlowPhase`` value in a JobFlow status (stored, or one a plan made); ``""`` when none."""
    return str_at(mapping_at(status, "state"), "phase")


def jobflow_phase(flow: Obj) -> str:
    """``status.state.phase``: a ``FlowPhase`` value, ``""`` until the controller has written one."""
    return status_phase(jobflow_status(flow))
