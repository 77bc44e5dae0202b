"""What the other scheduler's pods hold in each Queue, kept from the pods watch one change at a time.

The batch scheduler counts the agent scheduler's pods, and the agent scheduler the batch scheduler's
(``partners``: the scheduler names whose pods are counted). Each pod's charge is remembered, so a pod that
leaves (deleted, finished, bound elsewhere) gives back exactly what it took. The session adds these sums to
its queues' allocation (``QueueInfo.held_elsewhere``): capacity and proportion then keep a Queue within its
capability over both schedulers' pods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from volcano_py.api.bodies.pod import pod_scheduler_name
from volcano_py.api.objects import spec_of
from volcano_py.api.queue_charge import holds_room, queue_of_pod
from volcano_py.kube.kinds import PODS, ResourceKind
from volcano_py.kube.store import Delta, EventType
from volcano_py.resources import Resource, pod_request

Obj = Mapping[str, Any]


class QueueCharges:
    def __init__(self, partners: Iterable[str], podgroup_queue: Callable[[str], str | None]) -> None:
        self.partners = frozenset(partners)
        self.podgroup_queue = podgroup_queue
        self._charged: dict[str, tuple[str, Resource]] = {}
        # The partners' pods in the cluster, bound or not: none, and there is no one to take turns with.
        self._present: set[str] = set()
        self._sums: dict[str, Resource] = {}

    def observe(self, kind: ResourceKind, delta: Delta) -> None:
        """A watch change (a cache watcher): pods only."""
        if kind is not PODS:
            return
        pod = None if delta.type is EventType.DELETED else delta.new
        charge = None
        partner = pod is not None and pod_scheduler_name(pod) in self.partners
        if partner:
            self._present.add(delta.key)
        else:
            self._present.discard(delta.key)
        if pod is not None and partner and holds_room(pod):
            charge = (queue_of_pod(pod, self.podgroup_queue), pod_request(spec_of(pod)))
        before = self._charged.get(delta.key)
        if before == charge:
            return
        if before is not None:
            del self._charged[delta.key]
            self._sums[before[0]] = self._sums[before[0]] - before[1]
        if charge is not None:
            self._charged[delta.key] = charge
            self._sums[charge[0]] = self._sums.get(charge[0], Resource()) + charge[1]

    @property
    def partner_present(self) -> bool:
        return bool(self._present)

    def sums(self) -> dict[str, Resource]:
        """Queue -> what the partners' pods hold in it (queues holding nothing left out)."""
        return {queue: held for queue, held in self._sums.items() if held}
