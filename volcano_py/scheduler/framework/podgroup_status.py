"""The PodGroup and Queue status bodies a session's decisions ask for, and whether a write would change what
a reader sees: pure, so the binder only decides when to send them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.bodies.conditions import condition_fields
from volcano_py.api.common import now_time
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import Resource

from .decisions import PodGroupUpdate
from .retell import PODS_MISSING, words


def _comparable_conditions(conditions: Any) -> list[tuple[str, str, str, str]]:
    # Transition times and ids change on every write; only the meaning decides whether to write.
    return sorted(condition_fields(x)[:4] for x in conditions or ())


def podgroup_status(update: PodGroupUpdate, current: Mapping[str, Any] | None) -> dict[str, Any]:
    """The status to write for ``update``, keeping the transition time of conditions that did not change."""
    kept: dict[tuple[str, str, str, str], str] = {}
    for cond in (current or {}).get("conditions") or ():
        kind, status, reason, message, since = condition_fields(cond)
        kept[(kind, status, reason, message)] = since
    now = now_time()
    conditions = []
    for cond in update.conditions:
        key = (cond.type, cond.status, cond.reason, cond.message)
        conditions.append(
            {
                "type": cond.type,
                "status": cond.status,
                "reason": cond.reason,
                "message": cond.message,
                "lastTransitionTime": kept.get(key) or cond.last_transition_time or now,
            }
        )
    return {
        "phase": update.phase.value,
        "conditions": conditions,
        "running": update.running,
        "succeeded": update.succeeded,
        "failed": update.failed,
    }


def _meaning(status: Mapping[str, Any] | None, *, numbers: bool) -> tuple[Any, ...]:
    """What a reader of a PodGroup status sees; without ``numbers``, condition messages' numbers masked."""
    status = status or {}
    conditions = _comparable_conditions(status.get("conditions"))
    if not numbers:
        conditions = [(t, s, r, words(m)) for t, s, r, m in conditions]
    counters = tuple(int(status.get(k) or 0) for k in ("running", "succeeded", "failed"))
    return (status.get("phase") or PodGroupPhase.PENDING, conditions, counters)


def same_podgroup_status(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    return _meaning(a, numbers=True) == _meaning(b, numbers=True)


def only_counts_differ(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """True when two PodGroup statuses differ at most in the numbers inside their condition messages."""
    return _meaning(a, numbers=False) == _meaning(b, numbers=False)


def forming(update: PodGroupUpdate) -> bool:
    """Whether the session says the gang waits for its pods (``retell.PODS_MISSING``)."""
    return any(
        cond.type == c.PODGROUP_CONDITION_UNSCHEDULABLE
        and cond.status == "True"
        and cond.reason in PODS_MISSING
        for cond in update.conditions
    )


def only_forming_news(status: Mapping[str, Any], current: Mapping[str, Any] | None) -> bool:
    """True when ``status`` says nothing ``current`` does not, apart from its Unschedulable condition."""

    def others(s: Mapping[str, Any] | None) -> dict[str, Any]:
        conditions = (s or {}).get("conditions") or ()
        kept = [x for x in conditions if x.get("type") != c.PODGROUP_CONDITION_UNSCHEDULABLE]
        return {**(s or {}), "conditions": kept}

    return same_podgroup_status(others(status), others(current))


def allocated_patch(
    allocated: Resource, current: Mapping[str, Any] | None, on_its_way: Resource | None = None
) -> dict[str, Any] | None:
    """The merge patch for ``status.allocated``, or None when it already says that: the Queue's ``current``
    status, or our write ``on_its_way`` when one is (it lands after what the cache shows). Resources that
    went away from either are set to null, which a merge patch needs to remove a key."""
    current_list = (current or {}).get("allocated") or {}
    try:
        unchanged = (Resource.parse(current_list) if on_its_way is None else on_its_way) == allocated
    except ValueError:
        unchanged = False
    if unchanged:
        return None
    body: dict[str, Any] = dict.fromkeys(current_list)
    if on_its_way is not None:
        body.update(dict.fromkeys(on_its_way.to_quantities()))
    body.update(allocated.to_quantities())
    return {"allocated": body}
