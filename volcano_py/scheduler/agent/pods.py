"""What the agent scheduler reads of a pod and of a watch event: which pods wait for it, where a pod landed,
which events can help a pod no node could take. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.bodies.conditions import any_true
from volcano_py.api.bodies.pod import pod_scheduler_name
from volcano_py.api.objects import is_deleting, labels_of, spec_of, status_of
from volcano_py.api.podspec import PodPhase, pod_phase

Obj = Mapping[str, Any]

_DONE = (PodPhase.SUCCEEDED, PodPhase.FAILED)


def _spec(pod: Obj | None) -> Mapping[str, Any]:
    return spec_of(pod or {})


def node_of(pod: Obj | None) -> str:
    return str(_spec(pod).get("nodeName") or "")


def waits(pod: Obj | None, scheduler_name: str) -> bool:
    """A pod this scheduler must place: its ``schedulerName``, not bound, not being deleted, not finished,
    and not held by scheduling gates (the API server keeps a gated pod out of every scheduler's reach)."""
    if pod is None:
        return False
    spec = _spec(pod)
    if spec.get("schedulerName") != scheduler_name or spec.get("nodeName") or spec.get("schedulingGates"):
        return False
    if is_deleting(pod):
        return False
    return pod_phase(pod) not in _DONE


def priority_of(pod: Obj) -> int:
    value = _spec(pod).get("priority")
    return value if isinstance(value, int) else 0


def landed(old: Obj | None, new: Obj | None) -> str:
    """The node a pod was just bound to ("" when this change bound nothing)."""
    node = node_of(new)
    return node if node and not node_of(old) else ""


def frees_room(old: Obj | None, new: Obj | None) -> bool:
    """Whether a bound pod just let go of its node's room: deleted, marked for deletion, or finished."""
    if not node_of(old):
        return False
    if new is None:
        return True
    if is_deleting(new) and not is_deleting(old or {}):
        return True
    return pod_phase(new) in _DONE and pod_phase(old or {}) not in _DONE


def node_changed(old: Obj | None, new: Obj | None) -> bool:
    """Whether a node change can let a pod on that could not go there before: a new node, or one whose
    labels, taints, schedulability, allocatable or readiness moved. A heartbeat alone changes none."""
    if new is None:
        return False
    if old is None:
        return True
    if labels_of(old) != labels_of(new):
        return True
    if _spec(old).get("taints") != _spec(new).get("taints"):
        return True
    if _spec(old).get("unschedulable") != _spec(new).get("unschedulable"):
        return True
    old_status, new_status = status_of(old), status_of(new)
    if old_status.get("allocatable") != new_status.get("allocatable"):
        return True
    return _ready(old_status) != _ready(new_status)


def _ready(status: Mapping[str, Any]) -> bool:
    return any_true(status.get("conditions") or (), "Ready")


def hidden(pod: Obj) -> dict[str, Any]:
    """The pod as a worker's view shows a pending pod another worker takes (or that waits in the queue): a
    pod of no scheduler, which a session neither places nor charges to a node."""
    return {**pod, "spec": {**_spec(pod), "schedulerName": ""}}


def shown_as(scheduler_name: str, pod: dict[str, Any]) -> dict[str, Any]:
    """A pod as the sessions of the agent scheduler ``scheduler_name`` see it: each of its own ``hidden``
    (bound ones count on their nodes and, through the queue charges, in their Queues, rather than as a job
    each: a session costs what it places, not what this scheduler ever placed), any other as it is. An
    attempt shows those it places as they are (``SchedulerCache.snapshot(placing=...)``)."""
    return hidden(pod) if pod_scheduler_name(pod) == scheduler_name else pod
