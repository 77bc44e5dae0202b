"""task-topology's bookkeeping for one job: which of its pods should share a node (a bucket), the order they
are placed in, and how much a node suits the next one. Pure: tasks and request vectors in, numbers out.

The rules are Volcano's (``pkg/scheduler/plugins/task-topology``). Each session, the pods of the tasks named
in an affinity or anti-affinity group are sorted (those already on a node first, by node; then by the
``task-order`` annotation, then by the strongest kind of relation their task has: self anti-affinity,
affinity to another task, self affinity, anti-affinity to another task; then by name) and dealt into
buckets: a pod already on a node joins that node's bucket; a waiting pod joins the bucket where the sum over
the pods already in it (+1 each affine, -1 each anti-affine) is highest, the lightest of equal ones, or a
new bucket when even the best sum is negative. A bucket is meant for one node.

A pod's score on a node: the pods of its bucket already there, plus the bucket's pods still waiting, less
one for each of those the node could not also hold, less one for each anti-affine pod of its job placed
there; zero where the pod itself does not fit (idle plus releasing). Scaled to 0..100 by the largest
bucket, times the plugin's weight.

Where this differs from Volcano: which of a bucket's waiting pods are counted out when the bucket does not
fit is fixed here (the last to be placed first; Volcano walks a Go map, so it varies from run to run); an
undone allocation (a discarded statement) is taken back out of the counts; and pods of the job already
running count for anti-affinity as pods placed in this session do (Volcano counts only the latter).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from volcano_py.api.task_topology import TaskTopology
from volcano_py.resources import MEMORY, PODS

from ..framework.extension import FloatArray, IntArray
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo

MIB = 2**20


class Relation(enum.IntEnum):
    """The kinds of relation a task can have; a task is ordered by its strongest (Volcano's priorities)."""

    INTER_ANTI_AFFINITY = 1
    SELF_AFFINITY = 2
    INTER_AFFINITY = 3
    SELF_ANTI_AFFINITY = 4


@dataclass(slots=True)
class Relations:
    """Which tasks of a job attract or repel which, by task name."""

    self_affinity: set[str] = field(default_factory=set)
    self_anti: set[str] = field(default_factory=set)
    affinity: dict[str, set[str]] = field(default_factory=dict)
    anti: dict[str, set[str]] = field(default_factory=dict)
    # Tasks named in an (anti-)affinity group -> their strongest relation; only these get buckets.
    strongest: dict[str, int] = field(default_factory=dict)
    # ``task-order``: the first name ranks highest.
    rank: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, topology: TaskTopology) -> Relations:
        out = cls()
        out._read(
            topology.affinity,
            out.self_affinity,
            out.affinity,
            Relation.SELF_AFFINITY,
            Relation.INTER_AFFINITY,
        )
        out._read(
            topology.anti_affinity,
            out.self_anti,
            out.anti,
            Relation.SELF_ANTI_AFFINITY,
            Relation.INTER_ANTI_AFFINITY,
        )
        for i, name in enumerate(topology.task_order):
            out.rank[name] = len(topology.task_order) - i
        return out

    def _read(
        self,
        groups: tuple[tuple[str, ...], ...],
        alone: set[str],
        pairs: dict[str, set[str]],
        kind_alone: Relation,
        kind_pair: Relation,
    ) -> None:
        for group in groups:
            if len(group) == 1:  # exactly one name, empty or not: that task with itself
                alone.add(group[0])
                self._mark(group[0], kind_alone)
                continue
            for i, name in enumerate(group):
                for other in group[:i]:
                    pairs.setdefault(name, set()).add(other)
                    pairs.setdefault(other, set()).add(name)
                self._mark(name, kind_pair)

    def _mark(self, name: str, kind: Relation) -> None:
        self.strongest[name] = max(self.strongest.get(name, 0), int(kind))

    def attracts(self, name: str, other: str) -> bool:
        return name in self.self_affinity if name == other else other in self.affinity.get(name, ())

    def repels(self, name: str, other: str) -> bool:
        return name in self.self_anti if name == other else other in self.anti.get(name, ())

    def pair(self, name: str, other: str) -> int:
        """For two pods of these tasks on one node: +1 affine, -1 anti-affine (both: 0)."""
        return int(self.attracts(name, other)) - int(self.repels(name, other))

    def toward(self, name: str, present: Mapping[str, int], *, only_anti: bool = False) -> int:
        """What a pod of ``name`` makes of the pods ``present`` (task -> count): +1 per affine pod, -1 per
        anti-affine one (only the latter with ``only_anti``)."""
        total = 0
        for other, count in present.items():
            if not only_anti and self.attracts(name, other):
                total += count
            if self.repels(name, other):
                total -= count
        return total

    def before(self, name: str, other: str) -> int:
        """> 0 when pods of ``name`` go before those of ``other``: by task-order, then strongest relation."""
        if name == other:
            return 0
        mine, theirs = self.rank.get(name, 0), self.rank.get(other, 0)
        if mine != theirs:
            return 1 if mine > theirs else -1
        mine, theirs = self.strongest.get(name, 0), self.strongest.get(other, 0)
        if mine != theirs:
            return 1 if mine > theirs else -1
        return 0


def request_weight(task: TaskInfo) -> int:
    """How heavy a pod is when buckets tie: millicores + MiB + every other resource's amount."""
    total = 0
    for name, amount in task.resreq.items():
        if name == MEMORY:
            total += amount // MIB
        elif name != PODS:
            total += amount  # cpu in millicores, other resources in milli-units
    return total


@dataclass(slots=True)
class Bucket:
    index: int
    width: int
    waiting: dict[str, TaskInfo] = field(default_factory=dict)  # by uid, in the order dealt
    tasks: Counter[str] = field(default_factory=Counter)  # task name -> pods in the bucket (any state)
    nodes: Counter[str] = field(default_factory=Counter)  # node -> pods of the bucket there
    placed: int = 0
    weight: int = 0
    request: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


class JobBuckets:
    """One job's buckets and its pods' counts per node, kept as pods are placed and taken back."""

    def __init__(
        self,
        relations: Relations,
        tasks: Iterable[TaskInfo],
        vec_of: Callable[[TaskInfo], IntArray],
        width: int,
    ) -> None:
        self.relations = relations
        self.vec_of = vec_of
        self.width = width
        self.buckets: list[Bucket] = []
        self.bucket_of: dict[str, int] = {}
        # node -> task name -> pods of the job there (for anti-affinity).
        self.on_node: dict[str, Counter[str]] = {}
        self.largest = 0
        members: list[TaskInfo] = []
        for task in tasks:
            if task.node_name and task.role:
                self.on_node.setdefault(task.node_name, Counter())[task.role] += 1
            if task.role in relations.strongest and (task.node_name or task.status is TaskStatus.PENDING):
                members.append(task)
        self._deal(sorted(members, key=self._deal_key))

    def _deal_key(self, task: TaskInfo) -> tuple[object, ...]:
        rel = self.relations
        if task.node_name:
            return (0, task.node_name)
        return (1, -rel.rank.get(task.role, 0), -rel.strongest.get(task.role, 0), task.name)

    def _deal(self, tasks: Sequence[TaskInfo]) -> None:
        by_node: dict[str, Bucket] = {}
        for task in tasks:
            if task.node_name:
                chosen = by_node.get(task.node_name)
                if chosen is None:
                    chosen = by_node[task.node_name] = self._new()
                self._add(chosen, task)
                continue
            best: tuple[int, Bucket] | None = None
            for bucket in self.buckets:
                score = self.relations.toward(task.role, bucket.tasks)
                if best is None or score > best[0] or (score == best[0] and bucket.weight < best[1].weight):
                    best = (score, bucket)
            self._add(best[1] if best is not None and best[0] >= 0 else self._new(), task)

    def _new(self) -> Bucket:
        bucket = Bucket(len(self.buckets), self.width, request=np.zeros(self.width, dtype=np.int64))
        self.buckets.append(bucket)
        return bucket

    def _add(self, bucket: Bucket, task: TaskInfo) -> None:
        self.bucket_of[task.uid] = bucket.index
        bucket.tasks[task.role] += 1
        if task.node_name:
            bucket.nodes[task.node_name] += 1
            bucket.placed += 1
        else:
            bucket.waiting[task.uid] = task
            bucket.request += self.vec_of(task)
            bucket.weight += request_weight(task)
        self.largest = max(self.largest, len(bucket.waiting) + bucket.placed)

    def bucket(self, task: TaskInfo) -> Bucket | None:
        index = self.bucket_of.get(task.uid)
        return None if index is None else self.buckets[index]

    # --- as pods are placed ---------------------------------------------------------------------------------

    def placed(self, task: TaskInfo, node: str) -> None:
        if task.role:
            self.on_node.setdefault(node, Counter())[task.role] += 1
        bucket = self.bucket(task)
        if bucket is not None and task.uid in bucket.waiting:
            del bucket.waiting[task.uid]
            bucket.nodes[node] += 1
            bucket.placed += 1
            bucket.request -= self.vec_of(task)
            bucket.weight -= request_weight(task)

    def unplaced(self, task: TaskInfo, node: str) -> None:
        if task.role:
            self.on_node[node][task.role] -= 1
        bucket = self.bucket(task)
        if bucket is not None and task.uid not in bucket.waiting:
            bucket.waiting[task.uid] = task
            bucket.nodes[node] -= 1
            bucket.placed -= 1
            bucket.request += self.vec_of(task)
            bucket.weight += request_weight(task)

    # --- order and score ------------------------------------------------------------------------------------

    def order(self, left: TaskInfo, right: TaskInfo) -> int:
        """< 0 when ``left`` goes first; both of this job. Pods in a bucket first, fuller buckets first, then
        by bucket, then by task inside a bucket."""
        lb, rb = self.bucket(left), self.bucket(right)
        if lb is None or rb is None:
            return 0 if lb is rb else (-1 if lb is not None else 1)
        if len(lb.waiting) != len(rb.waiting):
            return -1 if len(lb.waiting) > len(rb.waiting) else 1
        if lb.index == rb.index:
            return -self.relations.before(left.role, right.role)
        return -1 if lb.index < rb.index else 1

    def scores(
        self,
        index: int,
        role: str,
        vec: IntArray,
        rows: IntArray,
        row_of: Mapping[str, int],
        room: IntArray,
        extra: IntArray,
    ) -> FloatArray:
        """Unscaled score of the next waiting pod of ``role`` in bucket ``index`` (request ``vec``) on the
        nodes at ``rows`` (``row_of``: node name -> row); ``room``: idle plus releasing per row, as if
        ``extra`` more such pods were already there."""
        bucket = self.buckets[index]
        fits = np.all(room >= vec, axis=1)
        # Only the few nodes holding pods of the job differ from zero: a pass per such node, not per row.
        own = extra.astype(np.float64)
        for node, count in bucket.nodes.items():
            if count and node in row_of:
                own[rows == row_of[node]] += count
        anti = np.zeros(len(rows), dtype=np.float64)
        for node, present in self.on_node.items():
            repelled = self.relations.toward(role, present, only_anti=True)
            if repelled and node in row_of:
                anti[rows == row_of[node]] = repelled
        if role in self.relations.self_anti:
            anti -= extra
        # The bucket's other waiting pods, the last dealt first, are counted out until the rest fits.
        others = list(bucket.waiting.values())
        me = next((i for i, t in enumerate(others) if t.role == role), None)
        if me is not None:
            others.pop(me)
        steps = np.zeros((len(others) + 1, self.width), dtype=np.int64)
        steps[0] = bucket.request
        for i, other in enumerate(reversed(others)):
            steps[i + 1] = steps[i] - self.vec_of(other)
        fitted = np.all(steps[None, :, :] <= room[:, None, :], axis=2)
        counted_out = np.where(fitted.any(axis=1), fitted.argmax(axis=1), len(others)).astype(np.float64)
        score = own + np.minimum(anti, 0.0) + len(bucket.waiting) - counted_out
        result: FloatArray = np.where(fits, score, 0.0)
        return result
