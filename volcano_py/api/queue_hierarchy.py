"""The queue tree's rules, checked against other queues: the Queue webhook runs them against the queues that
exist, ``volcano-py validate`` against the queues in the files it is given, in the order ``kubectl apply``
would create them.

Volcano's rules (its queue admission): the parent must exist (a parent named before its child), the tree is
at most five levels below ``root`` and has no cycle, a parent with pods of its own cannot take children, a
queue's capability stays within its nearest ancestor's that sets that resource (and a parent's covers every
child's), and children's guarantees and deserved shares add up to no more than their parent's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from volcano_py.api import constants
from volcano_py.api.messages import (
    VOLCANO_ANCESTOR_CAPABILITY,
    VOLCANO_CHILDREN_SUM,
    VOLCANO_DESCENDANT_CAPABILITY,
    VOLCANO_HIERARCHY_SUB_PATH,
    VOLCANO_PARENT_HAS_PODS,
    VOLCANO_PARENT_MISSING,
    VOLCANO_QUEUE_DEPTH,
    VOLCANO_SIBLINGS_SUM,
    volcano_said,
)
from volcano_py.api.problems import Problem, join_path
from volcano_py.api.scheduling import QueueState
from volcano_py.resources import Resource, format_quantity, total

# Queue name -> Queue object as the API server returns it (or as written in a file).
Queues = Mapping[str, Mapping[str, Any]]

# Volcano's webhook default (``--max-queue-depth``): levels below root, the queue itself included.
MAX_QUEUE_DEPTH: Final = 5


def queue_name(queue: Mapping[str, Any]) -> str:
    name: str = (queue.get("metadata") or {}).get("name") or ""
    return name


def queue_parent(queue: Mapping[str, Any]) -> str:
    """A queue's parent; a queue that names none hangs under ``root`` (root itself has none)."""
    parent: str = (queue.get("spec") or {}).get("parent") or ""
    if queue_name(queue) == constants.ROOT_QUEUE:
        return ""
    return parent or constants.ROOT_QUEUE


def queue_lineage(name: str, parent_of: Callable[[str], str | None]) -> list[str]:
    """``name``, its parent, its parent's parent, ... up to root: the queues whose settings a queue inherits.
    ``parent_of`` answers a queue's parent ('' for root), None for a queue that does not exist, where the
    walk stops, as it does at a cycle."""
    chain: list[str] = []
    current: str | None = name
    while current and current not in chain:
        parent = parent_of(current)
        if parent is None:
            break
        chain.append(current)
        current = parent
    return chain


def children(queues: Queues, name: str) -> list[str]:
    return sorted(other for other, queue in queues.items() if other != name and queue_parent(queue) == name)


def written_state(queue: Mapping[str, Any]) -> str:
    """``status.state`` as the queue controller last wrote it; '' for a queue it has not reconciled yet."""
    state: str = (queue.get("status") or {}).get("state") or ""
    return state


def closed_ancestor(queues: Queues, name: str) -> str:
    """The nearest ancestor of queue ``name`` that is Closing or Closed ('' when none is)."""
    queue = queues.get(name)
    parent = queue_parent(queue) if queue is not None else ""
    for ancestor in _ancestors(name, parent, queues):
        found = queues.get(ancestor)
        if found is not None and written_state(found) in (QueueState.CLOSING, QueueState.CLOSED):
            return ancestor
    return ""


def admission_state(queues: Queues, name: str) -> str:
    """The state a Job or PodGroup submitted to queue ``name`` is admitted against.

    A queue the controller has not reconciled yet (no ``status.state``) is about to be opened, so it counts as
    Open: ``kubectl apply`` of one file holding a Queue and a Job in it must not race the controller. Under a
    Closing or Closed ancestor the controller will close it instead, so it counts as Closing.
    """
    queue = queues.get(name)
    if queue is None:
        return ""
    if state := written_state(queue):
        return state
    return QueueState.CLOSING.value if closed_ancestor(queues, name) else QueueState.OPEN.value


def _resources(queue: Mapping[str, Any], field: str) -> Resource:
    spec = queue.get("spec") or {}
    raw = (spec.get("guarantee") or {}).get("resource") if field == "guarantee" else spec.get(field)
    return Resource.parse(raw)


def _ancestors(name: str, parent: str, queues: Queues) -> list[str]:
    """``parent``, its parent, ... up to (not including) root; stops at a missing queue or a cycle, which
    ends the list with ``name`` itself."""
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


def parent_problems(queue: Mapping[str, Any], queues: Queues) -> list[Problem]:
    """The parent exists, closes no cycle, keeps the tree within ``MAX_QUEUE_DEPTH`` and runs no pods."""
    name, parent = queue_name(queue), queue_parent(queue)
    if not parent or parent == constants.ROOT_QUEUE or parent == name:
        return []  # the object-only rules report a queue that is its own parent
    if parent not in queues:
        return [
            Problem(
                "spec.parent",
                volcano_said(VOLCANO_PARENT_MISSING.format(parent=parent), "create it first, or use 'root'"),
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
    if len(chain) + 1 > MAX_QUEUE_DEPTH:
        return [
            Problem(
                "spec.parent",
                volcano_said(
                    VOLCANO_QUEUE_DEPTH.format(queue=name, depth=MAX_QUEUE_DEPTH),
                    f"it would be {len(chain) + 1} levels below root "
                    f"(root -> {' -> '.join([*chain[::-1], name])}); attach it to a queue higher in the tree",
                ),
            )
        ]
    siblings = [child for child in children(queues, parent) if child != name]
    allocated_pods = Resource.parse((queues[parent].get("status") or {}).get("allocated")).amount("pods")
    if not siblings and allocated_pods:
        return [
            Problem(
                "spec.parent",
                volcano_said(
                    VOLCANO_PARENT_HAS_PODS.format(parent=parent, queue=name, pods=allocated_pods),
                    "a parent queue holds no jobs (pick another parent or drain that queue first)",
                ),
            )
        ]
    return []


def capability_problems(queue: Mapping[str, Any], queues: Queues) -> list[Problem]:
    """The capability is within the nearest ancestor's that sets each resource, and covers each child's."""
    name = queue_name(queue)
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
                            volcano_said(
                                VOLCANO_ANCESTOR_CAPABILITY.format(
                                    queue=name,
                                    resource=resource,
                                    value=format_quantity(resource, own[resource]),
                                    limit=format_quantity(resource, limit),
                                ),
                                f"the capability of ancestor queue {ancestor!r} bounds it "
                                f"(lower it to at most {format_quantity(resource, limit)})",
                            ),
                        )
                    )
                break  # only the nearest ancestor that sets this resource bounds it
    for child in children(queues, name):
        for resource, amount in sorted(_resources(queues[child], "capability").items()):
            if resource in own and own[resource] < amount:
                problems.append(
                    Problem(
                        join_path("spec", "capability", resource),
                        volcano_said(
                            VOLCANO_DESCENDANT_CAPABILITY.format(
                                queue=name,
                                resource=resource,
                                value=format_quantity(resource, own[resource]),
                                child=format_quantity(resource, amount),
                            ),
                            f"child queue {child!r} has more "
                            f"(raise it to at least {format_quantity(resource, amount)})",
                        ),
                    )
                )
    return problems


def share_problems(
    parent: Mapping[str, Any], members: Iterable[Mapping[str, Any]], *, volcano: str = VOLCANO_SIBLINGS_SUM
) -> list[Problem]:
    """Children's guarantees and deserved shares must fit in their parent's, resource by resource
    (``volcano``: Volcano's words as the queue written is a child, or the parent, of the others)."""
    problems: list[Problem] = []
    parent_name = queue_name(parent)
    members = list(members)
    for field in ("guarantee", "deserved"):
        summed = total(_resources(member, field) for member in members)
        limit = _resources(parent, field)
        for resource in summed.insufficient(limit):
            where = "guarantee.resource" if field == "guarantee" else field
            problems.append(
                Problem(
                    join_path("spec", where, resource),
                    volcano_said(
                        volcano.format(parent=parent_name, field=field),
                        f"children of queue {parent_name!r} would together have {field} "
                        f"{format_quantity(resource, summed[resource])} of {resource}, more than its "
                        f"{format_quantity(resource, limit.amount(resource))} (lower the children's "
                        f"{where}.{resource} or raise that of queue {parent_name!r})",
                    ),
                )
            )
    return problems


def annotation_problems(queue: Mapping[str, Any], queues: Queues) -> list[Problem]:
    """Volcano's annotation-based hierarchy: no queue may sit on a path below another queue's leaf path."""
    annotations = (queue.get("metadata") or {}).get("annotations") or {}
    hierarchy = annotations.get(constants.HIERARCHY_KEY)
    if not hierarchy:
        return []
    name = queue_name(queue)
    for other, body in sorted(queues.items()):
        theirs = ((body.get("metadata") or {}).get("annotations") or {}).get(constants.HIERARCHY_KEY, "")
        if other != name and theirs.startswith(hierarchy + "/"):
            return [
                Problem(
                    f"metadata.annotations[{constants.HIERARCHY_KEY}]",
                    volcano_said(
                        VOLCANO_HIERARCHY_SUB_PATH.format(hierarchy=hierarchy, theirs=theirs, queue=other),
                        "a queue must be a leaf of the hierarchy "
                        f"(extend the path, e.g. '{hierarchy}/{name}')",
                    ),
                )
            ]
    return []


def hierarchy_problems(queue: Mapping[str, Any], queues: Queues) -> list[Problem]:
    """Every rule above for ``queue`` (already valid on its own) written among ``queues`` (itself excluded or
    its previous version, which is ignored)."""
    name = queue_name(queue)
    if name == constants.ROOT_QUEUE:
        return []
    problems = annotation_problems(queue, queues) + parent_problems(queue, queues)
    if problems:
        return problems
    problems += capability_problems(queue, queues)
    parent = queue_parent(queue)
    if parent != constants.ROOT_QUEUE and parent in queues:
        siblings = [queues[s] for s in children(queues, parent) if s != name]
        problems += share_problems(queues[parent], [*siblings, queue])
    kids = [queues[child] for child in children(queues, name)]
    if kids:
        problems += share_problems(queue, kids, volcano=VOLCANO_CHILDREN_SUM)
    return problems


def offline_hierarchy_problems(
    written: Sequence[tuple[str, Mapping[str, Any]]],
) -> tuple[list[tuple[str, Mapping[str, Any], Problem]], list[tuple[str, Mapping[str, Any], str]]]:
    """The hierarchy rules across queues given as (source, queue) in file order, each checked against the
    queues before it, as ``kubectl apply`` creates them one by one: (problems, notes). A parent that comes
    later is a problem (the apply would fail); one not given at all is a note (it may exist on the cluster,
    and the rules that need it were not checked)."""
    problems: list[tuple[str, Mapping[str, Any], Problem]] = []
    notes: list[tuple[str, Mapping[str, Any], str]] = []
    names = {queue_name(queue) for _, queue in written}
    created: dict[str, Mapping[str, Any]] = {}
    for source, queue in written:
        name, parent = queue_name(queue), queue_parent(queue)
        if parent and parent != constants.ROOT_QUEUE and parent != name and parent not in created:
            if parent in names:
                problems.append(
                    (
                        source,
                        queue,
                        Problem(
                            "spec.parent",
                            f"parent queue {parent!r} comes after this queue in the files, so kubectl apply "
                            f"would create this one first and Volcano would refuse it (put {parent!r} first)",
                        ),
                    )
                )
            else:
                notes.append(
                    (
                        source,
                        queue,
                        f"parent queue {parent!r} is not among the valid queues given; its place in the "
                        "hierarchy was not checked (it must exist on the cluster)",
                    )
                )
        else:
            problems += [(source, queue, p) for p in hierarchy_problems(queue, created)]
        created[name] = queue
    return problems, notes
