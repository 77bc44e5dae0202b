"""Volcano's task-topology annotations on a Job (copied to its PodGroup): which of its tasks want to share a
node, which want to be apart, and in which order the tasks are placed.

``volcano.sh/task-topology-affinity: "ps,worker;chief"`` holds groups separated by ``;``, task names by
``,``. A group of two or more names makes those tasks affine to each other; a group of exactly one name makes
that task's pods affine to each other. ``-anti-affinity`` has the same grammar; ``-task-order`` is one list.
Empty names (``"ps,,worker;"``) are kept where they fall but name no task, as in Volcano.

Volcano's admission does not look at these annotations. Its scheduler checks them against the job's tasks
(the ``volcano.sh/task-spec`` of its pods) each session and, when one names a task the job does not have or
names a task twice in one group, ignores all three for that job and places it as if it had none. The
scheduler, ``vcctl job why`` and the dashboard read them through this one rule.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from volcano_py.api import constants as c

KEYS = (c.TASK_TOPOLOGY_AFFINITY_KEY, c.TASK_TOPOLOGY_ANTI_AFFINITY_KEY, c.TASK_TOPOLOGY_TASK_ORDER_KEY)


class TaskTopologyError(ValueError):
    """An annotation that names a task the job lacks, or a task twice in one group; ``key`` says which."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


@dataclass(frozen=True, slots=True)
class TaskTopology:
    """The three annotations, split: groups of task names (empty names kept, as written)."""

    affinity: tuple[tuple[str, ...], ...] = ()
    anti_affinity: tuple[tuple[str, ...], ...] = ()
    task_order: tuple[str, ...] = ()


def _groups(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(group.split(",")) for group in text.split(";"))


def _check(key: str, groups: tuple[tuple[str, ...], ...], tasks: Collection[str]) -> None:
    known = ", ".join(sorted(t for t in tasks if t)) or "none"
    for group in groups:
        seen: set[str] = set()
        for name in group:
            if not name:
                continue
            if name not in tasks:
                raise TaskTopologyError(
                    key, f"task {name!r} is not a task of this job (its tasks: {known}); name one of them"
                )
            if name in seen:
                raise TaskTopologyError(
                    key, f"task {name!r} appears twice in the group {','.join(group)!r}; name it once"
                )
            seen.add(name)


def has_task_topology(annotations: Mapping[str, str]) -> bool:
    return any(key in annotations for key in KEYS)


def task_topology_of(annotations: Mapping[str, str], tasks: Collection[str]) -> TaskTopology | None:
    """The job's task topology from its (PodGroup's) annotations, checked against its task names; None when
    it has none of the three. Raises ``TaskTopologyError`` naming the first bad annotation."""
    if not has_task_topology(annotations):
        return None
    affinity: tuple[tuple[str, ...], ...] = ()
    anti: tuple[tuple[str, ...], ...] = ()
    order: tuple[str, ...] = ()
    if c.TASK_TOPOLOGY_AFFINITY_KEY in annotations:
        affinity = _groups(annotations[c.TASK_TOPOLOGY_AFFINITY_KEY])
        _check(c.TASK_TOPOLOGY_AFFINITY_KEY, affinity, tasks)
    if c.TASK_TOPOLOGY_ANTI_AFFINITY_KEY in annotations:
        anti = _groups(annotations[c.TASK_TOPOLOGY_ANTI_AFFINITY_KEY])
        _check(c.TASK_TOPOLOGY_ANTI_AFFINITY_KEY, anti, tasks)
    if c.TASK_TOPOLOGY_TASK_ORDER_KEY in annotations:
        order = tuple(annotations[c.TASK_TOPOLOGY_TASK_ORDER_KEY].split(","))
        _check(c.TASK_TOPOLOGY_TASK_ORDER_KEY, (order,), tasks)
    return TaskTopology(affinity, anti, order)


def ignored_because(annotations: Mapping[str, str], tasks: Collection[str]) -> str | None:
    """Why the scheduler places the job as if it had no task topology, in words; None when it keeps it."""
    try:
        task_topology_of(annotations, tasks)
    except TaskTopologyError as err:
        return (
            f"task-topology annotations ignored ({err}); the job is placed as if it had none, as Volcano "
            "does: fix the annotation and the next session follows it"
        )
    return None
