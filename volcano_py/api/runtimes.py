"""How long a pod or a job says it will run once started: the runtime its owner declares.

One rule, read by the position-and-ETA forecast (when running pods end) and by the scheduler's FIFO
backfill (whether a job ends before a blocked head's estimated start). First found wins: the pod's
``volcano-py.io/expected-runtime`` annotation (a Go duration), its ``spec.activeDeadlineSeconds`` (the
kubelet ends it then), its PodGroup's annotation (a Volcano Job's annotations are copied onto its PodGroup).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import constants as c
from .common import parse_duration

Obj = Mapping[str, Any]


class DeclarationError(ValueError):
    """A declared runtime that cannot be read (the message names the object, the field and the fix)."""


def declared_runtime(pod: Obj, podgroup: Obj | None) -> float | None:
    """Seconds the pod is declared to run for, or None; raises ``DeclarationError`` for an unreadable one."""
    meta = pod.get("metadata") or {}
    text = (meta.get("annotations") or {}).get(c.EXPECTED_RUNTIME_KEY)
    if text is not None:
        return _duration(text, f"pod {meta.get('namespace', '')}/{meta.get('name', '')}")
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    if isinstance(deadline, int) and deadline > 0:
        return float(deadline)
    return podgroup_runtime(podgroup)


def podgroup_runtime(podgroup: Obj | None) -> float | None:
    """Seconds the PodGroup's annotation declares its pods run for, or None (``DeclarationError`` if
    unreadable)."""
    if podgroup is None:
        return None
    meta = podgroup.get("metadata") or {}
    text = (meta.get("annotations") or {}).get(c.EXPECTED_RUNTIME_KEY)
    if text is None:
        return None
    return _duration(text, f"PodGroup {meta.get('namespace', '')}/{meta.get('name', '')}")


def job_runtime(pods: Iterable[Obj], podgroup: Obj | None) -> float | None:
    """Seconds a job whose ``pods`` start together runs for: its longest pod's declared runtime; None when
    any pod declares none (its end is then not known). Without pods, the PodGroup's declaration."""
    runtimes = [declared_runtime(pod, podgroup) for pod in pods]
    if not runtimes:
        return podgroup_runtime(podgroup)
    if any(r is None for r in runtimes):
        return None
    return max(r for r in runtimes if r is not None)


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
