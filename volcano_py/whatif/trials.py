"""One what-if trial: a real scheduling session over changed copies of the cluster's objects, within the
search's budget of sessions and seconds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from volcano_py.api.bodies.podgroup import podgroup_phase
from volcano_py.api.objects import name_of, namespace_of
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.scheduler.core import (
    ClusterObjects,
    Records,
    SchedulerConf,
    SessionResult,
    Snapshot,
    build_snapshot,
    parse_podgroup_phase,
    run_session,
)

from .edits import with_phase
from .model import Budget

Obj = dict[str, Any]
Clock = Callable[[], float]

# A PodGroup the enqueue session admitted: Inqueue, or already placed when its pods existed.
_ADMITTED = frozenset({PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING})


class OutOfBudget(Exception):
    pass


@dataclass(slots=True)
class Trials:
    job: str
    conf: SchedulerConf
    now: str
    extra_pods: tuple[Obj, ...]
    scheduler_names: tuple[str, ...]
    budget: Budget
    clock: Clock
    # Kept from one trial's snapshot to the next: a trial's changes are new dicts (``edits``), so each
    # snapshot after the first reads again only what its trial changed.
    records: Records = field(default_factory=Records)
    started: float = 0.0
    sessions: int = 0
    last_pipelined: bool = False
    # Whether the budget refused a session, caught by the search or not: the answer then says so.
    ran_out: bool = False
    # The first session's decisions (the cluster as it is): its queues' deserved shares guide the search.
    baseline: SessionResult | None = None

    def runs(self, objs: ClusterObjects) -> bool:
        """Whether a session over ``objs`` brings the job to ``minAvailable``.

        A PodGroup still Pending takes two sessions, as in the cluster: the first must enqueue it (the pods
        of a Volcano Job do not exist yet, so they are left out; pods that do exist may be placed at once),
        the second, with it Inqueue and its pods made, must place it.
        """
        if self._pending(objs):
            result = self._session(objs, ())
            if not any(
                f"{u.namespace}/{u.name}" == self.job and u.phase in _ADMITTED
                for u in result.podgroup_updates
            ):
                return False
            objs = replace(objs, podgroups=tuple(self._inqueue(pg) for pg in objs.podgroups))
        snapshot = snapshot_with(objs, self.extra_pods, self.scheduler_names, self.records)
        result = self._run(snapshot)
        job = snapshot.jobs.get(self.job)  # read before the next trial's build changes the records' views
        self.last_pipelined = any(p.job == self.job for p in result.pipelined)
        if self.baseline is None:
            self.baseline = result
        return job is not None and job.is_ready()

    def _session(self, objs: ClusterObjects, extra: tuple[Obj, ...]) -> SessionResult:
        return self._run(snapshot_with(objs, extra, self.scheduler_names, self.records))

    def _run(self, snapshot: Snapshot) -> SessionResult:
        if self.sessions >= self.budget.sessions or self.clock() - self.started >= self.budget.seconds:
            self.ran_out = True
            raise OutOfBudget
        self.sessions += 1
        return run_session(snapshot, self.conf, self.now)

    def _is_target(self, pg: Obj) -> bool:
        return f"{namespace_of(pg) or 'default'}/{name_of(pg)}" == self.job

    def _pending(self, objs: ClusterObjects) -> bool:
        return any(
            self._is_target(pg) and parse_podgroup_phase(podgroup_phase(pg)) is PodGroupPhase.PENDING
            for pg in objs.podgroups
        )

    def _inqueue(self, pg: Obj) -> Obj:
        if not self._is_target(pg):
            return pg
        return with_phase(pg, PodGroupPhase.INQUEUE)


def snapshot_with(
    objs: ClusterObjects, extra_pods: Sequence[Obj], names: Sequence[str], records: Records | None = None
) -> Snapshot:
    """``objs`` and ``extra_pods`` as a session's snapshot. ``records``: kept from the last snapshot of the
    same run, so that only what changed since is read again; a snapshot built from them is good until the
    next one is (read what a session decided before building another)."""
    # The scheduler's own builder: a malformed object is left out here as the scheduler leaves it out.
    snapshot, _dropped = build_snapshot(replace(objs, pods=(*objs.pods, *extra_pods)), names, records)
    return snapshot
