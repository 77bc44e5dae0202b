"""Queue admission: defaults on create, the hierarchy's rules on create/update, and which queues may go.

The object-only rules (weights, guarantee <= deserved <= capability, hierarchy annotations) are
``volcano_py.api.validation``; the rules among queues (parent exists, no cycle, depth, capability and
shares within the parent's) are ``volcano_py.api.queue_hierarchy``, which ``volcano-py validate`` runs too.
Here: when they apply (a create, or an update touching the hierarchy), and that ``default``, ``root`` and
queues with children cannot be deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.bodies.queue import queue_written_spec
from volcano_py.api.messages import (
    VOLCANO_QUEUE_HAS_CHILDREN,
    VOLCANO_QUEUE_UNDELETABLE,
    VOLCANO_ROOT_QUEUE_RESOURCES,
    volcano_said,
)
from volcano_py.api.objects import annotations_of, name_of
from volcano_py.api.problems import Problem, join_path
from volcano_py.api.queue_hierarchy import Queues, children, hierarchy_problems
from volcano_py.api.scheduling import Queue
from volcano_py.api.validation import parse_object, unknown_fields, validate_queue
from volcano_py.webhooks.patch import PatchOp, pointer

HIERARCHY_FIELDS = ("parent", "capability", "deserved", "guarantee")


def mutate_queue(queue: Mapping[str, Any]) -> list[PatchOp]:
    """Volcano's defaults for a new Queue: reclaimable, weight 1, hierarchy annotations rooted at ``root``."""
    ops: list[PatchOp] = []
    # Mutation runs before the schema check: anything malformed is left for validation to name.
    raw_annotations: Any = annotations_of(queue)
    annotations: Mapping[str, Any] = raw_annotations if isinstance(raw_annotations, Mapping) else {}
    hierarchy = annotations.get(constants.HIERARCHY_KEY, "")
    weights = annotations.get(constants.HIERARCHY_WEIGHTS_KEY, "")
    if (
        isinstance(hierarchy, str)
        and isinstance(weights, str)
        and hierarchy
        and weights
        and not hierarchy.startswith(constants.ROOT_QUEUE)
    ):
        ops.append(
            PatchOp("add", pointer("metadata", "annotations", constants.HIERARCHY_KEY), f"root/{hierarchy}")
        )
        ops.append(
            PatchOp(
                "add", pointer("metadata", "annotations", constants.HIERARCHY_WEIGHTS_KEY), f"1/{weights}"
            )
        )
    try:
        written = queue_written_spec(queue)
    except ValueError:
        return ops
    spec: Mapping[str, Any] = written or {}
    if written is None:
        ops.append(PatchOp("add", "/spec", {}))
    if spec.get("reclaimable") is None:
        ops.append(PatchOp("add", "/spec/reclaimable", True))
    if not spec.get("weight"):
        ops.append(PatchOp("add", "/spec/weight", 1))
    return ops


def _spec(queue: Mapping[str, Any]) -> Mapping[str, Any]:
    """The spec an update compares field by field; one that is no mapping reads as empty (validation names
    it)."""
    try:
        return queue_written_spec(queue) or {}
    except ValueError:
        return {}


def _hierarchy_changed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    if old is None:
        return True
    before, after = _spec(old), _spec(new)
    return any(before.get(field) != after.get(field) for field in HIERARCHY_FIELDS)


def _root_resources_changed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[Problem]:
    # Volcano protects root's quotas by default (--enable-root-queue-protection): root is the whole cluster.
    if old is None or name_of(new) != constants.ROOT_QUEUE:
        return []
    before, after = _spec(old), _spec(new)
    changed = [
        field for field in ("capability", "deserved") if (before.get(field) or {}) != (after.get(field) or {})
    ]
    if ((before.get("guarantee") or {}).get("resource") or {}) != (
        (after.get("guarantee") or {}).get("resource") or {}
    ):
        changed.append("guarantee")
    if not changed:
        return []
    return [
        Problem(
            join_path("spec", changed[0]),
            volcano_said(
                VOLCANO_ROOT_QUEUE_RESOURCES,
                f"{', '.join(changed)} changed "
                "(root stands for the whole cluster; set quotas on its children)",
            ),
        )
    ]


def validate_queue_write(
    queue: Mapping[str, Any], queues: Queues, old: Mapping[str, Any] | None = None
) -> list[Problem]:
    """Create (``old`` is None) or update of a Queue."""
    model, problems = parse_object(queue)
    if not isinstance(model, Queue):
        return problems
    problems = unknown_fields(model) + validate_queue(model) + _root_resources_changed(old, queue)
    if problems or not _hierarchy_changed(old, queue):
        return problems
    return hierarchy_problems(queue, queues)


def validate_queue_delete(name: str, queues: Queues) -> list[Problem]:
    if name == constants.DEFAULT_QUEUE:
        return [
            Problem(
                "metadata.name",
                volcano_said(
                    VOLCANO_QUEUE_UNDELETABLE.format(queue=name),
                    "jobs that name no queue go there (close it instead: "
                    "'vcctl queue operate -n default -a close')",
                ),
            )
        ]
    if name == constants.ROOT_QUEUE:
        return [
            Problem(
                "metadata.name",
                volcano_said(
                    VOLCANO_QUEUE_UNDELETABLE.format(queue=name), "it is the top of the queue hierarchy"
                ),
            )
        ]
    kids = children(queues, name)
    if kids:
        return [
            Problem(
                "metadata.name",
                volcano_said(
                    VOLCANO_QUEUE_HAS_CHILDREN.format(queue=name, count=len(kids), children=", ".join(kids)),
                    "delete them or move them to another parent first",
                ),
            )
        ]
    return []
