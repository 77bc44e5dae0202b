"""Reads of a ``scheduling.volcano.sh/v1beta1`` PodGroup body (see ``api/scheduling``'s models).

``min_member_of`` (lenient), ``group_name_of`` and ``group_key_of`` (a pod's group) live in
``api/scheduling`` beside the model; these are the rest of the spec and status the scheduler and the
controllers read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api import constants
from volcano_py.api.objects import spec_of, status_of
from volcano_py.api.scheduling import PodGroupPhase

Obj = Mapping[str, Any]

_EMPTY: Final[Mapping[str, Any]] = {}


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def podgroup_queue(pg: Obj) -> str:
    """``spec.queue``; ``default`` when unset, as the CRD defaults it."""
    return str(spec_of(pg).get("queue") or constants.DEFAULT_QUEUE)


def podgroup_min_member(pg: Obj) -> int:
    """``spec.minMember``, 0 when unset (Go's zero); ``ValueError`` when it is not a count."""
    value = spec_of(pg).get("minMember", 0)
    if not _count(value):
        raise ValueError(f"spec.minMember must be an integer >= 0, got {value!r}")
    return int(value)


def podgroup_min_task_member(pg: Obj) -> dict[str, int]:
    """``spec.minTaskMember``: task name -> pods of it the gang needs; ``ValueError`` on a non-count."""
    out = dict(spec_of(pg).get("minTaskMember") or {})
    for role, count in out.items():
        if not _count(count):
            raise ValueError(f"spec.minTaskMember[{role!r}] must be an integer >= 0, got {count!r}")
    return out


def podgroup_min_resources(pg: Obj) -> Mapping[str, Any] | None:
    """``spec.minResources`` as written (a ResourceList), None when unset or empty."""
    return spec_of(pg).get("minResources") or None


def podgroup_priority_class(pg: Obj) -> str:
    return str(spec_of(pg).get("priorityClassName") or "")


def podgroup_network_topology(pg: Obj) -> Mapping[str, Any] | None:
    """``spec.networkTopology`` as written (``{"mode": ..., "highestTierAllowed": ...}``), None when unset."""
    found: Mapping[str, Any] | None = spec_of(pg).get("networkTopology")
    return found


def podgroup_sub_group_policy(pg: Obj) -> Any:
    """``spec.subGroupPolicy`` as written: ``api.subgroups.parse_policies`` reads and checks it."""
    return spec_of(pg).get("subGroupPolicy")


def podgroup_phase(pg: Obj) -> str:
    """``status.phase`` as written; '' before anything wrote one (a new PodGroup is Pending)."""
    return str(status_of(pg).get("phase") or "")


def podgroup_shown_phase(pg: Obj | None) -> str:
    """The phase readers see: ``status.phase``, Pending when unset (or when there is no PodGroup)."""
    return str(status_of(pg or _EMPTY).get("phase") or PodGroupPhase.PENDING.value)


def podgroup_counts(pg: Obj) -> tuple[int, int, int]:
    """``status`` (running, succeeded, failed), 0 when unset."""
    status = status_of(pg)
    return int(status.get("running") or 0), int(status.get("succeeded") or 0), int(status.get("failed") or 0)


def podgroup_conditions(pg: Obj) -> tuple[Mapping[str, Any], ...]:
    """``status.conditions`` as written; read each with ``condition_fields``."""
    return tuple(status_of(pg).get("conditions") or ())


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
    return spec_of(pg)
