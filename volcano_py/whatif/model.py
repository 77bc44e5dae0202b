"""The answer to "what would make this job run", as frozen values, and its wording.

A ``WhatIf`` holds the suggestions the search proved (each one a set of changes that, applied together, let
a real session schedule the job now), in the order a person would try them: change a queue's limit, end a
few jobs, add nodes. ``text()`` is what ``vcctl job why`` and the dashboard both print.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from volcano_py.resources import GPU, Resource, format_quantity

Obj = dict[str, Any]


def _range_left(more_or_less: str, untried: int | None, proved: int) -> str:
    """What a proved answer adds when the budget stopped its bisection: it may not be the least."""
    if untried is None or untried >= proved:
        return ""
    return f" (or {more_or_less}, down to {untried}: the search stopped at its budget before it knew)"


@dataclass(frozen=True, slots=True)
class Budget:
    """Bounds on one search: wall seconds and what-if sessions, whichever runs out first."""

    seconds: float = 5.0
    sessions: int = 40

    def __post_init__(self) -> None:
        if self.seconds <= 0:
            raise ValueError(f"what-if budget seconds must be > 0, got {self.seconds}")
        if self.sessions < 1:
            raise ValueError(f"what-if budget sessions must be >= 1, got {self.sessions}")


def describe(resource: Resource, names: tuple[str, ...] = ()) -> str:
    """``8 nvidia.com/gpu, 32 cpu``: GPUs first, then the rest by name; only ``names`` when given."""
    keys = [n for n in resource if not names or n in names]
    keys.sort(key=lambda n: (n != GPU, n))
    parts = [f"{format_quantity(n, resource.amount(n))} {n}" for n in keys if resource.amount(n) > 0]
    return ", ".join(parts) or "nothing"


@dataclass(frozen=True, slots=True)
class RaiseCapability:
    """Raise queue ``queue``'s ``spec.capability`` by ``by`` (to ``to``); ``to`` None: remove the limit."""

    queue: str
    by: Resource
    to: Resource | None

    def text(self) -> str:
        if self.to is None:
            return f"remove queue {self.queue}'s capability"
        return f"raise queue {self.queue}'s capability by {describe(self.by)} (to {describe(self.to)})"


@dataclass(frozen=True, slots=True)
class RaiseWeight:
    """Raise queue ``queue``'s ``spec.weight`` (its share of the cluster under proportion) to ``to``."""

    queue: str
    was: int
    to: int
    # Set when the search's bound stopped the bisection: the lowest weight not yet ruled out (``to`` was
    # proved by a session; a weight from here up to it may also do).
    low_untried: int | None = None

    def text(self) -> str:
        said = f"raise queue {self.queue}'s weight from {self.was} to {self.to}"
        return said + _range_left("less", self.low_untried, self.to)


@dataclass(frozen=True, slots=True)
class OpenQueue:
    queue: str

    def text(self) -> str:
        return f"open queue {self.queue} (it is closed)"


@dataclass(frozen=True, slots=True)
class EndJobs:
    """End (delete or preempt) ``jobs``; they hold ``freed`` in ``domain`` (a HyperNode, a node, or the
    cluster)."""

    jobs: tuple[str, ...]  # PodGroup keys
    freed: Resource
    domain: str
    names: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()  # as a person names them (a Volcano Job rather than its PodGroup)

    def text(self) -> str:
        return (
            f"free {describe(self.freed, self.names)} on {self.domain} "
            f"by ending or preempting {', '.join(self.shown or self.jobs)}"
        )


@dataclass(frozen=True, slots=True)
class AddNodes:
    """Add ``count`` nodes shaped like ``like``."""

    count: int
    like: str
    # Set when the search's bound stopped the bisection: the fewest not yet ruled out (``count`` was proved
    # by a session; fewer, down to this, may also do).
    fewest_untried: int | None = None

    @property
    def fewest_known(self) -> bool:
        """Whether ``count`` is the fewest that works, as far as sessions tell."""
        return self.fewest_untried is None or self.fewest_untried >= self.count

    def text(self) -> str:
        noun = "node" if self.count == 1 else "nodes"
        return f"{self.count} more {noun} like {self.like}" + _range_left(
            "fewer", self.fewest_untried, self.count
        )


Change = RaiseCapability | RaiseWeight | OpenQueue | EndJobs | AddNodes


@dataclass(frozen=True, slots=True)
class Suggestion:
    """Changes that together let the job run now (proved by a session with all of them applied)."""

    changes: tuple[Change, ...]

    def text(self) -> str:
        if len(self.changes) == 1 and isinstance(self.changes[0], AddNodes) and self.changes[0].fewest_known:
            return f"nothing short of {self.changes[0].text()}"
        return " and ".join(c.text() for c in self.changes)


@dataclass(frozen=True, slots=True)
class WhatIf:
    job: str
    runs_now: bool = False
    suggestions: tuple[Suggestion, ...] = ()
    notes: tuple[str, ...] = ()
    sessions: int = 0
    seconds: float = 0.0
    exhausted: bool = False
    found: bool = True
    pending: bool = True

    def text(self) -> str:
        """The lines ``vcctl job why`` prints under "What would make it run"."""
        lines: list[str] = []
        if not self.found:
            lines.append(f"PodGroup {self.job} is not in the cluster")
        elif not self.pending:
            lines.append("Nothing: it is not waiting (its gang already holds minAvailable tasks)")
        elif self.runs_now:
            lines.append("Nothing: a session on the current state schedules it (the next cycle should)")
        elif self.suggestions:
            lines.extend(f"- {s.text()}" for s in self.suggestions)
        else:
            lines.append("No single change found that lets it run now")
        lines.extend(self.notes)
        if self.exhausted:
            lines.append(
                f"(search stopped at its budget: {self.sessions} what-if sessions, {self.seconds:.1f}s; "
                "options not yet tried may also work)"
            )
        return "\n".join(lines)
