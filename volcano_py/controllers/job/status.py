"""A Job's status as the controller computes it: counted from pods, moved from phase to phase.

The status is the api model (``volcano_py.api.batch.JobStatus``), read and written through
``volcano_py.api.job_view``. Counters and ``taskStatusCount`` are always recomputed from the pods the
controller observes (and the ones it has just created or deleted), never incremented, so a lost event or a
restart cannot make them drift.
"""

from __future__ import annotations

from datetime import datetime

from volcano_py.api.batch import JobCondition, JobPhase, JobState, JobStatus, TaskState
from volcano_py.controllers.job.podview import FAILED, PENDING, RUNNING, SUCCEEDED, UNKNOWN, PodView


def task_phase(status: JobStatus, task: str, phase: str) -> int:
    """How many pods of ``task`` are in pod phase ``phase`` (Volcano's ``taskStatusCount[task].phase``)."""
    counts = status.task_status_count.get(task)
    return counts.phase.get(phase, 0) if counts else 0


class CountBuilder:
    """Accumulates pods into a status's counters (terminating pods count only as terminating)."""

    def __init__(self) -> None:
        self._by_phase: dict[str, int] = {PENDING: 0, RUNNING: 0, SUCCEEDED: 0, FAILED: 0, UNKNOWN: 0}
        self._terminating = 0
        self._tasks: dict[str, dict[str, int]] = {}

    def add(self, pod: PodView) -> None:
        if pod.deleting:
            self._terminating += 1
            return
        self.add_phase(pod.task, pod.phase)

    def add_phase(self, task: str, phase: str) -> None:
        self._by_phase[phase] = self._by_phase.get(phase, 0) + 1
        if task:
            per_task = self._tasks.setdefault(task, {})
            per_task[phase] = per_task.get(phase, 0) + 1

    def add_terminating(self, n: int = 1) -> None:
        self._terminating += n

    def apply(self, status: JobStatus) -> JobStatus:
        """``status`` with the counted pods as its counters."""
        return status.model_copy(
            update={
                "pending": self._by_phase[PENDING],
                "running": self._by_phase[RUNNING],
                "succeeded": self._by_phase[SUCCEEDED],
                "failed": self._by_phase[FAILED],
                "terminating": self._terminating,
                "unknown": self._by_phase[UNKNOWN],
                "task_status_count": {t: TaskState(phase=dict(p)) for t, p in sorted(self._tasks.items())},
            }
        )


def transition(
    status: JobStatus, phase: JobPhase, now: str | datetime, *, reason: str = "", message: str = ""
) -> JobStatus:
    """Move to ``phase`` at ``now``; Volcano keeps one condition per phase, the latest transition last."""
    at = now if isinstance(now, datetime) else datetime.fromisoformat(now.replace("Z", "+00:00"))
    state = JobState(phase=phase, reason=reason or None, message=message or None, last_transition_time=at)
    kept = [cond for cond in status.conditions if cond.status is not phase]
    condition = JobCondition(status=phase, last_transition_time=at)
    return status.model_copy(update={"state": state, "conditions": [*kept, condition]})
