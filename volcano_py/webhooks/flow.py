"""JobFlow, JobTemplate and CronJob admission: each object's own rules and nothing of the cluster's.

A JobFlow is admitted whether or not its JobTemplates exist yet, as Volcano admits it: the flow controller
waits for them (``controllers/flow/jobflow.py``), so a manifest applying the flow before its templates works.
A JobTemplate's or CronJob's Job spec gets the Job rules when a Job is made from it, as in Volcano (which has
no JobTemplate webhook and whose CronJob webhook checks only the schedule, time zone and name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.cron import CronJob
from volcano_py.api.flow import JobTemplate
from volcano_py.api.flow_rules import deferred_job_rules
from volcano_py.api.problems import Problem
from volcano_py.api.validation import parse_object, validate_object


def validate_flow_object(body: Mapping[str, Any]) -> list[Problem]:
    """Problems of a JobFlow, JobTemplate or CronJob that admission refuses."""
    problems = validate_object(body)
    model, _ = parse_object(body)
    if not problems or not isinstance(model, (JobTemplate, CronJob)):
        return problems
    later = set(deferred_job_rules(model))
    return [p for p in problems if p not in later]
