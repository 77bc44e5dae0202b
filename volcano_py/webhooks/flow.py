"""JobFlow, JobTemplate and CronJob admission: each object's own rules and nothing of the cluster's.

A JobFlow is admitted whether or not its JobTemplates exist yet, as Volcano admits it: the flow controller
waits for them (``controllers/flow/jobflow.py``), so a manifest applying the flow before its templates works.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.problems import Problem
from volcano_py.api.validation import validate_object


def validate_flow_object(body: Mapping[str, Any]) -> list[Problem]:
    """Problems of a JobFlow, JobTemplate or CronJob."""
    return validate_object(body)
