"""PodGroup admission: a new PodGroup must land in a queue that exists, is Open and is a leaf."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.problems import Problem
from volcano_py.api.scheduling import PodGroup
from volcano_py.api.validation import parse_object, unknown_fields, validate_podgroup
from volcano_py.webhooks.common import Queues
from volcano_py.webhooks.job import queue_problems


def validate_podgroup_create(podgroup: Mapping[str, Any], queues: Queues) -> list[Problem]:
    model, problems = parse_object(podgroup)
    if not isinstance(model, PodGroup):
        return problems
    return (
        unknown_fields(model)
        + validate_podgroup(model)
        + queue_problems(model.spec.queue or constants.DEFAULT_QUEUE, queues, kind="podgroups")
    )
