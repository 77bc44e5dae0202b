"""The solver's working copy of the cluster: node slots that split as gangs are placed.

A slot is a set of interchangeable nodes: same input class (so the same predicate outcome), same free
vector, same allocatable vector and same lowest HyperNode. Placing ``k`` pods on ``n`` nodes of a slot moves
those nodes into the slot of their new free vector. Arrays over slots are rebuilt once per gang so that fit
and per-domain capacity are a few numpy operations even at 5,000 nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from volcano_py.scheduler.solver.fragmentation import Vector, vector_of
from volcano_py.scheduler.solver.hypernode_tree import ROOT, HyperNodeTree
from volcano_py.scheduler.solver.problem import PlacementProblem

IntArray = npt.NDArray[np.int64]


@dataclass(slots=True)
class Slot:
    origin: str
    free: Vector
    alloc: Vector
    leaf: int  # index into ClusterView.leaves; -1 when the nodes sit in no HyperNode
    nodes: list[str]


class ClusterView:
    """Mutable slots plus the HyperNode domains over them; the solver's only mutable state."""

    def __init__(self, problem: PlacementProblem) -> None:
        names: set[str] = set()
        for c in problem.node_classes:
            names.update(c.free)
            names.update(c.allocatable)
        for g in problem.gangs:
            for t in g.tasks:
                names.update(t.request)
        self.dims: list[str] = sorted(names)
        self.tree: HyperNodeTree | None = problem.tree
        tree = problem.tree
        self.leaves: list[str] = tree.leaf_order() if tree else []
        leaf_of = tree.leaf_index() if tree else {}
        self.slots: list[Slot] = []
        self._index: dict[tuple[str, Vector, Vector, int], int] = {}
        self._origins: dict[str, int] = {c.id: i for i, c in enumerate(problem.node_classes)}
        # Columns over slots, kept in step with ``slots`` (rows past len(slots) are spare capacity).
        width = len(self.dims)
        self._free = np.zeros((16, width), dtype=np.int64)
        self._alloc = np.zeros((16, width), dtype=np.int64)
        self._size = np.zeros(16, dtype=np.int64)
        self._leaf = np.zeros(16, dtype=np.int64)
        self._origin = np.zeros(16, dtype=np.int64)
        for c in problem.node_classes:
            free = vector_of(c.free, self.dims)
            alloc = vector_of(c.allocatable, self.dims)
            if not leaf_of:  # no HyperNodes: every node sits in none
                self._add(c.id, free, alloc, -1, list(c.nodes))
                continue
            leaves = [leaf_of.get(node, -1) for node in c.nodes]
            if min(leaves) == max(leaves):  # the usual case: the caller grouped classes by position
                self._add(c.id, free, alloc, leaves[0], list(c.nodes))
                continue
            by_leaf: dict[int, list[str]] = {}
            for node, leaf in zip(c.nodes, leaves, strict=True):
                by_leaf.setdefault(leaf, []).append(node)
            for leaf_i in sorted(by_leaf):
                self._add(c.id, free, alloc, leaf_i, by_leaf[leaf_i])
        self._domain_cache: dict[int, tuple[IntArray, list[str]]] = {}

    def _add(self, origin: str, free: Vector, alloc: Vector, leaf: int, nodes: list[str]) -> int:
        key = (origin, free, alloc, leaf)
        index = self._index.get(key)
        if index is None:
            index = len(self.slots)
            self._index[key] = index
            self.slots.append(Slot(origin, free, alloc, leaf, []))
            if index >= len(self._size):
                self._grow()
            self._free[index] = free
            self._alloc[index] = alloc
            self._size[index] = 0
            self._leaf[index] = leaf
            self._origin[index] = self._origins[origin]
        self.slots[index].nodes.extend(nodes)
        self._size[index] += len(nodes)
        return index

    def _grow(self) -> None:
        extra = max(16, len(self._size))
        self._free = np.concatenate([self._free, np.zeros((extra, len(self.dims)), dtype=np.int64)])
        self._alloc = np.concatenate([self._alloc, np.zeros((extra, len(self.dims)), dtype=np.int64)])
        self._size = np.concatenate([self._size, np.zeros(extra, dtype=np.int64)])
        self._leaf = np.concatenate([self._leaf, np.zeros(extra, dtype=np.int64)])
        self._origin = np.concatenate([self._origin, np.zeros(extra, dtype=np.int64)])

    def compact(self) -> None:
        """Drop slots emptied by earlier placements; call only between gangs (slot indices change)."""
        count = len(self.slots)
        keep = np.flatnonzero(self._size[:count] > 0)
        if (count - len(keep)) * 2 <= count:
            return
        self.slots = [self.slots[i] for i in keep.tolist()]
        self._index = {(s.origin, s.free, s.alloc, s.leaf): i for i, s in enumerate(self.slots)}
        self._free = self._free[keep]
        self._alloc = self._alloc[keep]
        self._size = self._size[keep]
        self._leaf = self._leaf[keep]
        self._origin = self._origin[keep]

    # Arrays over slots (read-only views; copy before keeping them across a placement) ---------------------
    def free_matrix(self) -> IntArray:
        return self._free[: len(self.slots)]

    def alloc_matrix(self) -> IntArray:
        return self._alloc[: len(self.slots)]

    def sizes(self) -> IntArray:
        return self._size[: len(self.slots)].copy()

    def fits(self, request: Vector, feasible: frozenset[str] | None, cap: int) -> IntArray:
        """Per slot, pods of ``request`` one node holds (0 where predicates fail), capped at ``cap``."""
        req = np.array(request, dtype=np.int64)
        mask = req > 0
        free = self.free_matrix()
        if not mask.any():
            out = np.full(len(self.slots), cap, dtype=np.int64)
        else:
            out = (free[:, mask] // req[mask]).min(axis=1)
            np.minimum(out, cap, out=out)
        if feasible is not None:
            allowed_ids = np.array([self._origins[o] for o in feasible if o in self._origins], dtype=np.int64)
            out[~np.isin(self._origin[: len(self.slots)], allowed_ids)] = 0
        return out

    # Domains -----------------------------------------------------------------------------------------
    def domains_at(self, tier: int) -> tuple[IntArray, list[str]]:
        """Per slot, the index of its HyperNode at ``tier`` (-1 when it has none there), and their names."""
        if self.tree is None or tier >= self.tree.root_tier:
            return np.zeros(len(self.slots), dtype=np.int64), [ROOT]
        cached = self._domain_cache.get(tier)
        if cached is None:
            per_leaf_list, names = self.tree.tier_index(tier)
            # One extra -1 at the end: slots outside every HyperNode (leaf -1) read it.
            cached = (np.array([*per_leaf_list, -1], dtype=np.int64), names)
            self._domain_cache[tier] = cached
        per_leaf, names = cached
        return per_leaf[self._leaf[: len(self.slots)]], names

    # Mutation ----------------------------------------------------------------------------------------
    def take(self, slot_index: int, count: int, used: Vector) -> list[str]:
        """Move ``count`` nodes of a slot into the slot of ``free - used``; return their names."""
        slot = self.slots[slot_index]
        if count > len(slot.nodes):
            raise AssertionError(f"slot {slot_index} has {len(slot.nodes)} nodes, asked for {count}")
        taken, slot.nodes[:] = slot.nodes[:count], slot.nodes[count:]
        self._size[slot_index] -= count
        after = tuple(f - u for f, u in zip(slot.free, used, strict=True))
        if min(after, default=0) < 0:
            raise AssertionError(f"placement overcommits slot {slot_index}: {slot.free} - {used}")
        self._add(slot.origin, after, slot.alloc, slot.leaf, taken)
        return taken
