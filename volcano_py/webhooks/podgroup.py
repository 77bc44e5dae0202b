"""PodGroup admission: a new PodGroup in the ``default`` queue takes its namespace's queue (the namespace's
``scheduling.volcano.sh/queue-name`` annotation), as in Volcano; then it must land in a queue that exists, is
Open and is a leaf."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.bodies.podgroup import podgroup_written_spec
from volcano_py.api.problems import Problem
from volcano_py.api.scheduling import PodGroup
from volcano_py.api.validation import parse_object, unknown_fields, validate_podgroup
from volcano_py.webhooks.common import Queues
from volcano_py.webhooks.job import queue_problems
from volcano_py.webhooks.patch import PatchOp


def in_default_queue(podgroup: Mapping[str, Any]) -> bool:
    """Whether the PodGroup sent is in ``default``: ``spec.queue`` left out, or written so (the namespace's
    queue then replaces it); never when there is no spec to patch."""
    try:
        spec = podgroup_written_spec(podgroup)
    except ValueError:
        return False  # validation names it
    return spec is not None and spec.get("queue", constants.DEFAULT_QUEUE) == constants.DEFAULT_QUEUE


def mutate_podgroup(
    podgroup: Mapping[str, Any], namespace_annotations: Mapping[str, Any] | None
) -> list[PatchOp]:
    """``spec.queue`` from the namespace when the PodGroup is in ``default`` (the CRD's default for none);
    ``namespace_annotations`` is None when the namespace could not be read, which leaves the PodGroup as is,
    as Volcano does."""
    if not in_default_queue(podgroup):
        return []
    queue = (namespace_annotations or {}).get(constants.QUEUE_NAME_ANNOTATION_KEY)
    if queue is None:
        return []
    return [PatchOp("add", "/spec/queue", queue)]


def validate_podgroup_create(podgroup: Mapping[str, Any], queues: Queues) -> list[Problem]:
    model, problems = parse_object(podgroup)
    if not isinstance(model, PodGroup):
        return problems
    return (
        unknown_fields(model)
        + validate_podgroup(model)
        + queue_problems(model.spec.queue or constants.DEFAULT_QUEUE, queues, kind="podgroups")
    )
