"""cdp (cooldown protection): a running pod is no preemption, reclaim or shuffle victim until it has run
for its ``volcano.sh/cooldown-time`` (pod label, else annotation; a Go duration such as "600s"), counted from
its ``PodScheduled`` condition. Pods without the key, or not yet Running, are offered as usual."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api import constants as k
from volcano_py.api.bodies.conditions import condition_is_true
from volcano_py.api.bodies.pod import pod_conditions
from volcano_py.api.common import parse_duration
from volcano_py.api.objects import annotations_of, labels_of, name_of
from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.log import get_logger

from ..framework.arguments import Arguments
from ..framework.session import Session
from ..framework.task import TaskInfo, timestamp

log = get_logger(__name__)


def cooling_until(pod: Mapping[str, Any]) -> float | None:
    """When the pod's cooldown ends (seconds since the epoch), or None when it has none running."""
    text = labels_of(pod).get(k.COOLDOWN_TIME_KEY)
    if text is None:
        text = annotations_of(pod).get(k.COOLDOWN_TIME_KEY)
    if text is None:
        return None
    try:
        cooldown = parse_duration(str(text))
    except ValueError:
        log.warning("cdp: unreadable cooldown time ignored", pod=name_of(pod), value=text)
        return None
    if pod_phase(pod) is not PodPhase.RUNNING:
        return None
    for condition in pod_conditions(pod):
        if condition_is_true(condition, "PodScheduled"):
            return timestamp(str(condition.get("lastTransitionTime") or "")) + cooldown.total_seconds()
    return None


class CdpPlugin:
    name = "cdp"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()
        self.now = 0.0

    def on_session_open(self, ssn: Session) -> None:
        self.now = timestamp(ssn.now)

    def _victims(self, candidates: Sequence[TaskInfo]) -> list[TaskInfo]:
        out = []
        for task in candidates:
            until = cooling_until(task.pod)
            if until is None or until <= self.now:
                out.append(task)
        return out

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        return self._victims(preemptees)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        return self._victims(reclaimees)

    def evictable(self, candidates: Sequence[TaskInfo]) -> list[TaskInfo]:
        return self._victims(candidates)
