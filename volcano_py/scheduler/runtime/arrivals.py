"""Which pod events bring a cycle something new to place: the pacing's signal (see ``pacing``).

A pending pod of ours *arrives* when it is new, when its scheduling gates were just removed, or when it just
joined a PodGroup (Volcano's PodGroup controller names the group of a plain pod after the pod exists). It
arrives *whole* when its gang's PodGroup exists with as many of our pods as its ``minMember``: a cycle can
place that gang at once, so a burst need not be waited out. The pods per PodGroup are counted here from the
pods watch, one change at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from volcano_py.api.objects import spec_of
from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.api.scheduling import group_key_of, min_member_of
from volcano_py.kube.store import Delta, EventType, Obj

_OVER = (PodPhase.SUCCEEDED, PodPhase.FAILED)


class Arrival(Enum):
    NONE = "none"  # nothing a cycle could place now that it could not before
    SHORT = "short"  # a pod a cycle may place, of a gang still short of pods (or of its PodGroup)
    WHOLE = "whole"  # a pod that makes its gang whole


def _unbound(pod: Obj) -> bool:
    """Not on a node yet and not over: waiting for a scheduler."""
    return not spec_of(pod).get("nodeName") and pod_phase(pod) not in _OVER


class Arrivals:
    """Tells each pod event's ``Arrival``; ``podgroup`` looks a PodGroup up by key in the mirror."""

    def __init__(self, scheduler_names: frozenset[str], podgroup: Callable[[str], Obj | None]) -> None:
        self.scheduler_names = scheduler_names
        self._podgroup = podgroup
        # Pods of ours per PodGroup key (``namespace/name``).
        self._group_pods: dict[str, int] = {}

    def seen(self, delta: Delta) -> Arrival:
        group, joined = self._count_group(delta)
        if delta.new is None or not (self._newly_schedulable(delta) or (joined and _unbound(delta.new))):
            return Arrival.NONE
        return Arrival.WHOLE if group is not None and self._whole(group) else Arrival.SHORT

    def _group_of(self, pod: Obj | None) -> str | None:
        if pod is None or spec_of(pod).get("schedulerName") not in self.scheduler_names:
            return None
        return group_key_of(pod)

    def _count_group(self, delta: Delta) -> tuple[str | None, bool]:
        """Keep the per-PodGroup pod counts; returns the pod's group now and whether it just joined it."""
        gone = delta.type is EventType.DELETED
        before, after = self._group_of(delta.old), None if gone else self._group_of(delta.new)
        if before == after:
            return after, False
        counts = self._group_pods
        if before is not None:
            left = counts.get(before, 0) - 1
            if left > 0:
                counts[before] = left
            else:
                counts.pop(before, None)
        if after is not None:
            counts[after] = counts.get(after, 0) + 1
        return after, after is not None

    def _whole(self, group: str) -> bool:
        """Whether the gang's PodGroup exists and has as many pods as its minMember: a cycle can place it."""
        podgroup = self._podgroup(group)
        return podgroup is not None and self._group_pods.get(group, 0) >= min_member_of(podgroup)

    def _newly_schedulable(self, delta: Delta) -> bool:
        """A pending pod of ours that a cycle may place now: a new one, or one whose scheduling gates were
        just removed (its gang may be whole at last)."""
        spec = spec_of(delta.new or {})
        if spec.get("nodeName") or spec.get("schedulerName") not in self.scheduler_names:
            return False
        if delta.type is EventType.ADDED:
            return True
        old = spec_of(delta.old or {})
        return (
            delta.type is EventType.MODIFIED
            and bool(old.get("schedulingGates"))
            and not spec.get("schedulingGates")
        )
