"""Explanations: why tasks stayed pending, aggregated over nodes and tasks, in words a person can act on.

Formats: ``3/8 tasks unschedulable: 5 nodes insufficient nvidia.com/gpu (need 8, best node has 4 free);
2 nodes have untolerated taint dedicated=infer:NoSchedule`` and, for queue limits, ``queue team-a over
capability on nvidia.com/gpu: 40 allocated + 16 requested > 48``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from volcano_py.resources import PODS, format_quantity

if TYPE_CHECKING:
    from .classes import TaskClass
    from .session import Session


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def node_reasons(ssn: Session, klass: TaskClass) -> list[str]:
    """Why no node takes one more pod of ``klass``: predicate failures counted per reason, then the
    resources short on the nodes that pass every predicate (against what will be free after releases)."""
    table = ssn.table
    if len(table) == 0:
        return ["no nodes in the cluster"]
    verdict = ssn.predicate(klass)
    counts: dict[str, int] = {}
    for reason, failing in verdict.failures:
        n = int(np.count_nonzero(failing))
        if n:
            counts[reason] = counts.get(reason, 0) + n
    reasons = [f"{plural(n, 'node')} {reason}" for reason, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    rows = np.flatnonzero(verdict.ok)
    if rows.size:
        free = np.maximum(table.idle[rows], table.future_idle[rows])
        for d in np.flatnonzero(klass.vec):
            short = int(np.count_nonzero(free[:, d] < klass.vec[d]))
            if not short:
                continue
            name = table.names[d]
            if not table.allocatable[:, d].any():
                reasons.append(f"no node offers {name}")
                continue
            if name == PODS:
                reasons.append(f"{plural(short, 'node')} at their pod limit")
                continue
            need = format_quantity(name, int(klass.vec[d]))
            best = format_quantity(name, int(max(free[:, d].max(), 0)))
            reasons.append(
                f"{plural(short, 'node')} insufficient {name} (need {need}, best node has {best} free)"
            )
    missing = table.unknown_names(klass.request)
    if missing:
        reasons.append(f"no node offers {', '.join(missing)}")
    return reasons or ["no node fits (all candidate nodes were taken by earlier tasks of this cycle)"]


@dataclass(slots=True)
class FitFailures:
    """What stopped a job's tasks this session: node reasons per class, and queue limits."""

    total_tasks: int
    unplaced: int = 0
    reasons: list[str] = field(default_factory=list)

    def add(self, count: int, reasons: list[str]) -> None:
        self.unplaced += count
        for reason in reasons:
            if reason not in self.reasons:
                self.reasons.append(reason)

    def message(self) -> str:
        detail = "; ".join(self.reasons) or "not enough resources"
        return f"{self.unplaced}/{self.total_tasks} tasks unschedulable: {detail}"
