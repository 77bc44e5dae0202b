"""Reads of a ``scheduling.volcano.sh/v1beta1`` PodGroup body (see ``api/scheduling``'s models).

``min_member_of`` (lenient), ``group_name_of`` and ``group_key_of`` (a pod's group) live in
``api/scheduling`` beside the model; these are the rest of the spec and status the scheduler and the
controllers read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api import constants
from volcano_py.api.bodies._fields import written_mapping
from volcano_py.api.objects import EMPTY as _EMPTY
from volcano_py.api.scheduling import PodGroupPhase

Obj = Mapping[str, Any]

_PENDING: Final = PodGroupPhase.PENDING.value


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def podgroup_queue(pg: Obj) -> str:
    """``spec.queue``; ``default`` when unset, as the CRD defaults it."""
    return str((pg.get("spec") or _EMPTY).get("queue") or constants.DEFAULT_QUEUE)


def podgroup_min_member(pg: Obj) -> int:
    """``spec.minMember``, 0 when unset (Go's zero); ``ValueError`` when it is not a count."""
    value = (pg.get("spec") or _EMPTY).get("minMember", 0)
    if not _count(value):
        raise ValueError(f"spec.minMember must be an integer >= 0, got {value!r}")
    return int(value)


def podgroup_min_task_member(pg: Obj) -> dict[str, int]:
    """``spec.minTaskMember``: task name -> pods of it the gang needs; ``ValueError`` on a non-count."""
    out = dict((pg.get("spec") or _EMPTY).get("minTaskMember") or {})
    for role, count in out.items():
        if not _count(count):
            raise ValueError(f"spec.minTaskMember[{role!r}] must be an integer >= 0, got {count!r}")
    return out


def podgroup_min_resources(pg: Obj) -> Mapping[str, Any] | None:
    """``spec.minResources`` as written (a ResourceList), None when unset or empty."""
    return (pg.get("spec") or _EMPTY).get("minResources") or None


def podgroup_priority_class(pg: Obj) -> str:
    return str((pg.get("spec") or _EMPTY).get("priorityClassName") or "")


def podgroup_network_topology(pg: Obj) -> Mapping[str, Any] | None:
    """``spec.networkTopology`` as written (``{"mode": ..., "highestTierAllowed": ...}``), None when unset."""
    found: Mapping[str, Any] | None = (pg.get("spec") or _EMPTY).get("networkTopology")
    return found


def podgroup_sub_group_policy(pg: Obj) -> Any:
    """``spec.subGroupPolicy`` as written: ``api.subgroups.parse_policies`` reads and checks it."""
    return (pg.get("spec") or _EMPTY).get("subGroupPolicy")


def podgroup_phase(pg: Obj) -> str:
    """``status.phase`` as written; '' before anything wrote one (a new PodGroup is Pending)."""
    return str((pg.get("status") or _EMPTY).get("phase") or "")


def podgroup_shown_phase(pg: Obj | None) -> str:
    """The phase readers see: ``status.phase``, Pending when unset (or when there is no PodGroup)."""
    return str(((pg or _EMPTY).get("status") or _EMPTY).get("phase") or PodGroupPhase.PENDING.value)


def podgroup_said(pg: Obj) -> tuple[str, int, int, int]:
    """What ``status`` says, read once: (the phase readers see, running, succeeded, failed)."""
    # No conversions: read for every job of every session, and the CRD holds these to a string and counts.
    status = pg.get("status") or _EMPTY
    get = status.get
    return (get("phase") or _PENDING, get("running") or 0, get("succeeded") or 0, get("failed") or 0)


def podgroup_conditions(pg: Obj) -> tuple[Mapping[str, Any], ...]:
    """``status.conditions`` as written; read each with ``condition_fields``."""
    return tuple((pg.get("status") or _EMPTY).get("conditions") or ())


def podgroup_written_status(pg: Obj | None) -> Mapping[str, Any] | None:
    """The whole ``status`` as last written (None when unset): what a status about to be written is compared
    with and merged into, never read field by field (those are the functions above)."""
    return None if pg is None else pg.get("status")


def with_podgroup_status(pg: Obj, status: Mapping[str, Any]) -> dict[str, Any]:
    """``pg`` with ``status`` in place of its own: the PodGroup as a status write will leave it."""
    return {**pg, "status": status}


def podgroup_spec(pg: Obj) -> Mapping[str, Any]:
    """The whole ``spec`` as written: for a copy kept in memory and the diff against the spec a Job wants,
    never read field by field (those are the functions above)."""
    return pg.get("spec") or _EMPTY


def podgroup_written_spec(pg: Obj) -> Mapping[str, Any] | None:
    """The spec as sent: None when absent or null, ``ValueError`` when it is no mapping (admission tells
    these apart; validation names the field)."""
    return written_mapping(pg, "spec")
