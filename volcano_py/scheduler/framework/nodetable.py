"""The nodes' resource state as numpy arrays, so fit and scores are computed for all nodes at once.

One row per node (in the snapshot's name order), one column per resource name seen on any node or pod.
The Statement updates single rows as it allocates, so the arrays stay the one source of truth for what is
free during a session; ``NodeInfo`` keeps the fixed facts (labels, taints) and the task lists.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from volcano_py.resources import PODS, Resource

from .node import NodeInfo
from .status import OCCUPYING_STATUSES, TaskStatus

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

# Fit counts are capped here so "no request on this resource" never overflows.
_UNBOUNDED = np.int64(1 << 40)


class NodeTable:
    """Allocatable, used, releasing and pipelined amounts per node and resource, in canonical units."""

    def __init__(self, nodes: Sequence[NodeInfo], extra_names: Iterable[str] = ()) -> None:
        names: dict[str, None] = {PODS: None}
        for node in nodes:
            names.update(dict.fromkeys(node.allocatable))
        names.update(dict.fromkeys(extra_names))
        self.names: tuple[str, ...] = tuple(names)
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.node_names: tuple[str, ...] = tuple(n.name for n in nodes)
        self.node_index: dict[str, int] = {name: i for i, name in enumerate(self.node_names)}
        n, r = len(nodes), len(self.names)
        self.allocatable: IntArray = np.zeros((n, r), dtype=np.int64)
        self.used: IntArray = np.zeros((n, r), dtype=np.int64)
        self.releasing: IntArray = np.zeros((n, r), dtype=np.int64)
        self.pipelined: IntArray = np.zeros((n, r), dtype=np.int64)
        # Tasks of one class share one request: one row per distinct request, and the rows are summed per
        # node by numpy at the end (a row added per task was most of a session's set-up at 10,000 pods).
        requests: dict[Resource, int] = {}
        # Per table, the node row and the request row of every task it is charged with.
        used: tuple[list[int], list[int]] = ([], [])
        releasing: tuple[list[int], list[int]] = ([], [])
        pipelined: tuple[list[int], list[int]] = ([], [])
        for i, node in enumerate(nodes):
            self.allocatable[i] = self.vector(node.allocatable, pods=0)
            for task in node.tasks.values():
                row = requests.get(task.resreq)
                if row is None:
                    row = requests[task.resreq] = len(requests)
                status = task.status
                if status in OCCUPYING_STATUSES:
                    used[0].append(i)
                    used[1].append(row)
                if status is TaskStatus.RELEASING:
                    releasing[0].append(i)
                    releasing[1].append(row)
                if status is TaskStatus.PIPELINED:
                    pipelined[0].append(i)
                    pipelined[1].append(row)
        # How many pipelined tasks ``pipelined`` holds: ``room_now`` is asked once per class placed, and
        # scanning the whole array to learn that it is empty cost a fifth of a one-pod job's placement.
        self.pipelined_tasks = len(pipelined[0])
        if requests:
            matrix = np.array([self.vector(request) for request in requests], dtype=np.int64)
            for table, (at, rows) in ((self.used, used), (self.releasing, releasing),
                                      (self.pipelined, pipelined)):  # fmt: skip
                if at:
                    np.add.at(table, np.array(at, dtype=np.intp), matrix[rows])
        # allocatable - used, kept in step by ``charge`` so placement reads it without recomputing. Stored
        # column by column: placement scans one resource over every node for each pod, which is twice as
        # fast on a contiguous column, while ``charge`` writes one row (a few strided values) per pod.
        self.free: IntArray = np.asfortranarray(self.allocatable - self.used)
        # Every row, in order: the candidates of a class that every node passes.
        self.rows: IntArray = np.arange(n, dtype=np.int64)
        # The column sums of ``allocatable``, shared with every copy (which shares the array): each session
        # asks for them, and at 5,000 nodes summing anew was a tenth of a one-pod session's set-up.
        self._total: list[Resource] = []

    def copy(self) -> NodeTable:
        """A table a session may change: the amounts copied, the names and the allocatable shared (no
        session writes them)."""
        twin = object.__new__(NodeTable)
        twin.names, twin.index = self.names, self.index
        twin.node_names, twin.node_index = self.node_names, self.node_index
        twin.allocatable, twin.rows, twin._total = self.allocatable, self.rows, self._total
        twin.used = self.used.copy()
        twin.releasing = self.releasing.copy()
        twin.pipelined = self.pipelined.copy()
        twin.pipelined_tasks = self.pipelined_tasks
        twin.free = self.free.copy(order="F")
        return twin

    def charge_task(self, row: int, request: Resource, status: TaskStatus, sign: int) -> None:
        """Add (``sign=1``) or take back (-1) a task in ``status`` on the node at ``row``, as building the
        table over the node's tasks would have counted it."""
        vec = self.vector(request)
        if sign != 1:
            vec = sign * vec
        if status in OCCUPYING_STATUSES:
            self.used[row] += vec
            self.free[row] -= vec
        if status is TaskStatus.RELEASING:
            self.releasing[row] += vec
        if status is TaskStatus.PIPELINED:
            self.pipeline(row, vec, sign)

    def pipeline(self, row: int, vec: IntArray, sign: int = 1) -> None:
        """Count a pipelined task's ``vec`` (already signed) on the node at ``row``, or take it back (-1)."""
        self.pipelined[row] += vec
        self.pipelined_tasks += sign

    def set_allocatable(self, row: int, allocatable: Mapping[str, int]) -> None:
        """A node's new allocatable, of the same resource names as before."""
        self.allocatable[row] = self.vector(allocatable, pods=0)
        self.free[row] = self.allocatable[row] - self.used[row]
        self._total.clear()

    def __len__(self) -> int:
        return len(self.node_names)

    def vector(self, resource: Mapping[str, int], *, pods: int = 1) -> IntArray:
        """A request as a row; a pod also takes one ``pods`` slot. Unknown names get no column: callers
        that must reject them (predicates) check ``unknown_names`` first."""
        out = np.zeros(len(self.names), dtype=np.int64)
        for name, amount in resource.items():
            i = self.index.get(name)
            if i is not None:
                out[i] = amount
        out[0] = resource.get(PODS, pods)
        return out

    def unknown_names(self, resource: Resource) -> list[str]:
        """Resources requested that no node offers at all."""
        return sorted(name for name in resource if name not in self.index)

    def to_resource(self, row: IntArray) -> Resource:
        return Resource({name: int(row[i]) for i, name in enumerate(self.names) if name != PODS})

    def charge(self, row: int, vec: IntArray, sign: int = 1) -> None:
        """Add (or with ``sign=-1`` take back) one request's use of a node."""
        if sign != 1:
            vec = sign * vec
        self.used[row] += vec
        self.free[row] -= vec

    @property
    def idle(self) -> IntArray:
        """What is free on each node now (read-only view; change it through ``charge``)."""
        return self.free

    @property
    def future_idle(self) -> IntArray:
        return self.allocatable - self.used + self.releasing - self.pipelined

    @property
    def room_now(self) -> IntArray:
        """What a pod may be bound into now: idle, less what pipelined pods will take once releasing pods
        are gone (Volcano's allocate asks both ``Idle`` and ``FutureIdle``), so a bind never takes the room
        a pipelined gang waits for. Without pipelined pods (most sessions) it is ``idle`` itself."""
        if not self.pipelined_tasks:
            return self.free
        return np.asfortranarray(np.minimum(self.free, self.future_idle))

    def fit_counts(self, request: IntArray, free: IntArray) -> IntArray:
        """How many pods of ``request`` each row of ``free`` holds: min over requested resources."""
        asked = np.flatnonzero(request)
        if asked.size == 0:
            return np.full(free.shape[0], _UNBOUNDED, dtype=np.int64)
        counts = free[:, asked] // request[asked]
        result: IntArray = np.maximum(counts.min(axis=1), 0)
        return result

    def fits(self, request: IntArray, free: IntArray) -> BoolArray:
        result: BoolArray = np.all(free >= request, axis=1)
        return result

    def total(self) -> Resource:
        if not self._total:
            self._total.append(self.to_resource(self.allocatable.sum(axis=0)))
        return self._total[0]

    def used_total(self) -> Resource:
        return self.to_resource(self.used.sum(axis=0))


def unique_rows(keys: IntArray) -> tuple[IntArray, IntArray]:
    """``np.unique(keys, axis=0, return_inverse=True)``, the same answer, without sorting whole rows: rows are
    hashed to one int64 each (a random linear hash), grouped by a 1-D unique, and the grouping checked exactly
    (a collision falls back to grouping by the rows' bytes). np.unique's row sort took a third of a gang's
    placement at 5,000 nodes. Only the few distinct rows are sorted, lexicographically as np.unique does."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    if len(keys) == 0:
        return keys, np.zeros(0, dtype=np.int64)
    with np.errstate(over="ignore"):
        hashed = keys @ _hash_weights(keys.shape[1])
    _, firsts, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    unique = keys[firsts]
    if not np.array_equal(unique[inverse], keys):
        firsts, inverse = _group_by_bytes(keys)
        unique = keys[firsts]
    order = np.lexsort(unique.T[::-1])
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return unique[order], rank[inverse]


@functools.cache
def _hash_weights(width: int) -> IntArray:
    return np.random.default_rng(width).integers(1, 1 << 62, size=width, dtype=np.int64) | 1


def _group_by_bytes(keys: IntArray) -> tuple[IntArray, IntArray]:
    rows = keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).ravel().tolist()
    first: dict[object, int] = {}
    inverse = np.fromiter((first.setdefault(r, len(first)) for r in rows), dtype=np.int64, count=len(rows))
    firsts = np.zeros(len(first), dtype=np.int64)
    firsts[inverse[::-1]] = np.arange(len(rows))[::-1]  # the first row of each kind (the last write wins)
    return firsts, inverse
