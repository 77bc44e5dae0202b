"""How many feasible nodes to score per task, as Volcano and kube-scheduler decide it.

On a big cluster scoring every feasible node buys little: both schedulers stop after finding
``max(minNodesToFind, N * p%)`` feasible nodes, where ``p`` is ``percentageOfNodesToFind`` or, when that is
0, adaptive: ``max(50 - N/125, minPercentageOfNodesToFind)``. The search starts where the previous one
stopped, so load spreads over the whole cluster. Defaults are Volcano's (0, 5, 100): all nodes below 100,
42% of 1,000, 10% of 5,000.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .nodetable import IntArray


@dataclass(slots=True)
class NodeSampling:
    percentage: int = 0
    min_percentage: int = 5
    min_nodes: int = 100
    next_start: int = 0

    def count(self, nodes: int) -> int:
        """How many feasible nodes to look at out of ``nodes``."""
        if nodes <= self.min_nodes or self.percentage >= 100:
            return nodes
        percentage = self.percentage or max(50 - nodes // 125, self.min_percentage)
        return min(nodes, max(self.min_nodes, nodes * percentage // 100))

    def pick(self, feasible: IntArray, total_rows: int, wanted: int) -> IntArray:
        """Positions (into ``feasible``, sorted) of the feasible rows to score: the first ones found
        scanning from where the last search stopped, at least ``wanted`` of them."""
        limit = max(self.count(total_rows), wanted)
        if feasible.size <= limit:
            return np.arange(feasible.size, dtype=np.int64)
        size = feasible.size
        start = int(np.searchsorted(feasible, self.next_start % max(total_rows, 1)))
        end = start + limit  # positions start..end-1, wrapping past the last feasible node to the first
        result: IntArray
        if end <= size:
            result = np.arange(start, end, dtype=np.int64)
            last = end - 1
        else:
            result = np.concatenate(
                [np.arange(end - size, dtype=np.int64), np.arange(start, size, dtype=np.int64)]
            )
            last = end - size - 1
        self.next_start = int(feasible[last]) + 1
        return result
