"""Volcano's task statuses, and the status of a pod and a PodGroup as the scheduler reads them.

``PodGroupPhase`` is the api's (``volcano_py.api.scheduling``), re-read here from the raw body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.objects import is_deleting, spec_of
from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.api.scheduling import TaskStatus as TaskStatus  # the framework's readers import it from here

# Statuses that hold resources on a node and count towards a gang being ready.
ALLOCATED_STATUSES: Final = frozenset(
    {TaskStatus.ALLOCATED, TaskStatus.BINDING, TaskStatus.BOUND, TaskStatus.RUNNING}
)
# Statuses whose request is charged to the node's used resources (releasing pods still occupy it).
OCCUPYING_STATUSES: Final = ALLOCATED_STATUSES | {TaskStatus.RELEASING}
# Statuses a gang counts as valid members: everything that is not finished badly or lost.
VALID_STATUSES: Final = ALLOCATED_STATUSES | {TaskStatus.SUCCEEDED, TaskStatus.PIPELINED, TaskStatus.PENDING}


def is_ready_status(status: TaskStatus) -> bool:
    """A task that counts towards ``minAvailable`` being met (Volcano's ``ReadyTaskNum``)."""
    return status in ALLOCATED_STATUSES or status is TaskStatus.SUCCEEDED


_PHASES: Final = {p.value: p for p in PodGroupPhase}  # a dict lookup: read for every PodGroup, every cycle


def parse_podgroup_phase(value: object) -> PodGroupPhase:
    """A PodGroup's ``status.phase``; none yet means Pending, as a new PodGroup is."""
    if value is None or value == "":
        return PodGroupPhase.PENDING
    phase = _PHASES.get(value) if isinstance(value, str) else None
    if phase is not None:
        return phase
    allowed = ", ".join(p.value for p in PodGroupPhase)
    raise ValueError(f"PodGroup status.phase {value!r} is not one of {allowed}")


def task_status_of(pod: Mapping[str, Any]) -> TaskStatus:
    """The task status of a pod, as Volcano derives it from the pod's phase, node and deletion mark."""
    phase = pod_phase(pod)
    terminating = is_deleting(pod)
    if phase is PodPhase.RUNNING:
        return TaskStatus.RELEASING if terminating else TaskStatus.RUNNING
    if phase is PodPhase.PENDING:
        if terminating:
            return TaskStatus.RELEASING
        node = spec_of(pod).get("nodeName")
        return TaskStatus.BOUND if node else TaskStatus.PENDING
    if phase is PodPhase.SUCCEEDED:
        return TaskStatus.SUCCEEDED
    if phase is PodPhase.FAILED:
        return TaskStatus.FAILED
    return TaskStatus.UNKNOWN
