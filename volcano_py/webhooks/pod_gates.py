"""Pod mutation: the queue-allocation scheduling gate for pods that opt in (SchedulingGatesQueueAdmission).

A pod annotated ``scheduling.volcano.sh/queue-allocation-gate: "true"`` is created holding the gate of that
name, so it stays ``SchedulingGated`` until the scheduler finds room for it in its queue and removes the gate.
The gate is appended to the pod's own gates, never replacing one another webhook or the user set, and only
once however often the request is retried (as Volcano's ``patchSchedulingGates``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.features import FeatureGates
from volcano_py.api.objects import spec_of
from volcano_py.api.queue_gate import gate_names, opted_in
from volcano_py.webhooks.patch import PatchOp


def queue_allocation_gate(pod: Mapping[str, Any], features: FeatureGates) -> list[PatchOp]:
    """The JSON Patch that gives ``pod`` the queue-allocation gate at CREATE; none when the feature is off,
    the pod did not opt in, or it already holds the gate."""
    if not features.queue_admission_gates or not opted_in(pod):
        return []
    if constants.QUEUE_ALLOCATION_GATE_KEY in gate_names(pod):
        return []
    gate = {"name": constants.QUEUE_ALLOCATION_GATE_KEY}
    if spec_of(pod).get("schedulingGates") is None:
        return [PatchOp("add", "/spec/schedulingGates", [gate])]
    return [PatchOp("add", "/spec/schedulingGates/-", gate)]
