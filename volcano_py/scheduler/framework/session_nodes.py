"""Which nodes a pod may go to and what each is worth: the session's equivalence classes of pods, the
predicates ANDed over every node (cached per class unless a plugin says its answer can change), the node
scores summed, and the narrowing an action asks for (one HyperNode, nodes as they will be once releasing
pods are gone). A part of ``session.Session`` with the state only it keeps (its caches, the shard's fence
or lift); the hot path of placement, so it stays vectorised: no per-node Python work here.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, cast

import numpy as np

from volcano_py.api.shard import ShardingMode

from . import combine
from . import extension as ext
from .classes import TaskClass, selector_label_keys
from .job import JobInfo
from .nodetable import BoolArray, FloatArray, IntArray, NodeTable
from .sampling import NodeSampling
from .snapshot import Snapshot
from .task import TaskInfo

if TYPE_CHECKING:
    from .session import Session


class NodeChecks:
    """The node predicates and scores of ``Session``, of which it is only ever a part: it hands itself to
    the hooks that take the session as that (``cast``)."""

    snapshot: Snapshot
    jobs: dict[str, JobInfo]
    table: NodeTable
    points: ext.Points

    def _init_node_checks(self, waiting: Sequence[JobInfo]) -> None:
        """Called once the session has its table; ``waiting``: the jobs with pods waiting, whose pods'
        selectors name the labels that tell classes apart (with those of the pods already placed)."""
        # Sharding (``sharding.py``): hard mode fails the nodes outside the shard in every predicate; soft
        # mode lifts the shard's nodes' scores above the others'.
        shard = self.snapshot.shard
        self._shard_fence: tuple[BoolArray, str] | None = None
        self._shard_lift: FloatArray | None = None
        if shard is not None and shard.mode is ShardingMode.HARD:
            self._shard_fence = (shard.mask(self.table.node_names), shard.reason)
        elif shard is not None and shard.mode is ShardingMode.SOFT:
            self._shard_lift = shard.lift(self.table.node_names)
        self._node_order_fns: list[Callable[..., FloatArray]] = []  # filled at open
        self._classes: dict[Hashable, TaskClass] = {}
        self._static: dict[Hashable, ext.NodeVerdict] = {}
        self._dynamic: dict[Hashable, bool] = {}
        self._within: tuple[BoolArray, str] | None = None
        # Inside ``after_releases``: predicates over what releasing pods hold answer for once they are gone.
        self.counting_releases = False
        self.sampling = NodeSampling()
        self.selector_keys = selector_label_keys(
            itertools.chain(self.snapshot.affine_tasks(), (t for job in waiting for t in job.pending_tasks))
        )

    # --- equivalence classes --------------------------------------------------------------------------------

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
        ssn = cast("Session", self)
        splits = tuple(fn(ssn, task) for tier in self.points.class_split for fn in tier)
        return None if all(s is None for s in splits) else splits

    def pod_by_pod(self, klass: TaskClass) -> bool:
        """Placed one pod at a time, each checked and scored afresh: a predicate's answer or a split class's
        score changes as pods land."""
        return klass.split is not None or self.is_dynamic(klass)

    # --- predicates -----------------------------------------------------------------------------------------

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
        ssn = cast("Session", self)
        ok: BoolArray = np.ones(len(self.table), dtype=np.bool_)
        failures: list[tuple[str, BoolArray]] = []
        if self._shard_fence is not None:
            fence, reason = self._shard_fence
            ok &= fence
            failures.append((reason, ~fence))
        for tier in self.points.predicate:
            for fn in tier:
                verdict = fn(ssn, klass)
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

    # --- scores ---------------------------------------------------------------------------------------------

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

    def node_of(self, task: TaskInfo) -> int:
        """The row of ``task``'s node in the session's table."""
        return self.table.node_index[task.node_name]
