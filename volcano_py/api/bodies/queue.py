"""Reads of a ``scheduling.volcano.sh/v1beta1`` Queue body (see ``api/scheduling``'s models).

A queue's name, parent and written state are read by ``queue_name``, ``queue_parent`` and ``written_state``
of ``api/queue_hierarchy`` (the tree's rules use them), imported here so one module answers for the kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from volcano_py.api.bodies._fields import int_at, mapping_at, written_mapping
from volcano_py.api.objects import EMPTY as _EMPTY
from volcano_py.api.queue_hierarchy import queue_name, queue_parent, written_state
from volcano_py.api.scheduling import DequeueStrategy, QueueState

__all__ = [
    "queue_affinity",
    "queue_allocated",
    "queue_capability",
    "queue_dequeue_strategy",
    "queue_deserved",
    "queue_guarantee",
    "queue_name",
    "queue_parent",
    "queue_priority",
    "queue_reclaimable",
    "queue_spec_parent",
    "queue_state",
    "queue_status_says",
    "queue_weight",
    "queue_written_status",
    "written_state",
]

Obj = Mapping[str, Any]


def queue_spec_parent(q: Obj) -> str:
    """``spec.parent`` as written, '' when unset (where ``queue_parent`` reads the tree's root)."""
    return str((q.get("spec") or _EMPTY).get("parent") or "")


def queue_weight(q: Obj) -> int:
    """``spec.weight``, 1 when unset (the CRD's default); ``ValueError`` unless an integer >= 1."""
    weight = (q.get("spec") or _EMPTY).get("weight", 1)
    if not isinstance(weight, int) or weight < 1:
        raise ValueError(f"spec.weight must be an integer >= 1, got {weight!r}")
    return weight


def queue_capability(q: Obj) -> Mapping[str, Any] | None:
    """``spec.capability`` as written (a ResourceList); None when unset or empty (unbounded)."""
    return (q.get("spec") or _EMPTY).get("capability") or None


def queue_deserved(q: Obj) -> Mapping[str, Any] | None:
    """``spec.deserved`` as written; None when unset or empty."""
    return (q.get("spec") or _EMPTY).get("deserved") or None


def queue_guarantee(q: Obj) -> Mapping[str, Any]:
    """``spec.guarantee.resource`` as written; empty when unset."""
    return ((q.get("spec") or _EMPTY).get("guarantee") or _EMPTY).get("resource") or _EMPTY


def queue_reclaimable(q: Obj) -> bool:
    """``spec.reclaimable``: only an explicit ``false`` keeps others from reclaiming (Volcano's reading)."""
    return (q.get("spec") or _EMPTY).get("reclaimable", True) is not False


def queue_priority(q: Obj) -> int:
    return int((q.get("spec") or _EMPTY).get("priority") or 0)


def queue_affinity(q: Obj) -> Mapping[str, Any]:
    """``spec.affinity`` (nodeGroupAffinity / nodeGroupAntiAffinity) as written; empty when unset."""
    return (q.get("spec") or _EMPTY).get("affinity") or _EMPTY


def queue_dequeue_strategy(q: Obj) -> DequeueStrategy:
    """``spec.dequeueStrategy``, ``traverse`` when unset; ``ValueError`` on one Volcano does not define."""
    strategy = (q.get("spec") or _EMPTY).get("dequeueStrategy") or DequeueStrategy.TRAVERSE.value
    if strategy not in DequeueStrategy.__members__.values():
        allowed = ", ".join(s.value for s in DequeueStrategy)
        raise ValueError(f"spec.dequeueStrategy must be one of {allowed}, got {strategy!r}")
    return DequeueStrategy(strategy)


def queue_state(q: Obj) -> str:
    """The state the scheduler takes a queue in: ``status.state``, Open before the controller wrote one."""
    return written_state(q) or QueueState.OPEN.value


def queue_allocated(q: Obj) -> Mapping[str, Any]:
    """``status.allocated`` as the scheduler last wrote it (a ResourceList); empty when unset."""
    return (q.get("status") or _EMPTY).get("allocated") or _EMPTY


def queue_status_says(q: Obj, wanted: Mapping[str, Any]) -> bool:
    """Whether ``status`` already holds each field of ``wanted`` (state, PodGroup counters) as given."""
    status = q.get("status") or _EMPTY
    return all(status.get(name) == value for name, value in wanted.items())


def queue_written_status(q: Obj) -> Mapping[str, Any] | None:
    """The whole ``status`` as last written (None when unset): what a status patch is computed against."""
    return q.get("status")


def queue_written_spec(q: Obj) -> Mapping[str, Any] | None:
    """The whole ``spec`` as sent: None when absent or null, ``ValueError`` when it is no mapping (admission
    tells these apart, and diffs an update's spec against the stored one)."""
    return written_mapping(q, "spec")


# The status's PodGroup counters (``QueueStatus``), by their wire names.
QueueCount = Literal["inqueue", "pending", "running", "unknown", "completed"]


def queue_podgroup_count(q: Obj, phase: QueueCount) -> int:
    """One of the status's counters of the queue's PodGroups by phase, 0 before the controller wrote it."""
    return int_at(mapping_at(q, "status"), phase)
