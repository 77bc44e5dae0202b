"""What one batch cycle's outcome turns into once it is decided: Warning Events for the pods and PodGroups
that wait, and Volcano's scheduling metrics.

A session explains every waiting pod anew each cycle, so the telling remembers what it already said: an
object gets one Event per reason, not one per cycle (``_Once``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.kube.events import WARNING, EventRecorder
from volcano_py.kube.kinds import object_identity
from volcano_py.scheduler.framework.retell import RETELL_SECONDS, words
from volcano_py.scheduler.runtime.cycle import CycleOutcome
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics


class _Once:
    """Remembers what was already said about an object, so a waiting pod gets one Event per reason.

    A message that differs from the one told only in its numbers is told again at most once per
    ``retell_seconds``, and a warning with ``after`` waits that long before it is told first (see
    ``retell``); a message with other words is told at once.
    """

    def __init__(self, retell_seconds: float = RETELL_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.retell_seconds = retell_seconds
        self.clock = clock
        self._said: dict[tuple[str, str], tuple[str, str, float]] = {}
        self._since: dict[tuple[str, str], float] = {}  # first warned, for those not told yet

    def first(self, obj: Mapping[str, Any], reason: str, message: str, after: float = 0.0) -> bool:
        key = (object_identity(obj), reason)
        told = self._said.get(key)
        if told is not None and told[0] == message:
            return False
        shape, now = words(message), self.clock()
        if told is not None and told[1] == shape and now - told[2] < self.retell_seconds:
            return False
        if told is None and after > 0 and now - self._since.setdefault(key, now) < after:
            return False
        self._said[key] = (message, shape, now)
        self._since.pop(key, None)
        return True

    def keep_only(self, keys: set[tuple[str, str]]) -> None:
        self._said = {k: v for k, v in self._said.items() if k in keys}
        self._since = {k: v for k, v in self._since.items() if k in keys}


class CycleReport:
    """Tells each cycle's outcome through ``recorder`` and ``metrics``; holds what the last one said."""

    def __init__(self, metrics: SchedulerMetrics, recorder: EventRecorder) -> None:
        self.metrics = metrics
        self.recorder = recorder
        self.said = _Once()
        self._unschedulable_jobs: set[str] = set()

    def record(self, outcome: CycleOutcome) -> None:
        self._time(outcome)
        if not outcome.quiet:
            # A recalled outcome has nothing new to tell, and must not reset what waits to be told.
            said: set[tuple[str, str]] = set()
            for warning in outcome.warnings:
                said.add((object_identity(warning.obj), warning.reason))
                if self.said.first(warning.obj, warning.reason, warning.message, warning.after):
                    self.recorder.record(dict(warning.obj), WARNING, warning.reason, warning.message)
            self.said.keep_only(said)  # a pod that recovers and fails again is told again
        self._count(outcome)

    def _time(self, outcome: CycleOutcome) -> None:
        for name, seconds in outcome.result.timings.items():
            # The core times plugin set-up and tear-down as a whole ("open"/"close") and each action by name.
            if name in ("open", "close"):
                point = "OnSessionOpen" if name == "open" else "OnSessionClose"
                self.metrics.plugin_scheduling_latency.labels("all", point).observe(seconds * 1000)
            elif name.startswith("plugin:"):
                _, plugin, point = [*name.split(":", 2), "OnSessionOpen"][:3]
                self.metrics.plugin_scheduling_latency.labels(plugin, point).observe(seconds * 1000)
            else:
                self.metrics.action_scheduling_latency.labels(name).observe(seconds * 1000)

    def _count(self, outcome: CycleOutcome) -> None:
        jobs = set(outcome.unscheduled_tasks)
        for job in self._unschedulable_jobs - jobs:
            self.metrics.unschedule_task_count.remove(job)
        for job, count in outcome.unscheduled_tasks.items():
            self.metrics.unschedule_task_count.labels(job).set(count)
        self._unschedulable_jobs = jobs
        self.metrics.unschedule_job_count.set(len(jobs))
        if outcome.result.binds:
            self.metrics.schedule_attempts.labels("scheduled").inc(len(outcome.result.binds))
        # Volcano counts one preemption attempt per preemptor and reports the victims of the last session.
        preemptions = [e for e in outcome.result.evictions if e.preemptor]
        self.metrics.preemption_victims.set(len(preemptions))
        preemptors = {e.preemptor for e in preemptions}
        if preemptors:
            self.metrics.preemption_attempts.inc(len(preemptors))
        unscheduled = sum(outcome.unscheduled_tasks.values())
        if unscheduled and not outcome.quiet:  # no attempt was made
            self.metrics.schedule_attempts.labels("unschedulable").inc(unscheduled)
