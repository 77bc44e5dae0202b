"""A forecast as frozen values, and its wording (what ``vcctl job why``, ``vcctl queue get`` and the
dashboard print, and the JSON endpoint serves)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from volcano_py.api.common import format_time, human_duration


class Basis(StrEnum):
    """What an estimated start rests on."""

    NOW = "now"  # the next scheduling cycle places it: nothing has to end first
    DECLARED = "declared"  # only runtimes that running pods declare
    MODELLED = "modelled"  # at least one runtime from the model (a pod that declares none)
    UNKNOWN = "unknown"  # no start found within the forecast's bounds


@dataclass(frozen=True, slots=True)
class Bounds:
    """How far a forecast looks: simulated seconds ahead, sessions, wall seconds (the first reached stops
    it)."""

    horizon: float = 7 * 86400.0
    sessions: int = 200
    seconds: float = 10.0

    def __post_init__(self) -> None:
        if self.horizon <= 0:
            raise ValueError(f"forecast horizon must be > 0 seconds, got {self.horizon}")
        if self.sessions < 1:
            raise ValueError(f"forecast sessions must be >= 1, got {self.sessions}")
        if self.seconds <= 0:
            raise ValueError(f"forecast seconds must be > 0, got {self.seconds}")


# How far the scheduler looks for a blocked FIFO head's start (``head_shadow``), each cycle the head is
# blocked and the cluster has changed: a day ahead, at most 30 sessions (about ten moments at which running
# pods end); never by wall seconds, so a cluster always gives the same answer. Past either, the head's start
# is unknown and its queue is held strictly.
BACKFILL_BOUNDS = Bounds(horizon=86400.0, sessions=30)


@dataclass(frozen=True, slots=True)
class Eta:
    """One waiting job: its place in its queue (1 = taken first) and when it is expected to start."""

    job: str  # PodGroup key, namespace/name
    queue: str
    position: int
    waiting: int  # jobs waiting in the queue, this one included
    start: datetime | None
    basis: Basis
    why_unknown: str = ""
    shown: str = ""  # as a person names it: the Volcano Job owning the PodGroup, else the PodGroup

    @property
    def name(self) -> str:
        return self.shown or self.job

    def in_text(self, now: datetime) -> str:
        """``in 4m10s (2026-01-01T00:04:10Z)``, or why there is no estimate."""
        if self.start is None:
            return self.why_unknown
        if self.basis is Basis.NOW:
            return "now (the next scheduling cycle places it)"
        return f"in {human_duration(self.start.timestamp() - now.timestamp())} ({format_time(self.start)})"

    def lines(self, now: datetime) -> list[str]:
        """What ``vcctl job why`` prints for the job."""
        return [
            f"Position: {self.position} of {self.waiting} waiting in queue {self.queue}",
            f"Estimated start: {self.in_text(now)}",
            f"Basis: {BASIS_TEXT[self.basis]}",
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "job": self.name,
            "podgroup": self.job,
            "queue": self.queue,
            "position": self.position,
            "waiting": self.waiting,
            "start": format_time(self.start) if self.start is not None else None,
            "basis": self.basis.value,
            "note": self.why_unknown,
        }


BASIS_TEXT = {
    Basis.NOW: "the cluster as it is (nothing has to end first)",
    Basis.DECLARED: "runtimes the running pods declare (expected-runtime annotation, activeDeadlineSeconds)",
    Basis.MODELLED: "declared runtimes where given, the runtime model's estimate for pods that declare none",
    Basis.UNKNOWN: "none: no start found within the forecast's bounds",
}


@dataclass(frozen=True, slots=True)
class Forecast:
    now: datetime
    etas: dict[str, Eta]  # by PodGroup key
    sessions: int = 0
    seconds: float = 0.0
    simulated: float = 0.0  # seconds of cluster time simulated
    exhausted: bool = False  # stopped by its sessions or wall-seconds bound, not by the horizon
    problems: tuple[str, ...] = ()  # declared runtimes that could not be read

    def queue(self, name: str) -> list[Eta]:
        """The queue's waiting jobs, first to be taken first."""
        return sorted((e for e in self.etas.values() if e.queue == name), key=lambda e: e.position)

    def as_json(self) -> dict[str, Any]:
        return {
            "now": format_time(self.now),
            "sessions": self.sessions,
            "seconds": round(self.seconds, 3),
            "simulated_seconds": round(self.simulated, 1),
            "exhausted": self.exhausted,
            "problems": list(self.problems),
            "jobs": [e.as_json() for e in sorted(self.etas.values(), key=lambda e: (e.queue, e.position))],
        }


def job_section(forecast: Forecast, podgroup: str, source: str) -> str:
    """The forecast section of ``vcctl job why`` (and the dashboard's job page) for one PodGroup."""
    lines = [f"Position and estimated start (sessions of {source} run forward):"]
    eta = forecast.etas.get(podgroup)
    if eta is None:
        lines.append("  Not waiting: its gang holds minAvailable, or it has no PodGroup yet.")
    else:
        lines.extend(f"  {line}" for line in eta.lines(forecast.now))
    lines.extend(f"  {problem}" for problem in forecast.problems)
    return "\n".join(lines) + "\n"


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
