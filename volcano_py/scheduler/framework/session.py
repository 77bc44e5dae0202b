"""Session: one scheduling cycle's state, the plugins of the conf, and the extension points they fill.

Plugins are instantiated fresh per session from the registry. At open the session finds, per declared
extension point, the enabled plugins implementing it (by Protocol), grouped by tier, into ``ssn.points``
(one typed attribute per point); each ``Session`` method below applies that point's combination rule from
``extension``. State changes go through ``Statement``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

import numpy as np

from volcano_py.api import constants as k
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.api.shard import ShardingMode
from volcano_py.log import get_logger
from volcano_py.resources import Resource

from . import combine
from . import extension as ext
from .classes import TaskClass, selector_label_keys
from .conf import SchedulerConf
from .decisions import Bind, Condition, Evict, Explanation, HandOver, PodGroupEvent, Ungate
from .explain import FitFailures
from .job import JobInfo
from .node import NodeInfo, QueueInfo
from .nodetable import BoolArray, FloatArray, IntArray, NodeTable
from .registry import Plugin, Registry
from .sampling import NodeSampling
from .snapshot import Snapshot
from .statement import Statement
from .status import TaskStatus
from .steady import SteadyJobs
from .task import TaskInfo, timestamp

log = get_logger(__name__)

# Committed binds a session with a ``HandOver`` gathers before giving them over while it runs: a session
# placing a backlog of 50,000 pods runs for many seconds, and its first binds need not wait for its last.
HAND_OVER_BINDS = 100


class Session:
    def __init__(
        self,
        snapshot: Snapshot,
        conf: SchedulerConf,
        registry: Registry,
        *,
        now: str,
        features: FeatureGates = DEFAULT_FEATURE_GATES,
        timers: Mapping[str, float] | None = None,
        hand_over: HandOver | None = None,
    ) -> None:
        if snapshot.consumed:
            raise ValueError("this snapshot was already used by a session; build a new one per session")
        if snapshot.superseded:
            raise ValueError("a newer snapshot was built from the same records; open the session on that one")
        snapshot.consumed = True
        self.snapshot = snapshot
        self.conf = conf
        self.registry = registry
        self.now = now
        # When periodic plugins last acted (seconds since the epoch, by name): handed in by the runtime from
        # the last session's result and back out in this one's, so intervals are kept without a wall clock.
        self.timers: dict[str, float] = dict(timers or {})
        # The scheduler's --feature-gates: a process setting, the same for every session.
        self.features = features
        self.nodes: list[NodeInfo] = snapshot.nodes
        self.jobs: dict[str, JobInfo] = dict(snapshot.jobs)
        self.queues: dict[str, QueueInfo] = snapshot.queues
        # The jobs nothing happened to since a session under this conf settled them (``steady.py``): passes
        # over jobs take them from its per-queue sums. None: walk every job.
        self.steady: SteadyJobs | None = snapshot.steady.for_conf(conf) if snapshot.steady else None
        # The snapshot's jobs but the steady ones, in job order: what passes over jobs walk (jobs the
        # session sets aside at open included, as the snapshot holds them).
        steady = self.steady.jobs if self.steady is not None else None
        self.unsettled: list[JobInfo] = (
            [job for uid, job in snapshot.jobs.items() if uid not in steady]
            if steady
            else list(snapshot.jobs.values())
        )
        # Jobs with a pod waiting when the session opened, in ``jobs`` order. Most passes need only these,
        # and in a busy cluster they are a few among thousands (every running plain pod is a job).
        pending = TaskStatus.PENDING
        self._waiting: list[str] = [job.uid for job in self.unsettled if job.by_status.get(pending)]
        waiting = self.waiting_jobs()
        extra = {name for job in waiting for t in job.pending_tasks for name in t.resreq}
        kept = snapshot.table
        if kept is not None and all(name in kept.index for name in extra):
            self.table = kept.copy()
        else:
            self.table = NodeTable(self.nodes, extra)
        self.total: Resource = self.table.total()
        # Sharding (``sharding.py``): hard mode fails the nodes outside the shard in every predicate; soft
        # mode lifts the shard's nodes' scores above the others'.
        shard = snapshot.shard
        self._shard_fence: tuple[BoolArray, str] | None = None
        self._shard_lift: FloatArray | None = None
        if shard is not None and shard.mode is ShardingMode.HARD:
            self._shard_fence = (shard.mask(self.table.node_names), shard.reason)
        elif shard is not None and shard.mode is ShardingMode.SOFT:
            self._shard_lift = shard.lift(self.table.node_names)
        self.plugins: list[tuple[int, Plugin]] = []
        self.points = ext.Points.collect([], len(conf.tiers))  # filled at open
        self._node_order_fns: list[Callable[..., FloatArray]] = []
        self._classes: dict[Hashable, TaskClass] = {}
        self._static: dict[Hashable, ext.NodeVerdict] = {}
        self._dynamic: dict[Hashable, bool] = {}
        self._statements: list[Statement] = []
        self._within: tuple[BoolArray, str] | None = None
        # Inside ``after_releases``: predicates over what releasing pods hold answer for once they are gone.
        self.counting_releases = False
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
        self.timings: dict[str, float] = {}
        self.enqueue_enabled = "enqueue" in conf.actions
        self.sampling = NodeSampling()
        self.selector_keys = selector_label_keys(
            itertools.chain(snapshot.affine_tasks(), (t for job in waiting for t in job.pending_tasks))
        )

    def waiting_jobs(self) -> list[JobInfo]:
        """The jobs of the session that had pending tasks when it opened (a superset of those that still
        have some: a task only leaves Pending during a session, unless a discarded statement returns it)."""
        jobs = self.jobs
        return [job for uid in self._waiting if (job := jobs.get(uid)) is not None]

    # --- plugins ----------------------------------------------------------------------------------------

    def open(self) -> None:
        for t, tier in enumerate(self.conf.tiers):
            for option in tier:
                self.plugins.append((t, self.registry.plugin(option.name, option.arguments)))
        options = [option for tier in self.conf.tiers for option in tier]
        self.points = ext.Points.collect(
            [(t, plugin, option.enabled) for (t, plugin), option in zip(self.plugins, options, strict=True)],
            len(self.conf.tiers),
        )
        self._node_order_fns = [fn for tier in self.points.node_order for fn in tier]
        for _, plugin in self.plugins:
            if ext.implements(plugin, ext.SessionOpen):
                cast(ext.SessionOpen, plugin).on_session_open(self)
        # Not the steady jobs: valid when they settled, and the same since (``job_valid`` reads only the job).
        for job in self.unsettled:
            if self.enqueue_enabled and job.phase is PodGroupPhase.PENDING:
                continue  # its pods are created only once enqueue admits it (checked then)
            self.check_valid(job)

    def check_valid(self, job: JobInfo) -> None:
        """A job failing any ``job_valid`` leaves the session, with its reason on its PodGroup."""
        invalid = combine.first_failure(self.points.job_valid, job)
        if invalid is not None:
            self.set_condition(job, k.PODGROUP_CONDITION_UNSCHEDULABLE, invalid.reason, invalid.message)
            self.explanations[job.uid] = Explanation(job.uid, invalid.reason, invalid.message)
            self.jobs.pop(job.uid)

    def moved_steady(self) -> list[JobInfo]:
        """The steady jobs this session changed (an eviction, a phase), in the order it first touched them:
        walked at the close like the unsettled ones."""
        steady = self.steady
        if steady is None or not steady.jobs:
            return []
        touched = self.snapshot.touched
        uids = dict.fromkeys(task.job_id for task in touched.tasks if task.job_id is not None)
        uids.update(dict.fromkeys(job.uid for job in touched.jobs))
        held = steady.jobs
        return [held[uid].job for uid in uids if uid in held]

    def closing_jobs(self) -> list[JobInfo]:
        """What the close walks: the unsettled jobs, then the steady ones this session changed or told
        something (any plugin may set a condition)."""
        steady = self.steady
        if steady is None:
            return self.unsettled
        moved = self.moved_steady()
        seen = {job.uid for job in moved}
        told = [self.snapshot.jobs[uid] for uid in self.conditions if uid in steady.jobs and uid not in seen]
        return [*self.unsettled, *moved, *told]

    def close(self) -> None:
        for _, plugin in self.plugins:
            if ext.implements(plugin, ext.SessionClose):
                cast(ext.SessionClose, plugin).on_session_close(self)

    def release(self) -> None:
        """Drop the plugins and their extension points once the result is taken. Plugins keep the session
        they serve (gang does), so without this each session would be a reference cycle the size of the
        cluster, freed only by a full garbage collection; with it, the session goes when its last
        reference does."""
        self.plugins = []
        self.points = ext.Points.collect([], len(self.conf.tiers))
        self._node_order_fns = []
        self._statements = []

    def plugin(self, name: str) -> Plugin | None:
        return next((p for _, p in self.plugins if p.name == name), None)

    # --- ordering ---------------------------------------------------------------------------------------

    def job_less(self, left: JobInfo, right: JobInfo) -> bool:
        result = combine.first_nonzero(self.points.job_order, left, right)
        if result:
            return result < 0
        return (left.created, left.uid) < (right.created, right.uid)

    def job_key(self) -> Callable[[JobInfo], tuple[Any, ...]] | None:
        """A sort key equal to ``job_less`` when every job-order plugin offers ``job_order_key`` (a value
        whose order is its comparison's), else None; keys compare in C, comparators in Python."""
        keys = self.points.job_order_keys
        if keys is None:
            return None

        def job_key(job: JobInfo) -> tuple[Any, ...]:
            return (*(key(job) for key in keys), job.created, job.uid)

        return job_key

    def sorted_jobs(self, jobs: Sequence[JobInfo]) -> list[JobInfo]:
        """``jobs`` in the session's job order: the order enqueue and allocate pop them in, as of now."""
        key = self.job_key()
        if key is not None:
            return sorted(jobs, key=key)

        def cmp(a: JobInfo, b: JobInfo) -> int:
            return -1 if self.job_less(a, b) else (1 if self.job_less(b, a) else 0)

        return sorted(jobs, key=functools.cmp_to_key(cmp))

    def task_less(self, left: TaskInfo, right: TaskInfo) -> bool:
        result = combine.first_nonzero(self.points.task_order, left, right)
        if result:
            return result < 0
        return (left.created, left.name) < (right.created, right.name)

    def queue_less(self, left: QueueInfo, right: QueueInfo) -> bool:
        result = combine.first_nonzero(self.points.queue_order, left, right)
        if result:
            return result < 0
        return (left.created, left.name) < (right.created, right.name)

    def sorted_tasks(self, tasks: Sequence[TaskInfo]) -> list[TaskInfo]:
        if len(tasks) < 2:
            return list(tasks)

        def cmp(a: TaskInfo, b: TaskInfo) -> int:
            return -1 if self.task_less(a, b) else (1 if self.task_less(b, a) else 0)

        return sorted(tasks, key=functools.cmp_to_key(cmp))

    # --- yes/no questions -------------------------------------------------------------------------------

    def job_ready(self, job: JobInfo) -> bool:
        return combine.all_pass(self.points.job_ready, job)

    def job_pipelined(self, job: JobInfo) -> bool:
        return combine.vote_by_tier(self.points.job_pipelined, job)

    def job_starving(self, job: JobInfo) -> bool:
        return combine.first_tier_all(self.points.job_starving, job)

    def job_enqueueable(self, job: JobInfo) -> bool:
        return combine.vote_by_tier(self.points.job_enqueueable, job)

    def job_enqueued(self, job: JobInfo) -> None:
        combine.broadcast(self.points.job_enqueued, job)

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return combine.all_pass(self.points.allocatable, queue, task)

    def overused(self, queue: QueueInfo) -> bool:
        return combine.any_true(self.points.overused, queue)

    def preemptive(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return combine.all_pass(self.points.preemptive, queue, task)

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo]:
        """Of ``preemptees``, those every preemptable plugin lets ``preemptor`` evict (the victim rule)."""
        return combine.first_deciding_tier(self.points.preemptable, preemptor, preemptees)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: Sequence[TaskInfo]) -> list[TaskInfo]:
        """Of ``reclaimees``, those every reclaimable plugin lets ``reclaimer`` evict (the victim rule)."""
        return combine.first_deciding_tier(self.points.reclaimable, reclaimer, reclaimees)

    def gang_evictable(
        self, kind: ext.EvictionKind, actor: TaskInfo, candidates: Sequence[TaskInfo]
    ) -> list[TaskInfo]:
        """Of ``candidates``, those the gang actions may evict for ``actor``'s gang (the same tier rule)."""
        tiers = [[functools.partial(fn, kind) for fn in tier] for tier in self.points.gang_evictable]
        return combine.first_deciding_tier(tiers, actor, candidates)

    def victim_tasks(self, candidates: Sequence[TaskInfo]) -> list[ext.Victim]:
        """The running pods plugins want evicted, with why (Volcano's VictimTasks rule)."""
        return combine.union_first_tier(self.points.victim_tasks, self, candidates)

    def evictable(self, candidates: Sequence[TaskInfo]) -> list[TaskInfo]:
        """Of ``candidates``, those every eviction guard (pdb, cdp) lets go together."""
        return combine.narrowed(self.points.evictable, candidates)

    @property
    def now_seconds(self) -> float:
        """The session's time (``now``) in seconds since the epoch."""
        return timestamp(self.now)

    # --- why plugins said no, in words ------------------------------------------------------------------

    def explain_allocatable(self, queue: QueueInfo, task: TaskInfo) -> str:
        return combine.reasons(self.points.explain_allocatable, queue, task)

    def explain_enqueue(self, job: JobInfo) -> str:
        return combine.reasons(self.points.explain_enqueue, job)

    def explain_preemptive(self, queue: QueueInfo, task: TaskInfo) -> str:
        return combine.reasons(self.points.explain_preemptive, queue, task)

    # --- nodes: predicates and scores, per equivalence class --------------------------------------------

    def task_class(self, task: TaskInfo) -> TaskClass:
        klass: TaskClass | None = task.klass
        if klass is not None:
            return klass
        labels = tuple(task.labels.get(k) for k in self.selector_keys) if self.selector_keys else ()
        job = self.jobs.get(task.job_id or "")
        queue = job.queue if job is not None else ""
        split = self._split(task) if self.points.class_split else None
        key = (task.namespace, queue, task.class_key, labels, split)
        klass = self._classes.get(key)
        if klass is None:
            klass = TaskClass.of(task, self.table.vector(task.resreq), labels, queue, split)
            self._classes[key] = klass
        task.klass = klass
        self.snapshot.touched.classed.append(task)
        return klass

    def _split(self, task: TaskInfo) -> tuple[Hashable, ...] | None:
        splits = tuple(fn(self, task) for tier in self.points.class_split for fn in tier)
        return None if all(s is None for s in splits) else splits

    def pod_by_pod(self, klass: TaskClass) -> bool:
        """Placed one pod at a time, each checked and scored afresh: a predicate's answer or a split class's
        score changes as pods land."""
        return klass.split is not None or self.is_dynamic(klass)

    def is_dynamic(self, klass: TaskClass) -> bool:
        dynamic = self._dynamic.get(klass.constraint)
        if dynamic is None:
            dynamic = combine.any_true(self.points.predicate_dynamic, klass)
            self._dynamic[klass.constraint] = dynamic
        return dynamic

    def predicate(self, klass: TaskClass) -> ext.NodeVerdict:
        """All predicates ANDed over all nodes; cached per class unless a predicate says it can change."""
        cached = self._static.get(klass.constraint)
        if cached is not None:
            return self._narrowed(cached)
        ok: BoolArray = np.ones(len(self.table), dtype=np.bool_)
        failures: list[tuple[str, BoolArray]] = []
        if self._shard_fence is not None:
            fence, reason = self._shard_fence
            ok &= fence
            failures.append((reason, ~fence))
        for tier in self.points.predicate:
            for fn in tier:
                verdict = fn(self, klass)
                ok &= verdict.ok
                failures.extend(verdict.failures)
        result = ext.NodeVerdict(ok, failures)
        if not self.is_dynamic(klass):
            self._static[klass.constraint] = result
        return self._narrowed(result)

    def _narrowed(self, verdict: ext.NodeVerdict) -> ext.NodeVerdict:
        if self._within is None:
            return verdict
        mask, reason = self._within
        return ext.NodeVerdict(verdict.ok & mask, [*verdict.failures, (reason, ~mask)])

    @property
    def narrowed(self) -> bool:
        """Inside ``within``: a job with a network topology is being tried in one HyperNode."""
        return self._within is not None

    @contextmanager
    def after_releases(self) -> Iterator[None]:
        """Predicates inside the block judge nodes as they will be once releasing pods are gone (the DRA
        devices of their claims free): for actions that only pipeline pods there, as preempt does."""
        outer = self.counting_releases
        self.counting_releases = True
        try:
            yield
        finally:
            self.counting_releases = outer

    @contextmanager
    def within(self, mask: BoolArray, reason: str) -> Iterator[None]:
        """Only the nodes in ``mask`` pass the predicates inside the block (the others fail with ``reason``):
        a placement tried inside one HyperNode."""
        outer = self._within
        self._within = (mask if outer is None else mask & outer[0], reason)
        try:
            yield
        finally:
            self._within = outer

    def node_scores(self, klass: TaskClass, rows: IntArray, extra: IntArray | None = None) -> FloatArray:
        """Sum of every node-order plugin's score for one more pod of ``klass`` on the nodes at ``rows``
        (with ``extra[i]`` pods of the class assumed already added to ``rows[i]``)."""
        if extra is None:
            extra = np.zeros(len(rows), dtype=np.int64)
        fns = self._node_order_fns
        scores: FloatArray
        if len(fns) == 1:  # the usual conf (nodeorder alone): its own new array, as the sum would be
            scores = np.asarray(fns[0](self, klass, rows, extra), dtype=np.float64)
        else:
            scores = np.zeros(len(rows), dtype=np.float64)
            for fn in fns:
                scores += fn(self, klass, rows, extra)
        if self._shard_lift is not None:
            scores = scores + self._shard_lift[rows]  # a new array: a plugin's own is not changed
        return scores

    # --- transactions and outcomes ----------------------------------------------------------------------

    @contextmanager
    def statement(self) -> Iterator[Statement]:
        """``with ssn.statement() as stmt:``; left neither committed nor held, it is discarded."""
        stmt = Statement(self, parent=self._statements[-1] if self._statements else None)
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

    def node_of(self, task: TaskInfo) -> int:
        return self.table.node_index[task.node_name]

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
