"""Reads of a raw ``flow.volcano.sh`` JobTemplate: a Job's spec kept under a name, for JobFlows to run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.bodies._fields import mapping_at
from volcano_py.api.objects import Obj


def jobtemplate_job_spec(template: Obj) -> Mapping[str, Any]:
    """The Job spec the template holds (its ``spec``), whole and as written: copied into each Job made
    from it."""
    return mapping_at(template, "spec")


def jobtemplate_status(template: Obj) -> Mapping[str, Any]:
    """The status as the controller wrote it, whole: what a new status is diffed against."""
    return mapping_at(template, "status")
