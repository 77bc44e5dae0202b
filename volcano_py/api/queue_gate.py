"""Volcano's queue-allocation scheduling gate (feature ``SchedulingGatesQueueAdmission``): a pod opts in with
the annotation ``scheduling.volcano.sh/queue-allocation-gate: "true"``; admission gives it the scheduling gate
of the same name, and the scheduler removes that gate once the pod's queue has room for it. Until then the
pod is held by the API server (``SchedulingGated``) rather than reported ``Unschedulable``, so a cluster
autoscaler does not add nodes for a pod that waits only for its queue.

The two readings of a pod both sides share are here, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .constants import QUEUE_ALLOCATION_GATE_KEY


def opted_in(pod: Mapping[str, Any]) -> bool:
    """The pod carries the opt-in annotation with the value ``"true"`` (any other value is no opt-in)."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return isinstance(annotations, Mapping) and annotations.get(QUEUE_ALLOCATION_GATE_KEY) == "true"


def gate_names(pod: Mapping[str, Any]) -> list[str]:
    gates = (pod.get("spec") or {}).get("schedulingGates") or ()
    return [str(gate.get("name")) for gate in gates if isinstance(gate, Mapping)]


def only_queue_gate(pod: Mapping[str, Any]) -> bool:
    """The pod's one scheduling gate is Volcano's queue-allocation gate: nothing else holds it."""
    return gate_names(pod) == [QUEUE_ALLOCATION_GATE_KEY]
