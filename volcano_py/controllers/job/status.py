"""A Job's status: read from the body, counted from pods, and written back in Volcano's shape.

Counters and ``taskStatusCount`` are always recomputed from the pods the controller observes (and the ones it
has just created or deleted), never incremented, so a lost event or a restart cannot make them drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from volcano_py.api.batch import JobPhase
from volcano_py.controllers.job.podview import FAILED, PENDING, RUNNING, SUCCEEDED, UNKNOWN, PodView


@dataclass(frozen=True, slots=True)
class Counts:
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    unknown: int = 0
    # task name -> pod phase -> count, as Volcano's ``taskStatusCount[task].phase``
    tasks: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def task_phase(self, task: str, phase: str) -> int:
        return self.tasks.get(task, {}).get(phase, 0)


@dataclass(frozen=True, slots=True)
class JobStatus:
    phase: JobPhase | None = None
    reason: str = ""
    message: str = ""
    last_transition: str = ""
    version: int = 0
    retry_count: int = 0
    min_available: int = 0
    counts: Counts = field(default_factory=Counts)
    conditions: tuple[tuple[str, str], ...] = ()  # (phase, lastTransitionTime), one per phase, newest last
    controlled_resources: Mapping[str, str] = field(default_factory=dict)


def read_status(body: Mapping[str, Any]) -> JobStatus:
    raw = body.get("status") or {}
    state = raw.get("state") or {}
    phase_raw = state.get("phase")
    phase = JobPhase(str(phase_raw)) if phase_raw in JobPhase._value2member_map_ else None
    tasks = {
        name: dict((ts or {}).get("phase") or {}) for name, ts in (raw.get("taskStatusCount") or {}).items()
    }
    return JobStatus(
        phase=phase,
        reason=str(state.get("reason") or ""),
        message=str(state.get("message") or ""),
        last_transition=str(state.get("lastTransitionTime") or ""),
        version=int(raw.get("version") or 0),
        retry_count=int(raw.get("retryCount") or 0),
        min_available=int(raw.get("minAvailable") or 0),
        counts=Counts(
            pending=int(raw.get("pending") or 0),
            running=int(raw.get("running") or 0),
            succeeded=int(raw.get("succeeded") or 0),
            failed=int(raw.get("failed") or 0),
            terminating=int(raw.get("terminating") or 0),
            unknown=int(raw.get("unknown") or 0),
            tasks=tasks,
        ),
        conditions=tuple(
            (str(cond.get("status")), str(cond.get("lastTransitionTime") or ""))
            for cond in raw.get("conditions") or ()
        ),
        controlled_resources=dict(raw.get("controlledResources") or {}),
    )


class CountBuilder:
    """Accumulates pods into :class:`Counts` (terminating pods count only as terminating)."""

    def __init__(self) -> None:
        self._by_phase = {PENDING: 0, RUNNING: 0, SUCCEEDED: 0, FAILED: 0, UNKNOWN: 0}
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

    def build(self) -> Counts:
        return Counts(
            pending=self._by_phase[PENDING],
            running=self._by_phase[RUNNING],
            succeeded=self._by_phase[SUCCEEDED],
            failed=self._by_phase[FAILED],
            terminating=self._terminating,
            unknown=self._by_phase[UNKNOWN],
            tasks={t: dict(p) for t, p in sorted(self._tasks.items())},
        )


def transition(
    status: JobStatus, phase: JobPhase, now: str, *, reason: str = "", message: str = ""
) -> JobStatus:
    """Move to ``phase`` at ``now``; Volcano keeps one condition per phase, the latest transition last."""
    conditions = (*tuple(cond for cond in status.conditions if cond[0] != phase.value), (phase.value, now))
    return replace(
        status, phase=phase, last_transition=now, conditions=conditions, reason=reason, message=message
    )


def status_to_dict(status: JobStatus) -> dict[str, Any]:
    counts = status.counts
    out: dict[str, Any] = {
        "state": {
            "phase": status.phase.value if status.phase else None,
            "reason": status.reason or None,
            "message": status.message or None,
            "lastTransitionTime": status.last_transition or None,
        },
        "minAvailable": status.min_available,
        "pending": counts.pending,
        "running": counts.running,
        "succeeded": counts.succeeded,
        "failed": counts.failed,
        "terminating": counts.terminating,
        "unknown": counts.unknown,
        "version": status.version,
        "retryCount": status.retry_count,
        "taskStatusCount": {task: {"phase": dict(phases)} for task, phases in counts.tasks.items()},
        "conditions": [{"status": phase, "lastTransitionTime": ts} for phase, ts in status.conditions],
    }
    if status.controlled_resources:
        out["controlledResources"] = dict(status.controlled_resources)
    return out
