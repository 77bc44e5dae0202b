"""When a running pod is expected to end: the runtime its owner declared (``api.runtimes``: the pod's
expected-runtime annotation, its ``spec.activeDeadlineSeconds``, its PodGroup's annotation), counted from the
pod's start (``status.startTime``), or the simulator's runtime model.

Otherwise a batch pod of ours is given the model's estimate: the runtimes of the simulator's Philly-shaped
model (``sim.workload.philly_durations``) that are longer than the pod has already run, less what it has run,
and their median taken. The longer a pod has run, the longer it is expected to go on (the tail is heavy); a
pod past the model's longest runtime is expected to run as long again. Pods of other schedulers and pods of
serving owners (ReplicaSet, StatefulSet, DaemonSet) are expected to hold their room past any horizon.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.bodies.pod import pod_scheduler_name, pod_start_time
from volcano_py.api.common import parse_time
from volcano_py.api.objects import creation_timestamp_of, owner_references_of
from volcano_py.api.runtimes import DeclarationError, declared_runtime
from volcano_py.sim.workload import philly_durations

Obj = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RuntimeModel:
    """Runtimes (seconds) jobs are drawn from when they declare none."""

    durations: tuple[float, ...] = tuple(philly_durations(None))

    def __post_init__(self) -> None:
        if not self.durations or min(self.durations) <= 0:
            raise ValueError("a runtime model needs at least one runtime, each > 0 seconds")

    def remaining(self, elapsed: float) -> float:
        """The median of what is left of the model's runtimes longer than ``elapsed``."""
        longer = [d - elapsed for d in self.durations if d > elapsed]
        return statistics.median(longer) if longer else max(elapsed, min(self.durations))


@dataclass(frozen=True, slots=True)
class Expected:
    """A pod's expected end (seconds since the epoch; None: not within any horizon), and whether it was
    declared (else modelled)."""

    end: float | None
    declared: bool


def started_at(pod: Obj, default: float) -> float:
    """When the pod started (``status.startTime``, else its creation), in seconds since the epoch."""
    for stamp in (pod_start_time(pod), creation_timestamp_of(pod)):
        if isinstance(stamp, str):
            try:
                return parse_time(stamp).timestamp()
            except ValueError:
                continue
    return default


def runs_to_completion(pod: Obj, scheduler_names: Sequence[str]) -> bool:
    """A batch pod of ours: one the model may give an end to."""
    if pod_scheduler_name(pod) not in scheduler_names:
        return False
    return not any(ref.get("kind") in c.SERVING_OWNER_KINDS for ref in owner_references_of(pod))


def expected_end(
    pod: Obj,
    podgroup: Obj | None,
    *,
    started: float,
    now: float,
    model: RuntimeModel,
    scheduler_names: Sequence[str],
    problems: list[str],
) -> Expected:
    """The pod's expected end, never before ``now`` (a pod past its declared runtime ends at once); an
    unreadable declaration is added to ``problems`` and the pod is modelled instead."""
    try:
        runtime = declared_runtime(pod, podgroup)
    except DeclarationError as err:
        problems.append(f"{err}; its runtime is modelled")
        runtime = None
    if runtime is not None:
        return Expected(max(started + runtime, now), declared=True)
    if not runs_to_completion(pod, scheduler_names):
        return Expected(None, declared=False)
    return Expected(now + model.remaining(max(0.0, now - started)), declared=False)
