"""Queue admission: defaults on create, the hierarchy's rules on create/update, and which queues may go.

The object-only rules (weights, guarantee <= deserved <= capability, hierarchy annotations) are
``volcano_py.api.validation``. Here is what needs the other queues: the parent exists and does not
close a cycle, a child's capability stays under its ancestors', siblings' guarantees and deserved shares fit
in their parent's, and ``default``, ``root`` and queues with children cannot be deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.problems import Problem, join_path
from volcano_py.api.scheduling import Queue
from volcano_py.api.validation import parse_object, unknown_fields, validate_queue
from volcano_py.resources import Resource, format_quantity, total
from volcano_py.webhooks.common import Queues, children, queue_parent
from volcano_py.webhooks.patch import PatchOp, pointer

HIERARCHY_FIELDS = ("parent", "capability", "deserved", "guarantee")


def mutate_queue(queue: Mapping[str, Any]) -> list[PatchOp]:
    """Volcano's defaults for a new Queue: reclaimable, weight 1, hierarchy annotations rooted at ``root``."""
    ops: list[PatchOp] = []
    annotations: Mapping[str, str] = (queue.get("metadata") or {}).get("annotations") or {}
    hierarchy = annotations.get(constants.HIERARCHY_KEY, "")
    weights = annotations.get(constants.HIERARCHY_WEIGHTS_KEY, "")
    if hierarchy and weights and not hierarchy.startswith(constants.ROOT_QUEUE):
        ops.append(
            PatchOp("add", pointer("metadata", "annotations", constants.HIERARCHY_KEY), f"root/{hierarchy}")
        )
        ops.append(
            PatchOp(
                "add", pointer("metadata", "annotations", constants.HIERARCHY_WEIGHTS_KEY), f"1/{weights}"
            )
        )
    spec: Mapping[str, Any] = queue.get("spec") or {}
    if "spec" not in queue:
        ops.append(PatchOp("add", "/spec", {}))
    if spec.get("reclaimable") is None:
        ops.append(PatchOp("add", "/spec/reclaimable", True))
    if not spec.get("weight"):
        ops.append(PatchOp("add", "/spec/weight", 1))
    return ops


def _resources(queue: Mapping[str, Any], field: str) -> Resource:
    spec = queue.get("spec") or {}
    raw = (spec.get("guarantee") or {}).get("resource") if field == "guarantee" else spec.get(field)
    return Resource.parse(raw)


def _ancestors(name: str, parent: str, queues: Queues) -> list[str]:
    """``parent``, its parent, ... up to (not including) root; stops at a missing queue or a cycle."""
    chain: list[str] = []
    while parent and parent != constants.ROOT_QUEUE and parent not in chain and parent != name:
        chain.append(parent)
        found = queues.get(parent)
        if found is None:
            break
        parent = queue_parent(found)
    if parent == name:
        chain.append(name)
    return chain


def _parent_problems(queue: Mapping[str, Any], queues: Queues) -> list[Problem]:
    name = queue["metadata"]["name"]
    parent = queue_parent(queue)
    if not parent or parent == constants.ROOT_QUEUE or parent == name:
        return []  # the object-only rules report a queue that is its own parent
    if parent not in queues:
        return [
            Problem(
                "spec.parent",
                f"parent queue {parent!r} does not exist (create it first, or use 'root')",
            )
        ]
    chain = _ancestors(name, parent, queues)
    if chain and chain[-1] == name:
        return [
            Problem(
                "spec.parent",
                f"{parent!r} would make a cycle ({' -> '.join([name, *chain])}); choose a parent that is not "
                f"a descendant of {name!r}",
            )
        ]
    siblings = [child for child in children(queues, parent) if child != name]
    allocated_pods = Resource.parse((queues[parent].get("status") or {}).get("allocated")).amount("pods")
    if not siblings and allocated_pods:
        return [
            Problem(
                "spec.parent",
                f"queue {parent!r} runs {allocated_pods} pod(s) of its own and so cannot become a parent "
                "(a parent queue holds no jobs; pick another parent or drain that queue first)",
            )
        ]
    return []


def _capability_problems(queue: Mapping[str, Any], queues: Queues) -> list[Problem]:
    name = queue["metadata"]["name"]
    problems: list[Problem] = []
    own = _resources(queue, "capability")
    for resource in sorted(own):
        for ancestor in _ancestors(name, queue_parent(queue), queues):
            limit = _resources(queues[ancestor], "capability").amount(resource) if ancestor in queues else 0
            if limit:
                if own[resource] > limit:
                    problems.append(
                        Problem(
                            join_path("spec", "capability", resource),
                            f"{format_quantity(resource, own[resource])} exceeds the capability "
                            f"{format_quantity(resource, limit)} of ancestor queue {ancestor!r} "
                            f"(lower it to at most {format_quantity(resource, limit)})",
                        )
                    )
                break  # only the nearest ancestor that sets this resource bounds it
    for child in children(queues, name):
        for resource, amount in sorted(_resources(queues[child], "capability").items()):
            if resource in own and own[resource] < amount:
                problems.append(
                    Problem(
                        join_path("spec", "capability", resource),
                        f"{format_quantity(resource, own[resource])} is below the capability "
                        f"{format_quantity(resource, amount)} of child queue {child!r} "
                        f"(raise it to at least {format_quantity(resource, amount)})",
                    )
                )
    return problems


def _share_problems(parent: Mapping[str, Any], members: list[Mapping[str, Any]], path: str) -> list[Problem]:
    """Children's guarantees and deserved shares must fit in their parent's, resource by resource."""
    problems: list[Problem] = []
    parent_name = parent["metadata"]["name"]
    for field in ("guarantee", "deserved"):
        summed = total(_resources(member, field) for member in members)
        limit = _resources(parent, field)
        for resource in summed.insufficient(limit):
            where = "guarantee.resource" if field == "guarantee" else field
            problems.append(
                Problem(
                    join_path(path, where, resource),
                    f"children of queue {parent_name!r} would together have {field} "
                    f"{format_quantity(resource, summed[resource])} of {resource}, more than its "
                    f"{format_quantity(resource, limit.amount(resource))} (lower the children's "
                    f"{where}.{resource} or raise that of queue {parent_name!r})",
                )
            )
    return problems


def _hierarchy_changed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    if old is None:
        return True
    before, after = old.get("spec") or {}, new.get("spec") or {}
    return any(before.get(field) != after.get(field) for field in HIERARCHY_FIELDS)


def validate_queue_write(
    queue: Mapping[str, Any], queues: Queues, old: Mapping[str, Any] | None = None
) -> list[Problem]:
    """Create (``old`` is None) or update of a Queue."""
    model, problems = parse_object(queue)
    if not isinstance(model, Queue):
        return problems
    problems = unknown_fields(model) + validate_queue(model)
    name = queue["metadata"].get("name") or ""
    if problems or name == constants.ROOT_QUEUE or not _hierarchy_changed(old, queue):
        return problems
    problems += _hierarchy_annotation_problems(queue, queues)
    problems += _parent_problems(queue, queues)
    if problems:
        return problems
    problems += _capability_problems(queue, queues)
    parent = queue_parent(queue)
    if parent != constants.ROOT_QUEUE and parent in queues:
        siblings = [queues[s] for s in children(queues, parent) if s != name]
        problems += _share_problems(queues[parent], [*siblings, queue], "spec")
    kids = [queues[child] for child in children(queues, name)]
    if kids:
        problems += _share_problems(queue, kids, "spec")
    return problems


def _hierarchy_annotation_problems(queue: Mapping[str, Any], queues: Queues) -> list[Problem]:
    """Volcano's annotation-based hierarchy: no queue may sit on a path below another queue's leaf path."""
    annotations = queue["metadata"].get("annotations") or {}
    hierarchy = annotations.get(constants.HIERARCHY_KEY)
    if not hierarchy:
        return []
    name = queue["metadata"]["name"]
    for other, body in sorted(queues.items()):
        theirs = ((body.get("metadata") or {}).get("annotations") or {}).get(constants.HIERARCHY_KEY, "")
        if other != name and theirs.startswith(hierarchy + "/"):
            return [
                Problem(
                    f"metadata.annotations[{constants.HIERARCHY_KEY}]",
                    f"{hierarchy!r} is a prefix of the hierarchy {theirs!r} of queue {other!r}; a queue "
                    f"must be a leaf of the hierarchy (extend the path, e.g. '{hierarchy}/{name}')",
                )
            ]
    return []


def validate_queue_delete(name: str, queues: Queues) -> list[Problem]:
    if name == constants.DEFAULT_QUEUE:
        return [
            Problem(
                "metadata.name",
                "queue 'default' cannot be deleted: jobs that name no queue go there (close it instead: "
                "'vcctl queue operate -n default -a close')",
            )
        ]
    if name == constants.ROOT_QUEUE:
        return [
            Problem("metadata.name", "queue 'root' cannot be deleted: it is the top of the queue hierarchy")
        ]
    kids = children(queues, name)
    if kids:
        return [
            Problem(
                "metadata.name",
                f"queue {name!r} has child queues ({', '.join(kids)}); delete them or move them to another "
                "parent first",
            )
        ]
    return []
