"""The ``cpsat`` plugin: the framework's ``place_job`` point, answered by ``solve``.

Gangs (minAvailable > 1) and jobs with a ``networkTopology`` go through the solver; one-pod jobs stay on
the framework's greedy path unless ``cpsat.singlePods`` is set. A job with ``spec.subGroupPolicy`` is one
gang per sub-group (``cpsat_subgroups``). For each job the session's node table is
grouped into node classes (same idle and allocatable vectors, same predicate outcome for each of the job's
task classes, same lowest HyperNode), the plan is applied through the statement, and an unplaced gang
leaves its reason in the job's fit failures. A hard-topology gang the solver cannot place stays pending;
any other falls through to greedy, which may still pipeline it onto releasing nodes.

Arguments: ``cpsat.timeBudgetMs`` (per session, default 200), ``cpsat.maxDomains`` (default 3),
``cpsat.singlePods`` (default false).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from volcano_py.api.meta import NetworkTopologyMode
from volcano_py.log import get_logger
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.classes import TaskClass as FrameworkClass
from volcano_py.scheduler.framework.extension import DeviceCapacity, Placed, Predicate
from volcano_py.scheduler.framework.job import JobInfo
from volcano_py.scheduler.framework.nodetable import unique_rows
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.framework.statement import Statement
from volcano_py.scheduler.framework.status import is_ready_status
from volcano_py.scheduler.framework.task import TaskInfo
from volcano_py.scheduler.plugins.cpsat_subgroups import place_sub_groups
from volcano_py.scheduler.solver.hypernode_tree import (
    HyperNodeTree,
    NetworkTopology,
    TopologyError,
    build_tree,
    hypernodes_from_objects,
)
from volcano_py.scheduler.solver.problem import (
    Gang,
    NodeClass,
    PlacementPlan,
    PlacementProblem,
    SolverBudget,
    TaskClass,
)
from volcano_py.scheduler.solver.solve import solve

log = get_logger(__name__)
# Synthetic resource columns: pods of one class that a node's shared GPU cards can still hold.
SLOTS_PREFIX = "deviceshare.volcano-py/slots-"


@dataclass(frozen=True, slots=True)
class Part:
    """What one gang of the placement problem holds: the whole job, or one of its sub-groups."""

    name: str
    tasks: list[TaskInfo]
    min_available: int
    topology: NetworkTopology | None
    role_need: Mapping[str, int] = field(default_factory=dict)


def _resource(names: Sequence[str], row: np.ndarray) -> Resource:
    return Resource({name: int(v) for name, v in zip(names, row.tolist(), strict=True) if v})


class CpsatPlugin:
    name = "cpsat"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({"cpsat.timeBudgetMs", "cpsat.maxDomains", "cpsat.singlePods"})
        self.budget_ms = arguments.get_float("cpsat.timeBudgetMs", 200.0, minimum=0.0)
        self.max_domains = arguments.get_int("cpsat.maxDomains", 3, minimum=1)
        self.single_pods = arguments.get_bool("cpsat.singlePods", False)
        self.tree: HyperNodeTree | None = None
        self.tree_error = ""
        self.leaf = np.zeros(0, dtype=np.int64)
        self._waiting: set[Resource] = set()
        self._likely: tuple[Resource, ...] | None = None
        self.spent_ms = 0.0
        self.devices: list[DeviceCapacity] = []
        self.other_predicates: list[Predicate] = []

    def on_session_open(self, ssn: Session) -> None:
        self.spent_ms = 0.0
        # Found once per session: isinstance against a runtime Protocol is slow, and every gang asks.
        self.devices = [p for _, p in ssn.plugins if isinstance(p, DeviceCapacity)]
        self.other_predicates = [
            p for _, p in ssn.plugins if isinstance(p, Predicate) and not isinstance(p, DeviceCapacity)
        ]
        self.tree, self.tree_error = None, ""
        try:
            specs = hypernodes_from_objects(ssn.snapshot.hypernodes)
            if specs:
                self.tree = build_tree(specs, {n.name: n.labels for n in ssn.nodes})
        except TopologyError as err:
            self.tree_error = str(err)
            log.warning("HyperNodes ignored", error=self.tree_error)
        leaf_of = self.tree.leaf_index() if self.tree is not None else {}
        self.leaf = np.array([leaf_of.get(n, -1) for n in ssn.table.node_names], dtype=np.int64)
        # The requests waiting at the start of the session, read as the node table sees them only when a gang
        # is modelled: with one-pod jobs that never happens, and every pod may ask for something different.
        self._waiting = {t.resreq for job in ssn.waiting_jobs() for t in job.pending_tasks}
        self._likely = None

    def likely(self, ssn: Session) -> tuple[Resource, ...]:
        """The distinct requests that waited when the session opened, in the node table's resources (a pod
        also asks for one ``pods`` slot): the sizes stranded GPUs are measured against."""
        if self._likely is None:
            names = ssn.table.names
            self._likely = tuple({_resource(names, ssn.table.vector(r)) for r in self._waiting})
        return self._likely

    def _solves_single_pods(self) -> bool:
        return self.single_pods

    def on_session_close(self, ssn: Session) -> None:
        self.tree, self.leaf = None, np.zeros(0, dtype=np.int64)
        self._waiting, self._likely = set(), None
        self.devices, self.other_predicates = [], []

    def place_job(self, ssn: Session, stmt: Statement, job: JobInfo) -> Placed | None:
        if job.sub_group_policies:
            return place_sub_groups(self, ssn, stmt, job)
        pending = ssn.sorted_tasks([t for t in job.pending_tasks if not t.best_effort])
        if not pending or (
            job.min_available <= 1 and not job.network_topology and not self._solves_single_pods()
        ):
            return None
        if not job.network_topology:
            # As Volcano's allocate: a gang gets what makes it ready, then waits its turn behind the other
            # gangs still short of theirs; once ready it grows a pod per turn (the greedy path does that).
            if job.is_ready():
                return None
            pending = job.needed_to_be_ready(pending)
        if any(
            t.host_ports or t.affinity.get("podAffinity") or t.affinity.get("podAntiAffinity")
            for t in pending
        ):
            # Host ports and pod (anti-)affinity make a pod's fit depend on its gang mates' placement, which
            # counts per node class cannot express; the greedy path checks them pod by pod.
            return None
        slots = self.device_slots(ssn, pending)
        if slots is None:
            return None
        try:
            topology = NetworkTopology.parse(job.network_topology) if job.network_topology else None
        except TopologyError as err:
            ssn.fit_failures_of(job).add(len(pending), [f"PodGroup spec.{err}"])
            return Placed(0, 0)
        hard = topology is not None and topology.mode is NetworkTopologyMode.HARD
        if hard and self.tree_error:
            ssn.fit_failures_of(job).add(len(pending), [f"HyperNodes are invalid: {self.tree_error}"])
            return Placed(0, 0)
        ready_by_role: dict[str, int] = {}
        for task in job.tasks.values():
            if is_ready_status(task.status):
                ready_by_role[task.role] = ready_by_role.get(task.role, 0) + 1
        role_need = {
            role: max(0, need - ready_by_role.get(role, 0)) for role, need in job.role_minimums.items()
        }
        min_available = min(max(1, job.min_available - job.ready_task_num), len(pending))
        whole = Part(job.uid, pending, min_available, topology, role_need)
        plan, by_gang = self.solve_parts(ssn, job, [whole], slots)
        tasks_by_class = by_gang[job.uid]
        if job.uid in plan.unplaced:
            # Greedy explains the unplaced tasks itself when it takes over; only a hard gang stops here.
            if not hard:
                return None
            ssn.fit_failures_of(job).add(len(pending), [plan.unplaced[job.uid].reason])
            return Placed(0, 0)
        queue = ssn.queues[job.queue]
        allocated = 0
        for assignment in plan.placed[job.uid].assignments:
            row = ssn.table.node_index[assignment.node]
            for _ in range(assignment.count):
                task = tasks_by_class[assignment.task].pop(0)
                if not ssn.allocatable(queue, task):
                    reason = ssn.explain_allocatable(queue, task) or f"queue {queue.name} is full"
                    ssn.fit_failures_of(job).add(len(pending) - allocated, [reason])
                    return Placed(allocated, 0)
                stmt.allocate(task, row)
                allocated += 1
        log.debug("cpsat placed", job=job.uid, pods=allocated, hypernode=plan.placed[job.uid].hypernode)
        return Placed(allocated, 0)

    def solve_parts(
        self,
        ssn: Session,
        job: JobInfo,
        parts: Sequence[Part],
        slots: dict[object, np.ndarray],
        *,
        within: np.ndarray | None = None,
    ) -> tuple[PlacementPlan, dict[str, dict[str, list[TaskInfo]]]]:
        """Solve one gang per part; ``within``: only the nodes it marks are offered."""
        problem, by_gang = self._problem(ssn, job, parts, slots, within)
        budget = SolverBudget(time_ms=max(self.budget_ms - self.spent_ms, 0.0), max_domains=self.max_domains)
        plan = solve(problem, budget)
        self.spent_ms += plan.solve_ms
        return plan, by_gang

    def device_slots(self, ssn: Session, pending: list[TaskInfo]) -> dict[object, np.ndarray] | None:
        """Per task class asking for devices (shared GPU cards, DRA claims), how many of its pods each node's
        devices hold (the least over the plugins that count them); None when a class's fit changes as pods
        land for another reason, or when two classes share devices (their counts are not independent): then
        the greedy path places the job pod by pod."""
        devices, others = self.devices, self.other_predicates
        counts: dict[object, int] = {}
        klasses: dict[object, FrameworkClass] = {}
        for task in pending:
            klass = ssn.task_class(task)
            counts[klass.key] = counts.get(klass.key, 0) + 1
            klasses[klass.key] = klass
        out: dict[object, np.ndarray] = {}
        for key, klass in klasses.items():
            if not ssn.is_dynamic(klass):
                continue
            if any(p.predicate_dynamic(klass) for p in others):
                return None
            if any(p.predicate_dynamic_besides_devices(klass) for p in devices):
                return None
            columns = [c for p in devices if (c := p.device_slots(ssn, klass, counts[key])) is not None]
            if not columns:
                return None
            out[key] = np.minimum.reduce(columns) if len(columns) > 1 else columns[0]
        return out if len(out) <= 1 else None

    def _pair_preference(self, ssn: Session, job: JobInfo) -> dict[tuple[str, str], int]:
        """The job's wishes for pods of two tasks on one node (task-topology), summed over the plugins."""
        out: dict[tuple[str, str], int] = {}
        for tier in ssn.points.pair_preference:
            for fn in tier:
                for pair, score in fn(job).items():
                    out[pair] = out.get(pair, 0) + score
        return out

    def _problem(
        self,
        ssn: Session,
        job: JobInfo,
        parts: Sequence[Part],
        slots: dict[object, np.ndarray],
        within: np.ndarray | None = None,
    ) -> tuple[PlacementProblem, dict[str, dict[str, list[TaskInfo]]]]:
        """One gang per part (the whole job, or each of its sub-groups), over node classes shared by all;
        second, per gang, its task classes' pods."""
        table = ssn.table
        column: dict[object, int] = {}
        klasses: list[FrameworkClass] = []
        for part in parts:
            for task in part.tasks:
                klass = ssn.task_class(task)
                if klass.key not in column:
                    column[klass.key] = len(klasses)
                    klasses.append(klass)
        # A node's shared GPU cards hold a whole number of pods each, whatever the node's total says: the
        # count is one more resource column (as free and as allocatable), asked once per pod of its class.
        names = list(table.names) + [f"{SLOTS_PREFIX}{i}" for i in range(len(slots))]
        slot_column = {key: len(table.names) + i for i, key in enumerate(slots)}
        idle = np.maximum(table.room_now, 0)
        allocatable = table.allocatable
        if slots:
            extra = np.stack(list(slots.values()), axis=1)
            idle = np.concatenate([idle, extra], axis=1)
            allocatable = np.concatenate([allocatable, extra], axis=1)
        # For a shared-GPU class this is "one more pod fits now"; how many is its slot column.
        ok = np.stack([ssn.predicate(klass).ok for klass in klasses], axis=1)
        if within is not None:
            ok = ok & within[:, None]
        rows = np.flatnonzero(ok.any(axis=1))
        keys = np.concatenate([idle, allocatable, ok.astype(np.int64), self.leaf[:, None]], axis=1)[rows]
        unique, inverse = unique_rows(keys)
        # Each class's nodes in table order (a stable sort of the rows by class).
        by_class = rows[np.argsort(inverse, kind="stable")]
        bounds = np.cumsum(np.bincount(inverse, minlength=len(unique)))[:-1]
        node_names = table.node_names
        members = [[node_names[i] for i in part] for part in np.split(by_class, bounds.tolist())]
        width = len(names)
        node_classes = tuple(
            NodeClass(
                f"n{k}",
                _resource(names, key[:width]),
                _resource(names, key[width : 2 * width]),
                tuple(members[k]),
            )
            for k, key in enumerate(unique)
        )
        gangs: list[Gang] = []
        by_gang: dict[str, dict[str, list[TaskInfo]]] = {}
        prefer = self._pair_preference(ssn, job)
        for part in parts:
            role_need = dict(part.role_need)
            groups: dict[tuple[str, object], list[TaskInfo]] = {}
            for task in part.tasks:
                groups.setdefault((task.role, ssn.task_class(task).key), []).append(task)
            tasks: list[TaskClass] = []
            by_name: dict[str, list[TaskInfo]] = {}
            for c, ((role, key), members_of) in enumerate(groups.items()):
                name = role or "pods"
                if name in by_name:  # one role, several pod shapes
                    name = f"{name}#{c}"
                need = min(role_need.get(role, 0), len(members_of))
                role_need[role] = role_need.get(role, 0) - need
                col = 2 * width + column[key]
                feasible = frozenset(f"n{k}" for k, row in enumerate(unique) if row[col])
                vec = klasses[column[key]].vec
                if slots:
                    vec = np.concatenate([vec, np.zeros(len(slots), dtype=np.int64)])
                    if key in slot_column:
                        vec[slot_column[key]] = 1
                tasks.append(TaskClass(name, _resource(names, vec), len(members_of), need, feasible))
                by_name[name] = list(members_of)
            min_available = max(part.min_available, sum(t.min_member for t in tasks))
            roles = [(t.name, by_name[t.name][0].role) for t in tasks]
            pairs = tuple(
                (a, b, score)
                for i, (a, role_a) in enumerate(roles)
                for b, role_b in roles[i:]
                if (score := prefer.get((role_a, role_b), 0))
            )
            gangs.append(Gang(part.name, tuple(tasks), min_available, job.priority, part.topology, pairs))
            by_gang[part.name] = by_name
        return PlacementProblem(node_classes, tuple(gangs), self.tree, self.likely(ssn)), by_gang
