"""One pod: every slot is scored with numpy, no model and no per-slot Python loop.

A single pod's best node under the solver's objective is found by scoring every candidate slot on the same
lexicographic key the CP-SAT model minimises (stranded GPUs, fragmented GPUs, nodes touched with idle nodes
counting twice), then binpack's score as the tie-break. The greedy baseline takes the best binpack score,
as Volcano does. Either way the cost is a few array operations over the slots, which is what lets a trace
of thousands of one-pod jobs run through the same ``solve`` as the gangs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from volcano_py.scheduler.solver.domain import BINPACK_DIMS
from volcano_py.scheduler.solver.fragmentation import BoolArray, StrandedGpus, Vector
from volcano_py.scheduler.solver.slots import ClusterView, IntArray


def binpack_scores(
    free: IntArray, alloc: IntArray, request: IntArray, dims: list[int]
) -> npt.NDArray[np.float64]:
    """Volcano's binpack: the mean over weighted resources of the used fraction after placing the pod."""
    total = np.zeros(free.shape[0], dtype=np.float64)
    weight = np.zeros(free.shape[0], dtype=np.float64)
    for d in dims:
        has = alloc[:, d] > 0
        used = (alloc[:, d] - free[:, d] + request[d]) / np.where(has, alloc[:, d], 1)
        total += np.where(has, used, 0.0)
        weight += has
    result: npt.NDArray[np.float64] = total / np.maximum(weight, 1)
    return result


def best_slot(
    view: ClusterView,
    request: Vector,
    candidates: BoolArray,
    measure: StrandedGpus,
    *,
    exact: bool,
) -> int | None:
    """The slot a single pod should go to, or None when no candidate slot exists."""
    rows = np.flatnonzero(candidates)
    if rows.size == 0:
        return None
    free = view.free_matrix()[rows]
    alloc = view.alloc_matrix()[rows]
    req = np.array(request, dtype=np.int64)
    dims = [i for i, d in enumerate(view.dims) if d in BINPACK_DIMS]
    score = binpack_scores(free, alloc, req, dims)
    if not exact:
        return int(rows[int(np.argmax(score))])
    in_use = (free != alloc).any(axis=1)
    strict_before, frag_before = measure.of_rows(free, in_use)
    strict_after, frag_after = measure.of_rows(free - req, np.ones(rows.size, dtype=bool))
    nodes_cost = np.where(in_use, 1, 2)
    order = np.lexsort((rows, -score, nodes_cost, frag_after - frag_before, strict_after - strict_before))
    return int(rows[int(order[0])])
