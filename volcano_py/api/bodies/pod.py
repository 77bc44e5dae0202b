"""Reads of a core/v1 Pod body, the fields the scheduler and the controllers read most; the phase is
``api/podspec.pod_phase``, imported here so one module answers for the kind. On a path run per pod per
cycle, a caller may read ``spec_of(pod)`` once and its fields from that instead (one call, not one per field).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import Any

from volcano_py.api.objects import EMPTY as _EMPTY
from volcano_py.api.podspec import PodPhase, pod_phase

__all__ = [
    "PodPhase",
    "drop_status_fields",
    "pod_claim_statuses",
    "pod_conditions",
    "pod_containers",
    "pod_node_name",
    "pod_nominated_node",
    "pod_phase",
    "pod_preemption_policy",
    "pod_priority_class",
    "pod_resource_claims",
    "pod_scheduler_name",
    "pod_start_time",
    "with_node_name",
]

Obj = Mapping[str, Any]


def pod_node_name(pod: Obj) -> str:
    """``spec.nodeName``: the node it is bound to, '' while it is not."""
    return str((pod.get("spec") or _EMPTY).get("nodeName") or "")


def pod_scheduler_name(pod: Obj) -> str:
    """``spec.schedulerName`` as written; '' when unset (the API server writes ``default-scheduler``)."""
    return str((pod.get("spec") or _EMPTY).get("schedulerName") or "")


def pod_containers(pod: Obj) -> Sequence[Mapping[str, Any]]:
    return (pod.get("spec") or _EMPTY).get("containers") or ()


def pod_priority_class(pod: Obj) -> str:
    return str((pod.get("spec") or _EMPTY).get("priorityClassName") or "")


def pod_preemption_policy(pod: Obj) -> str:
    """``spec.preemptionPolicy``; '' when unset (``PreemptLowerPriority``)."""
    return str((pod.get("spec") or _EMPTY).get("preemptionPolicy") or "")


def pod_resource_claims(pod: Obj) -> Sequence[Mapping[str, Any]]:
    """``spec.resourceClaims``: each a ``name``, and a ``resourceClaimName`` or a template's name."""
    return (pod.get("spec") or _EMPTY).get("resourceClaims") or ()


def pod_claim_statuses(pod: Obj) -> dict[str, str | None]:
    """``status.resourceClaimStatuses``: the pod's claim entry -> the claim made for it from its template
    (None: the controller decided none is needed)."""
    return {
        s.get("name"): s.get("resourceClaimName")
        for s in (pod.get("status") or _EMPTY).get("resourceClaimStatuses") or ()
    }


def pod_nominated_node(pod: Obj) -> str:
    """``status.nominatedNodeName``: the node a preemption made room on, '' when none."""
    return str((pod.get("status") or _EMPTY).get("nominatedNodeName") or "")


def pod_start_time(pod: Obj) -> str:
    """``status.startTime``; '' before the kubelet started it."""
    return str((pod.get("status") or _EMPTY).get("startTime") or "")


def pod_conditions(pod: Obj) -> Sequence[Mapping[str, Any]]:
    return (pod.get("status") or _EMPTY).get("conditions") or ()


def drop_status_fields(pod: MutableMapping[str, Any], names: Iterable[str]) -> None:
    """Drop ``names`` from the pod's status, in place: parts of the kubelet's report a reader never needs."""
    status = pod.get("status")
    if status:
        for name in names:
            status.pop(name, None)


def with_node_name(pod: Obj, node: str) -> dict[str, Any]:
    """``pod`` as a bind to ``node`` leaves it."""
    return {**pod, "spec": {**(pod.get("spec") or _EMPTY), "nodeName": node}}


def with_pod_phase(pod: Obj, phase: str) -> dict[str, Any]:
    """``pod`` with ``status.phase`` set to ``phase``, the rest of its status as it is."""
    return {**pod, "status": {**(pod.get("status") or _EMPTY), "phase": phase}}
