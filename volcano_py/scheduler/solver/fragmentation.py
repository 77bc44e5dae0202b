"""Stranded GPUs: free GPUs on a partly used node that no likely request can use.

A node is partly used when its free vector differs from its allocatable one. Its free GPUs are stranded
when not one likely GPU request fits beside them, on every resource (a GPU with no CPU left beside it is as
stranded as a GPU too small for any request). Idle nodes strand nothing, since a whole node serves any
request it can. The measure is a per-node number, so it adds up over a node class.

A second, finer measure (``fragmented``) counts, for each likely request size, the free GPUs of a node that
this size cannot use (beyond the copies of it that fit), summed over the sizes, idle nodes included, each
size weighted by its scarcity (few node types can hold it). It keeps whole nodes whole for the large
requests in the queue when nothing is strictly stranded yet.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from volcano_py.resources import GPU, Resource

Vector = tuple[int, ...]
# Cap on a size's scarcity weight, so one rare size cannot drown every other in the objective.
MAX_WEIGHT = 16
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class StrandedGpus:
    """Stranded GPU amounts (milli-GPUs) of free vectors, along fixed resource dimensions."""

    def __init__(self, dims: Sequence[str], likely: Sequence[Resource]) -> None:
        self._gpu = dims.index(GPU) if GPU in dims else -1
        self._sizes: list[list[tuple[int, int]]] = []
        self._size_gpu: list[int] = []
        for request in likely:
            if request.amount(GPU) <= 0:
                continue
            pairs = [
                (dims.index(name), value) for name, value in request.items() if value > 0 and name in dims
            ]
            if len(pairs) != sum(1 for v in request.values() if v > 0):
                # The request needs a resource no node has: it never fits, so it makes nothing usable.
                continue
            self._sizes.append(pairs)
            self._size_gpu.append(request.amount(GPU))
        self._weights: list[int] = [1] * len(self._sizes)

    def weigh_by_scarcity(self, allocatable: IntArray, counts: IntArray) -> None:
        """Weight each size by how few nodes could ever hold it (``allocatable`` rows, ``counts`` nodes each).

        A size that fits only a few node types loses a large share of its capacity when one of them is
        broken into, so fragmenting those nodes costs more: weight = (nodes fitting the most common size) /
        (nodes fitting this size), between 1 and MAX_WEIGHT. Sizes no node can hold get weight 0.
        """
        fitting = []
        for pairs in self._sizes:
            ok = np.all(np.stack([allocatable[:, i] >= amount for i, amount in pairs], axis=1), axis=1)
            fitting.append(int(counts[ok].sum()))
        most = max(fitting, default=0)
        self._weights = [0 if n == 0 else min(MAX_WEIGHT, max(1, round(most / n))) for n in fitting]

    def of(self, free: Vector, in_use: bool) -> int:
        """Milli-GPUs on this node that no likely request can use."""
        if self._gpu < 0 or not in_use:
            return 0
        gpus = free[self._gpu]
        if gpus <= 0:
            return 0
        for pairs in self._sizes:
            if all(free[i] >= amount for i, amount in pairs):
                return 0
        return gpus

    def fragmented(self, free: Vector) -> int:
        """Sum over likely request sizes of the milli-GPUs on this node that the size cannot use.

        Idle nodes count too: a size that never fits a node makes none of its GPUs usable, so taking that
        node first costs less for the size than taking a node it fits whole.
        """
        if self._gpu < 0:
            return 0
        gpus = free[self._gpu]
        if gpus <= 0:
            return 0
        total = 0
        for pairs, size_gpu, weight in zip(self._sizes, self._size_gpu, self._weights, strict=True):
            copies = min(free[i] // amount for i, amount in pairs)
            total += weight * (gpus - min(gpus, copies * size_gpu))
        return total

    def of_rows(self, free: IntArray, in_use: BoolArray) -> tuple[IntArray, IntArray]:
        """``of`` and ``fragmented`` for every row of a (nodes x dims) matrix at once."""
        rows = free.shape[0]
        if self._gpu < 0:
            zero = np.zeros(rows, dtype=np.int64)
            return zero, zero.copy()
        all_gpus = np.maximum(free[:, self._gpu], 0)
        any_fits = np.zeros(rows, dtype=bool)
        fragmented = np.zeros(rows, dtype=np.int64)
        for pairs, size_gpu, weight in zip(self._sizes, self._size_gpu, self._weights, strict=True):
            copies = np.maximum(
                np.min(np.stack([free[:, i] // amount for i, amount in pairs], axis=1), axis=1), 0
            )
            any_fits |= copies > 0
            fragmented += weight * (all_gpus - np.minimum(all_gpus, copies * size_gpu))
        stranded = np.where(in_use & ~any_fits, all_gpus, 0)
        return stranded, fragmented


def vector_of(resource: Resource, dims: Sequence[str]) -> Vector:
    return tuple(resource.amount(name) for name in dims)


def stranded_cards(
    card_used: IntArray, free: IntArray, in_use: BoolArray, shapes: Sequence[tuple[int, int, int, int]]
) -> tuple[IntArray, IntArray]:
    """Per node, the milli-GPUs stranded on its cards, and the free milli-GPUs of its partly used cards.

    ``card_used`` is (nodes x cards) milli-GPUs used per card, -1 where the node has no such card; ``free``
    is (nodes x 2) free cpu and memory; ``shapes`` are the waiting pods as (cpu, memory, milli-GPUs of one
    card or 0, whole cards or 0). A card's free part is stranded, on a node in use, when no shape can take
    it: a fractional shape needs that much free on the card and the cpu and memory beside it; a whole-card
    shape needs the card idle, enough idle cards on the node, and the cpu and memory.
    """
    exists = card_used >= 0
    card_free = np.where(exists, 1000 - card_used, 0)
    idle = exists & (card_used == 0)
    idle_count = idle.sum(axis=1)
    never = np.iinfo(np.int64).max
    fraction_min = np.full(card_used.shape[0], never, dtype=np.int64)
    whole_min = np.full(card_used.shape[0], never, dtype=np.int64)
    for cpu, memory, fraction, whole in shapes:
        fits = (free[:, 0] >= cpu) & (free[:, 1] >= memory)
        if fraction:
            fraction_min = np.where(fits, np.minimum(fraction_min, fraction), fraction_min)
        if whole:
            whole_min = np.where(fits, np.minimum(whole_min, whole), whole_min)
    usable = (card_free >= fraction_min[:, None]) | (idle & (idle_count >= whole_min)[:, None])
    stranded: IntArray = np.where(exists & ~usable & in_use[:, None], card_free, 0).sum(axis=1)
    partial: IntArray = np.where(exists & (card_used > 0) & (card_used < 1000), card_free, 0).sum(axis=1)
    return stranded, partial
