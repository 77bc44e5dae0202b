"""What a session decides and how it gets out: statements (the one way to change the session's state),
the decisions they leave (binds, evictions, gates lifted, conditions, explanations, why pods did not fit),
the plugins told of each allocation, and the binds handed over while the session still runs. A part of
``session.Session``, holding those decisions; ``closing`` turns them into the session's result.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, cast

from volcano_py.api.scheduling import PodGroupPhase

from . import combine
from . import extension as ext
from .decisions import Bind, Condition, Evict, Explanation, HandOver, PodGroupEvent, Ungate
from .explain import FitFailures
from .job import JobInfo
from .snapshot import Snapshot
from .statement import Statement
from .task import TaskInfo

if TYPE_CHECKING:
    from .session import Session

# Committed binds a session with a ``HandOver`` gathers before giving them over while it runs: a session
# placing a backlog of 50,000 pods runs for many seconds, and its first binds need not wait for its last.
HAND_OVER_BINDS = 100


class Outcomes:
    """The decisions of ``Session``, of which it is only ever a part: it hands itself to the statements it
    opens as that (``cast``)."""

    snapshot: Snapshot
    points: ext.Points
    now: str

    def _init_outcomes(self, hand_over: HandOver | None) -> None:
        self._statements: list[Statement] = []
        self.binds: list[Bind] = []
        # Binds are final once a top-level statement commits them (no later action takes one back), so they
        # may go out before the session ends: ``handed`` of ``binds`` have.
        self._hand_over = hand_over
        self.handed = 0
        self.evictions: list[Evict] = []
        self.ungates: dict[str, Ungate] = {}
        self.podgroup_events: list[PodGroupEvent] = []
        self.conditions: dict[str, Condition] = {}
        self._said: dict[tuple[str, str, str], Condition] = {}
        self.explanations: dict[str, Explanation] = {}
        self.fit_failures: dict[str, FitFailures] = {}

    # --- statements and the hand-over of binds --------------------------------------------------------------

    @contextmanager
    def statement(self) -> Iterator[Statement]:
        """``with ssn.statement() as stmt:``; left neither committed nor held, it is discarded."""
        stmt = Statement(cast("Session", self), parent=self._statements[-1] if self._statements else None)
        self._statements.append(stmt)
        try:
            yield stmt
        except BaseException:
            stmt.discard()
            raise
        finally:
            self._statements.pop()
        if stmt.open:
            stmt.discard()
        if not self._statements and len(self.binds) - self.handed >= HAND_OVER_BINDS:
            self.hand_over()

    def hand_over(self) -> None:
        """Give the binds committed since the last hand-over to the session's ``HandOver``, if it has one."""
        if self._hand_over is not None and len(self.binds) > self.handed:
            binds = tuple(self.binds[self.handed :])
            self.handed = len(self.binds)
            self._hand_over(binds)

    # --- decisions ------------------------------------------------------------------------------------------

    def on_allocate(self, task: TaskInfo) -> None:
        combine.broadcast(self.points.on_allocate, task)

    def on_deallocate(self, task: TaskInfo) -> None:
        combine.broadcast(self.points.on_deallocate, task)

    def admit_gated(self, task: TaskInfo) -> None:
        """Decide to remove ``task``'s queue-allocation gate (its queue took it); plugins hear of it once."""
        if task.uid in self.ungates:
            return
        self.ungates[task.uid] = Ungate(task.namespace, task.name, task.uid, task.job_id or "")
        combine.broadcast(self.points.on_gate_admitted, task)

    def set_phase(self, job: JobInfo, phase: PodGroupPhase) -> None:
        """Move the job to ``phase`` for the rest of the session (the PodGroup's status says it once
        written)."""
        job.phase = phase
        job.version += 1
        self.snapshot.touched.jobs.append(job)

    def touch(self, task: TaskInfo) -> None:
        """Note that ``task`` (its status, node or bind annotations) changed in this session."""
        self.snapshot.touched.tasks.append(task)

    def set_condition(self, job: JobInfo, type_: str, reason: str, message: str) -> None:
        # Conditions are immutable and stamped with the session's time: jobs told the same share one (gang
        # tells every ready job that it is Scheduled, each session).
        said = (type_, reason, message)
        condition = self._said.get(said)
        if condition is None:
            condition = self._said[said] = Condition(type_, "True", reason, message, self.now)
        self.conditions[job.uid] = condition

    def fit_failures_of(self, job: JobInfo) -> FitFailures:
        failures = self.fit_failures.get(job.uid)
        if failures is None:
            failures = self.fit_failures[job.uid] = FitFailures(len(job.tasks))
        return failures
