"""When a running pod is expected to end: the runtime its owner declared, or the simulator's runtime model.

Declared, first found wins: the pod's ``volcano-py.io/expected-runtime`` annotation (a Go duration), its
``spec.activeDeadlineSeconds`` (the kubelet ends it then), its PodGroup's annotation (a Volcano Job's
annotations are copied onto its PodGroup). Both count from the pod's start (``status.startTime``).

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
from volcano_py.api.common import parse_duration, parse_time
from volcano_py.sim.workload import philly_durations

Obj = Mapping[str, Any]


class DeclarationError(ValueError):
    """A declared runtime that cannot be read (the message names the object, the field and the fix)."""


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


def declared_runtime(pod: Obj, podgroup: Obj | None) -> float | None:
    """Seconds the pod is declared to run for, or None; raises ``DeclarationError`` for an unreadable one."""
    meta = pod.get("metadata") or {}
    text = (meta.get("annotations") or {}).get(c.EXPECTED_RUNTIME_KEY)
    if text is not None:
        return _duration(text, f"pod {meta.get('namespace', '')}/{meta.get('name', '')}")
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    if isinstance(deadline, int) and deadline > 0:
        return float(deadline)
    if podgroup is not None:
        pg_meta = podgroup.get("metadata") or {}
        text = (pg_meta.get("annotations") or {}).get(c.EXPECTED_RUNTIME_KEY)
        if text is not None:
            return _duration(text, f"PodGroup {pg_meta.get('namespace', '')}/{pg_meta.get('name', '')}")
    return None


def _duration(text: Any, where: str) -> float:
    try:
        seconds = parse_duration(str(text)).total_seconds()
    except ValueError as err:
        raise DeclarationError(f"{where}: annotation {c.EXPECTED_RUNTIME_KEY}: {err}") from None
    if seconds <= 0:
        raise DeclarationError(
            f"{where}: annotation {c.EXPECTED_RUNTIME_KEY}: {text!r} is not > 0; write e.g. '45m'"
        )
    return seconds


def started_at(pod: Obj, default: float) -> float:
    """When the pod started (``status.startTime``, else its creation), in seconds since the epoch."""
    status, meta = pod.get("status") or {}, pod.get("metadata") or {}
    for stamp in (status.get("startTime"), meta.get("creationTimestamp")):
        if isinstance(stamp, str):
            try:
                return parse_time(stamp).timestamp()
            except ValueError:
                continue
    return default


def runs_to_completion(pod: Obj, scheduler_names: Sequence[str]) -> bool:
    """A batch pod of ours: one the model may give an end to."""
    if (pod.get("spec") or {}).get("schedulerName") not in scheduler_names:
        return False
    owners = (pod.get("metadata") or {}).get("ownerReferences") or ()
    return not any(ref.get("kind") in c.SERVING_OWNER_KINDS for ref in owners)


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
