"""Build and try one gang's eviction plan in a ``Statement``, pod by pod.

For each pod of the preemptor's gang, in task order: if some node fits it once releasing pods are gone, it
goes there; otherwise it goes to the node where the cheapest victims make room (fewest pods evicted, then
the lowest priority, then the youngest), those victims are evicted, and the pod is pipelined there (its
nominated node). The caller commits the statement only if the whole gang became placeable, and discards
it otherwise, so nothing is evicted for a gang that still could not run. A gang with a hard network topology
is planned inside one HyperNode at a time, lowest tier first, as allocate would place it: a plan that only
works across domains would evict pods for a gang allocate then refuses to bind.

"Cheapest victims on each node" is computed for all nodes at once: every node's victim units are laid out
in preference order in an array, and the first prefix whose cumulative room covers the pod is found with
a cumulative sum, so a pod costs a few array operations over nodes x units, not a Python loop over nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from ..framework.classes import TaskClass
from ..framework.extension import BoolArray
from ..framework.job import JobInfo
from ..framework.nodetable import IntArray
from ..framework.session import Session
from ..framework.statement import Statement
from ..framework.task import TaskInfo
from .victims import (
    EVICTABLE,
    Permits,
    VictimUnit,
    build_units,
    by_preference,
    gang_met,
    note,
    permitted_by_job,
    protected,
    to_place,
)

# Units considered per node, most preferred first; a node with more victims than this offers its first ones.
MAX_UNITS_PER_NODE = 32


class VictimLayout:
    """Every victim unit laid out per node, in preference order, as arrays: built once per action and
    kept current as plans commit (``refresh``); each plan works on its own copy of ``base``."""

    def __init__(self, ssn: Session, units: Sequence[VictimUnit]) -> None:
        per_row: dict[int, list[tuple[VictimUnit, IntArray]]] = {}
        for unit in units:
            for row, frees in unit.live_frees().items():
                slots = per_row.setdefault(row, [])
                if len(slots) < MAX_UNITS_PER_NODE:
                    slots.append((unit, frees))
        self.row_ids: IntArray = np.array(sorted(per_row), dtype=np.int64)
        r = len(self.row_ids)
        k = max((len(s) for s in per_row.values()), default=1)
        d = len(ssn.table.names)
        self.free: IntArray = np.zeros((r, k, d), dtype=np.int64)
        self.pods: IntArray = np.zeros((r, k), dtype=np.int64)
        self.prio: IntArray = np.zeros((r, k), dtype=np.int64)
        self.young: npt.NDArray[np.float64] = np.zeros((r, k), dtype=np.float64)
        self.base: npt.NDArray[np.bool_] = np.zeros((r, k), dtype=np.bool_)
        self.unit_at: list[list[VictimUnit | None]] = [[None] * k for _ in range(r)]
        self.slots: dict[int, list[tuple[int, int]]] = {}
        self.of_job: dict[str, list[VictimUnit]] = {}
        for unit in units:
            self.of_job.setdefault(unit.job, []).append(unit)
        for i, row in enumerate(self.row_ids.tolist()):
            for j, (unit, _) in enumerate(per_row[row]):
                self.prio[i, j] = unit.priority
                self.young[i, j] = unit.youngest
                self.unit_at[i][j] = unit
                self.slots.setdefault(id(unit), []).append((i, j))
        self.refresh(self.of_job)

    def refresh(self, jobs: Iterable[str]) -> None:
        """Recompute the slots of these victim jobs from their pods' current status (after a commit)."""
        for job in jobs:
            units = self.of_job.get(job, ())
            singles: dict[int, IntArray] = {}
            for unit in sorted(units, key=lambda u: u.whole):
                live = unit.live_frees()
                remaining = sum(1 for t in unit.tasks if t.status in EVICTABLE)
                for i, j in self.slots.get(id(unit), ()):
                    row = int(self.row_ids[i])
                    if row not in live:
                        self.base[i, j] = False
                        continue
                    frees = live[row]
                    if unit.whole:
                        # The job's single pods come earlier on this node; count only what the rest frees.
                        frees = np.maximum(frees - singles.get(row, 0), 0)
                    else:
                        singles[row] = singles[row] + frees if row in singles else frees
                    self.free[i, j] = frees
                    self.pods[i, j] = remaining
                    self.base[i, j] = True

    def enough_for(self, ssn: Session, job: JobInfo) -> bool:
        """A cheap necessary condition: free room plus everything evictable covers the gang's remaining
        need, summed over the nodes passing its predicates. When it fails no plan can work."""
        need = job.min_available - job.ready_task_num - job.waiting_task_num
        tasks = to_place(ssn, job)[: max(need, 0)]
        if not tasks:
            return need <= 0
        table = ssn.table
        usable: npt.NDArray[np.bool_] = np.zeros(len(table), dtype=np.bool_)
        asked = np.zeros(len(table.names), dtype=np.int64)
        for task in tasks:
            klass = ssn.task_class(task)
            usable |= ssn.predicate(klass).ok
            asked += klass.vec
        room = np.maximum(table.future_idle[usable], 0).sum(axis=0)
        if self.row_ids.size:
            evictable = (self.free * self.base[:, :, None]).sum(axis=1)
            room = room + evictable[usable[self.row_ids]].sum(axis=0)
        return bool((room >= asked).all())


class GangPlan:
    """Evict and pipeline through ``stmt``; ``run`` says whether the gang became placeable."""

    def __init__(
        self,
        ssn: Session,
        stmt: Statement,
        job: JobInfo,
        layout: VictimLayout,
        *,
        reason: str,
        permits: Permits,
        admit: Callable[[TaskInfo], bool],
        domain: BoolArray | None = None,
    ) -> None:
        self.ssn = ssn
        self.domain = domain
        self.stmt = stmt
        self.job = job
        self.reason = reason
        self.permits = permits
        self.admit = admit
        self.evicted: list[TaskInfo] = []
        self.layout = layout
        self.active = layout.base.copy()

    def _retire(self, unit: VictimUnit) -> None:
        for i, j in self.layout.slots.get(id(unit), ()):
            self.active[i, j] = False

    def run(self) -> bool:
        for task in to_place(self.ssn, self.job):
            if gang_met(self.ssn, self.job):
                break
            klass = self.ssn.task_class(task)
            row = self._make_room(klass, task)
            if row is None:
                return False
            if not (self.ssn.table.future_idle[row] >= klass.vec).all() or not self.admit(task):
                return False
            self.stmt.pipeline(task, row)
        return gang_met(self.ssn, self.job)

    def _make_room(self, klass: TaskClass, task: TaskInfo) -> int | None:
        """Evict the cheapest victims that make room for ``task`` and return the node's row.

        Each unit is asked of the plugins again just before it is evicted, with the evictions planned so
        far counted (a queue may give up one pod but not two); a refused unit is never offered again and
        the choice is made afresh.
        """
        while True:
            need = self.job.min_available - self.job.ready_task_num - self.job.waiting_task_num
            choice = self._cheapest(klass, max(need, 1))
            if choice is None:
                return None
            row, units = choice
            with self.ssn.statement() as attempt:
                evicted: list[TaskInfo] = []
                for unit in units:
                    live = [t for t in unit.tasks if t.status in EVICTABLE]
                    if len(self.permits(task, live)) != len(live):
                        self._retire(unit)
                        attempt.discard()
                        break
                    for victim in live:
                        attempt.evict(victim, self.reason, task)
                    evicted += live
                else:
                    attempt.commit()  # hands the evictions to the plan's statement
                    for unit in units:
                        for same_job in self.layout.of_job[unit.job] if unit.whole else (unit,):
                            self._retire(same_job)
                    self.evicted += evicted
                    return row

    def _cheapest(self, klass: TaskClass, need: int) -> tuple[int, list[VictimUnit]] | None:
        """The node where ``klass`` fits at the least cost in victims, and those victims.

        Cost is counted per gang pod the freed node will host (up to ``need``, the pods the gang still
        lacks): a whole 4-pod gang whose node then takes four of ours costs less than two elastic pods
        evicted for each of ours. Ties go to fewer pods, then lower priority, then younger victims.
        """
        ok = self.ssn.predicate(klass).ok
        if self.domain is not None:
            ok = ok & self.domain
        vec = klass.vec
        future = self.ssn.table.future_idle
        fits = np.flatnonzero(ok & (future >= vec).all(axis=1))
        if fits.size:
            scores = self.ssn.node_scores(klass, fits)
            return int(fits[int(np.argmax(scores))]), []
        lay = self.layout
        if lay.row_ids.size == 0:
            return None
        short = np.maximum(vec - future[lay.row_ids], 0)
        room = np.cumsum(lay.free * self.active[:, :, None], axis=1)
        enough = (room >= short[:, None, :]).all(axis=2) & self.active
        usable = enough.any(axis=1) & ok[lay.row_ids]
        if not usable.any():
            return None
        first = enough.argmax(axis=1)
        rows = np.arange(len(lay.row_ids))
        pods = np.cumsum(lay.pods * self.active, axis=1)[rows, first]
        lowest = np.iinfo(np.int64).min
        prio = np.maximum.accumulate(np.where(self.active, lay.prio, lowest), axis=1)[rows, first]
        young = np.minimum.accumulate(np.where(self.active, lay.young, np.inf), axis=1)[rows, first]
        after = future[lay.row_ids] + room[rows, first]
        asked = np.flatnonzero(vec)
        hosts = np.clip((after[:, asked] // vec[asked]).min(axis=1), 1, need)
        per_pod = pods / hosts
        candidates = np.flatnonzero(usable)
        keys = (candidates, -young[candidates], prio[candidates], pods[candidates], per_pod[candidates])
        order = np.lexsort(keys)
        best = int(candidates[order[0]])
        chosen = [
            unit
            for j in range(int(first[best]) + 1)
            if self.active[best, j] and (unit := lay.unit_at[best][j]) is not None
        ]
        return int(lay.row_ids[best]), chosen


def evict_for_gang(
    ssn: Session,
    job: JobInfo,
    layouts: dict[tuple[str, int], VictimLayout],
    key: tuple[str, int],
    *,
    permits: Permits,
    victim_jobs: Callable[[], Iterable[JobInfo]],
    admit: Callable[[TaskInfo], bool],
    reason: str,
    too_little: str,
    no_plan: str,
) -> list[TaskInfo] | None:
    """Preempt's and reclaim's one step for a starving gang: evict what ``permits`` lets go so that the whole
    gang becomes placeable, in one statement committed only then. Returns the evicted pods, or None with a
    note on the job (``too_little`` when the victims could never free enough, ``no_plan`` when no set did).

    Victims under one ``key`` (a queue, a priority level) serve every gang there: the layout is built once
    from the evictable pods of ``victim_jobs()`` and kept in ``layouts``; the plan re-asks the plugins for
    each unit before evicting it, so a stale unit is refused, never wrongly taken.
    """
    layout = layouts.get(key)
    if layout is None:
        candidates = by_preference(
            (
                task
                for other in victim_jobs()
                for task in other.tasks_in(*EVICTABLE)
                if task.node_name and not protected(task)
            ),
            ssn,
        )
        permitted = permitted_by_job(ssn, permits, to_place(ssn, job)[0], candidates)
        layout = layouts[key] = VictimLayout(ssn, build_units(ssn, permitted))
    if not layout.enough_for(ssn, job):
        note(ssn, job, too_little)
        return None
    domains = hard_domains(ssn, job)
    for domain in domains if domains is not None else (None,):
        with ssn.statement() as stmt:
            plan = GangPlan(
                ssn, stmt, job, layout, reason=reason, permits=permits, admit=admit, domain=domain
            )
            if plan.run():
                stmt.commit()
                layout.refresh({t.job_id or t.uid for t in plan.evicted})
                return plan.evicted
            stmt.discard()
    note(ssn, job, no_plan if domains is None or domains else f"{no_plan}: no HyperNode the gang may use")
    return None


def hard_domains(ssn: Session, job: JobInfo) -> list[BoolArray] | None:
    """For a gang with a hard network topology (or sub-groups placed by HyperNode), the nodes of each
    HyperNode it may be placed in, lowest tier first, as allocate walks them: an eviction plan is made inside
    one of them, Volcano's candidate domains. None when the gang may go anywhere."""
    for walks in ssn.points.hypernode_walk:
        for offer in walks:
            walk = offer(ssn, job)
            if walk is None:
                continue
            if walk.unplaced is None:
                return None  # soft: allocate falls back to the whole cluster, and so may a plan
            return [mask for tier in walk.gradients for _, mask in tier]
    return None
