"""JobFlow, JobTemplate and CronJob admission: the object's own rules, and for a JobFlow, that the
JobTemplates it names exist in its namespace (which only the cluster can tell)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from volcano_py.api.flow import JobFlow
from volcano_py.api.flow_rules import missing_templates
from volcano_py.api.problems import Problem
from volcano_py.api.validation import validate_object


def validate_flow_object(body: Mapping[str, Any], templates: Collection[str] | None = None) -> list[Problem]:
    """Problems of a JobFlow, JobTemplate or CronJob; ``templates``: the JobTemplate names of the JobFlow's
    namespace (None: not checked)."""
    problems = validate_object(body)
    if problems or templates is None or body.get("kind") != JobFlow.model_fields["kind"].default:
        return problems
    return missing_templates(JobFlow.model_validate(body), templates)
