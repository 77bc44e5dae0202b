"""DRA devices in queue quota (the capacity plugin's ``capacity.DynamicResourceAllocationEnable``).

As Volcano counts them: a queue holds, per DeviceClass, the devices its pods' ResourceClaims ask for
(``ExactCount`` requests), as the resource ``deviceclass/<class>`` that its ``capability``, ``deserved`` and
``guarantee`` may name. A claim is counted once per queue however many of the queue's pods share it. The
capacity plugin adds these counts to a pod's request wherever it charges, releases or checks the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping

from volcano_py.resources import Resource

from ..framework.dra import Claim, claim_devices, pod_claims
from ..framework.task import TaskInfo


class DeviceQuota:
    """Which claims each queue holds (with how many of its pods use each), and the counts they add."""

    def __init__(self, claims: Mapping[str, Claim]) -> None:
        self.claims = claims
        self.refs: dict[tuple[str, str], int] = {}
        self._counts: dict[str, Resource] = {}

    def _claims_of(self, task: TaskInfo) -> list[str]:
        if not task.claims_used:
            return []
        keys = {ref.claim for ref in pod_claims(task.pod) if ref.claim and ref.claim in self.claims}
        return sorted(keys)

    def _count(self, key: str) -> Resource:
        counted = self._counts.get(key)
        if counted is None:
            counted = self._counts[key] = claim_devices(self.claims[key])
        return counted

    def request(self, queue: str, *tasks: TaskInfo) -> Resource:
        """The devices the pods would add to ``queue``: their claims it does not hold yet, each once."""
        keys = {key for task in tasks for key in self._claims_of(task)}
        out = Resource()
        for key in sorted(keys):
            if not self.refs.get((queue, key)):
                out = out + self._count(key)
        return out

    def add(self, queue: str, task: TaskInfo) -> Resource:
        """Count the pod's claims in ``queue``; what the queue holds more."""
        out = self.request(queue, task)
        for key in self._claims_of(task):
            self.refs[(queue, key)] = self.refs.get((queue, key), 0) + 1
        return out

    def remove(self, queue: str, task: TaskInfo) -> Resource:
        """Stop counting the pod's claims in ``queue``; what the queue holds less (claims no pod uses now)."""
        out = Resource()
        for key in self._claims_of(task):
            left = self.refs.get((queue, key), 0) - 1
            if left > 0:
                self.refs[(queue, key)] = left
                continue
            self.refs.pop((queue, key), None)
            if left == 0:
                out = out + self._count(key)
        return out
