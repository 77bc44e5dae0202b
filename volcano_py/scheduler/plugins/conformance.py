"""conformance: kube-system pods and system-critical priority classes are never victims."""

from __future__ import annotations

from collections.abc import Sequence

from ..framework.arguments import Arguments
from ..framework.extension import EvictionKind
from ..framework.task import TaskInfo


class ConformancePlugin:
    name = "conformance"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()

    def _spare(self, tasks: Sequence[TaskInfo]) -> list[TaskInfo]:
        return [t for t in tasks if not t.system_critical]

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        return self._spare(preemptees)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        return self._spare(reclaimees)

    def gang_evictable(
        self, kind: EvictionKind, actor: TaskInfo, candidates: Sequence[TaskInfo]
    ) -> list[TaskInfo] | None:
        return self._spare(candidates)
