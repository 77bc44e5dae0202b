"""The move problem of one waiting gang, built from the session, and its plan carried out in a statement.

Which pods may move: running pods of other jobs whose priority is not above the gang's (and not bound to a
HyperNode by a hard ``networkTopology`` of their own: their new places would have to share one), that a
controller recreates once evicted (a pod with no controlling owner would simply be gone), not protected
(``victims.protected``), that every eviction guard lets go together (``ssn.evictable``: pdb, cdp), in units
a gang survives (``victims.build_units``: single pods above ``minAvailable``, or a job's every pod). Pods
whose predicates depend on where other pods are (pod affinity, shared GPU cards: ``ssn.is_dynamic``) or
that claim DRA devices are not moved: a node mask computed once cannot say where they fit.

Which nodes: the model is per node, so it is kept to a candidate set: the nodes (of the HyperNode tried,
for a gang with a hard topology) where the gang's pods pass their predicates and could fit once every
movable pod there left (most such room first), then the nodes with the most free room where some movable
pod fits now, up to ``max_nodes`` in all. A plan over fewer nodes is still a plan of the whole cluster; the
bound only makes some plans unfindable, never a wrong one, and every plan is checked again against the
session before anything is evicted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from volcano_py.api.objects import controller_of
from volcano_py.resources import GPU

from ..framework.classes import TaskClass
from ..framework.job import JobInfo
from ..framework.nodetable import BoolArray, IntArray
from ..framework.session import Session
from ..framework.statement import Statement
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo, started_at
from ..solver.consolidation import GangPart, MovedGroup, MovePlan, MoveProblem, MoveUnit, place_gang
from ..solver.hypernode_tree import TopologyError
from .consolidate_domains import hard_topology
from .victims import EVICTABLE, VictimUnit, build_units, protected, to_place


def recreated(task: TaskInfo) -> bool:
    """A controller (a Volcano Job, a ReplicaSet...) owns the pod and makes a new one when it is evicted."""
    return controller_of(task.pod) is not None


def gpu_minutes(task: TaskInfo, now: float) -> int:
    """What evicting the pod gives up: its GPUs times the minutes it has run (at least one: a restart
    costs something even for a pod that just started). Rounded up."""
    milli = task.resreq.get(GPU, 0)
    if not milli:
        return 0
    minutes = max(1, math.ceil((now - started_at(task)) / 60.0))
    return -(-milli * minutes // 1000)


def gang_gpus(tasks: Sequence[TaskInfo]) -> float:
    return sum(t.resreq.get(GPU, 0) for t in tasks) / 1000.0


def movable(ssn: Session, job: JobInfo) -> list[TaskInfo]:
    """Running pods that may move to make room for ``job`` (see the module docstring)."""
    out: list[TaskInfo] = []
    for other in ssn.jobs.values():
        if other.uid == job.uid or other.priority > job.priority:
            continue
        if other.network_topology and _bound_to_hypernode(other):
            continue  # its pods' new places would have to share one HyperNode: not modelled
        for task in other.tasks_in(*EVICTABLE):
            if not task.node_name or protected(task) or not recreated(task) or task.best_effort:
                continue
            if task.claims_used or ssn.table.unknown_names(task.resreq):
                continue
            if ssn.is_dynamic(ssn.task_class(task)):
                continue
            out.append(task)
    return ssn.evictable(out) if out else []


def _bound_to_hypernode(job: JobInfo) -> bool:
    try:
        return hard_topology(job) is not None
    except TopologyError:
        return True  # unreadable: kept where it is


@dataclass(slots=True)
class GangShape:
    """The waiting gang's pending pods by class, in task order, and how many of them it needs."""

    parts: list[tuple[TaskClass, list[TaskInfo]]]
    need: int


def gang_shape(ssn: Session, job: JobInfo) -> GangShape:
    parts: dict[int, tuple[TaskClass, list[TaskInfo]]] = {}
    for task in to_place(ssn, job):
        klass = ssn.task_class(task)
        parts.setdefault(id(klass), (klass, []))[1].append(task)
    need = job.min_available - job.ready_task_num - job.waiting_task_num
    return GangShape(list(parts.values()), need)


def fits_without_moves(ssn: Session, shape: GangShape, within: BoolArray | None = None) -> bool:
    """Whether the gang's ``need`` pods fit in the room free once releasing pods are gone (on the nodes in
    ``within``), class by class, whole pods per node: then allocate places it and nothing has to move."""
    parts = [
        GangPart(
            klass.vec,
            len(tasks),
            ssn.predicate(klass).ok if within is None else ssn.predicate(klass).ok & within,
        )
        for klass, tasks in shape.parts
    ]
    return place_gang(ssn.table.future_idle, parts, shape.need) is not None


def gpus_in_use(ssn: Session) -> IntArray:
    """Milli-GPUs each node holds for pods that stay (what the greedy planner calls its emptiest)."""
    table = ssn.table
    column = table.index.get(GPU)
    if column is None:
        return np.zeros(len(table), dtype=np.int64)
    in_use: IntArray = table.allocatable[:, column] - np.maximum(table.future_idle[:, column], 0)
    return in_use


@dataclass(slots=True)
class BuiltProblem:
    problem: MoveProblem
    rows: IntArray  # the candidate nodes' table rows, in problem order
    units: list[VictimUnit]  # in problem order
    groups: list[list[list[TaskInfo]]]  # per unit, per group: its pods


def build_problem(
    ssn: Session,
    job: JobInfo,
    shape: GangShape,
    *,
    max_moves: int,
    max_nodes: int,
    within: BoolArray | None = None,
) -> BuiltProblem | None:
    """The move problem for ``job`` with its gang kept to the nodes in ``within`` (None: anywhere), or None
    when no pod may move for it."""
    permitted = movable(ssn, job)
    all_units = build_units(ssn, permitted)
    if not all_units:
        return None
    table = ssn.table
    future = np.maximum(table.future_idle, 0)
    evictable = np.zeros_like(future)
    seen: set[str] = set()
    for unit in all_units:
        for task, row, vec in zip(unit.tasks, unit.rows, unit.vecs, strict=True):
            if task.uid not in seen and task.status in EVICTABLE:
                seen.add(task.uid)
                evictable[row] += vec
    gang_ok = [
        ssn.predicate(klass).ok if within is None else ssn.predicate(klass).ok & within
        for klass, _ in shape.parts
    ]
    potential = np.zeros(len(table), dtype=np.int64)
    for (klass, _), ok in zip(shape.parts, gang_ok, strict=True):
        potential = np.maximum(potential, np.where(ok, table.fit_counts(klass.vec, future + evictable), 0))
    targets = np.flatnonzero(potential > 0)
    targets = targets[np.lexsort((targets, -potential[targets]))][: max(1, max_nodes // 2)]
    target_set = set(targets.tolist())
    units = [u for u in all_units if any(r in target_set for r in u.rows)]
    if not units:
        return None
    classes = {id(k): k for k in (ssn.task_class(t) for u in units for t in u.tasks)}
    fits_somewhere: BoolArray = np.zeros(len(table), dtype=np.bool_)
    for klass in classes.values():
        fits_somewhere |= ssn.predicate(klass).ok & table.fits(klass.vec, future)
    fits_somewhere[targets] = False
    others = np.flatnonzero(fits_somewhere)
    room = future[others].sum(axis=1)
    others = others[np.lexsort((others, -room))][: max(0, max_nodes - len(targets))]
    rows = np.concatenate([targets, others]).astype(np.int64)
    position = {int(r): i for i, r in enumerate(rows.tolist())}

    vecs = [klass.vec for klass, _ in shape.parts] + [klass.vec for klass in classes.values()]
    columns = np.flatnonzero(np.any(np.stack(vecs), axis=0))
    free = future[np.ix_(rows, columns)]
    parts = tuple(
        GangPart(klass.vec[columns], len(tasks), ok[rows])
        for (klass, tasks), ok in zip(shape.parts, gang_ok, strict=True)
    )
    now = ssn.now_seconds
    move_units: list[MoveUnit] = []
    groups: list[list[list[TaskInfo]]] = []
    for unit in units:
        by_place: dict[tuple[int, int], list[TaskInfo]] = {}
        for task, row in zip(unit.tasks, unit.rows, strict=True):
            if task.status in EVICTABLE:
                by_place.setdefault((row, id(ssn.task_class(task))), []).append(task)
        unit_groups = list(by_place.values())
        groups.append(unit_groups)
        move_units.append(
            MoveUnit(
                job=unit.job,
                whole=unit.whole,
                groups=tuple(
                    MovedGroup(
                        home=position.get(ssn.node_of(pods[0]), -1),
                        vec=ssn.task_class(pods[0]).vec[columns],
                        count=len(pods),
                        ok=ssn.predicate(ssn.task_class(pods[0])).ok[rows],
                    )
                    for pods in unit_groups
                ),
                cost=sum(gpu_minutes(t, now) for pods in unit_groups for t in pods),
            )
        )
    problem = MoveProblem(free, parts, shape.need, tuple(move_units), max_moves)
    return BuiltProblem(problem, rows, units, groups)


@dataclass(frozen=True, slots=True)
class Carried:
    """What a plan did: the pods evicted per job, and where the gang's pods were pipelined."""

    evicted: dict[str, list[TaskInfo]]
    gang_rows: list[int]


def carry_out(
    ssn: Session,
    stmt: Statement,
    job: JobInfo,
    shape: GangShape,
    built: BuiltProblem,
    plan: MovePlan,
    why: str,
) -> Carried | None:
    """Evict the plan's units and pipeline the gang's pods onto their nodes through ``stmt``, checking the
    session at every step (predicates, room once releasing pods are gone, the queue's word) and that every
    moved pod still has its place after the gang took its own. None when a check fails: the caller
    discards the statement."""
    queue = ssn.queues.get(job.queue)
    if queue is None:
        return None
    evicted: dict[str, list[TaskInfo]] = {}
    for u in plan.units:
        for pods in built.groups[u]:
            for task in pods:
                stmt.evict(task, "consolidate", detail=why)
                evicted.setdefault(task.job_id or task.uid, []).append(task)
    table = ssn.table
    gang_rows: list[int] = []
    for part, n, count in plan.gang:
        klass, tasks = shape.parts[part]
        row = int(built.rows[n])
        waiting = [t for t in tasks if t.status is TaskStatus.PENDING][:count]
        if len(waiting) < count or not ssn.predicate(klass).ok[row]:
            return None
        for task in waiting:
            if not (table.future_idle[row] >= klass.vec).all() or not ssn.allocatable(queue, task):
                return None
            stmt.pipeline(task, row)
            gang_rows.append(row)
    if not ssn.job_pipelined(job):
        return None
    room = table.future_idle.copy()
    for u, g, n, count in plan.moved:
        pods = built.groups[u][g]
        klass = ssn.task_class(pods[0])
        row = int(built.rows[n])
        room[row] -= count * klass.vec
        if row == ssn.node_of(pods[0]) or not ssn.predicate(klass).ok[row] or (room[row] < 0).any():
            return None
    return Carried(evicted, gang_rows)
