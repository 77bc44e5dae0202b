"""nodeorder: kube-scheduler's scores, weighted (``leastrequested.weight`` 1, ``mostrequested.weight`` 0,
``balancedresource.weight`` 1, ``nodeaffinity.weight`` 1, ``tainttoleration.weight`` 1). Resource scores
look at cpu and memory; node affinity preference and PreferNoSchedule taints are fixed per class."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from volcano_py.log import get_logger
from volcano_py.resources import CPU, MEMORY

from ..framework.arguments import Arguments
from ..framework.classes import TaskClass
from ..framework.extension import FloatArray, IntArray
from ..framework.session import Session
from . import scoring
from .matching import NodeLabels, SelectorError, untolerated

log = get_logger(__name__)
_SOFT = frozenset({"PreferNoSchedule"})
_WEIGHTS = {
    "leastrequested.weight": 1,
    "mostrequested.weight": 0,
    "balancedresource.weight": 1,
    "nodeaffinity.weight": 1,
    "tainttoleration.weight": 1,
}
# Accepted from Volcano confs but not scored: the snapshot carries no images and no soft pod affinity.
_UNSCORED = (
    "podaffinity.weight",
    "imagelocality.weight",
    "podtopologyspread.weight",
    "selectorspread.weight",
)


class NodeOrderPlugin:
    name = "nodeorder"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known(list(_WEIGHTS) + list(_UNSCORED))
        self.weights = {key: arguments.get_int(key, default, minimum=0) for key, default in _WEIGHTS.items()}
        for key in _UNSCORED:
            arguments.get_int(key, 0, minimum=0)
        self.dims = np.zeros(0, dtype=np.int64)
        self.labels = NodeLabels([], [])
        self._static: dict[Hashable, FloatArray] = {}
        self.soft_taints: list[tuple[tuple[Mapping[str, Any], ...], IntArray]] = []

    def on_session_open(self, ssn: Session) -> None:
        self.dims = np.array(
            [ssn.table.index[n] for n in (CPU, MEMORY) if n in ssn.table.index], dtype=np.int64
        )
        self.labels = NodeLabels([n.labels for n in ssn.nodes], [n.name for n in ssn.nodes])
        self._static = {}
        # Nodes grouped by their PreferNoSchedule taints, so a class is checked once per distinct set.
        groups: dict[tuple[tuple[str, str, str], ...], list[int]] = {}
        soft: dict[tuple[tuple[str, str, str], ...], tuple[Mapping[str, Any], ...]] = {}
        for row, node in enumerate(ssn.nodes):
            taints = tuple(t for t in node.taints if t.get("effect") in _SOFT)
            if taints:
                key = tuple(
                    sorted((str(t.get("key")), str(t.get("value")), str(t.get("effect"))) for t in taints)
                )
                groups.setdefault(key, []).append(row)
                soft[key] = taints
        self.soft_taints = [(soft[key], np.array(rows, dtype=np.int64)) for key, rows in groups.items()]

    def on_session_close(self, ssn: Session) -> None:
        self._static = {}

    def _fixed(self, ssn: Session, klass: TaskClass) -> FloatArray:
        """Node affinity preference and taint toleration, normalised over all nodes, once per class."""
        cached = self._static.get(klass.key)
        if cached is not None:
            return cached
        n = len(ssn.nodes)
        out = np.zeros(n, dtype=np.float64)
        preferred = (klass.affinity.get("nodeAffinity") or {}).get(
            "preferredDuringSchedulingIgnoredDuringExecution"
        ) or []
        if preferred and self.weights["nodeaffinity.weight"]:
            raw = np.zeros(n, dtype=np.float64)
            for term in preferred:
                try:
                    raw += self.labels.term(term.get("preference") or {}) * float(term.get("weight", 0))
                except SelectorError as err:
                    log.warning("preferred node affinity ignored", error=str(err))
            out += self.weights["nodeaffinity.weight"] * scoring.normalize(raw)
        if self.weights["tainttoleration.weight"]:
            raw = np.zeros(n, dtype=np.float64)
            for taints, rows in self.soft_taints:
                raw[rows] = len(untolerated(taints, klass.tolerations, _SOFT))
            out += self.weights["tainttoleration.weight"] * scoring.normalize(raw, reverse=True)
        self._static[klass.key] = out
        return out

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        table = ssn.table
        alloc = table.allocatable[np.ix_(rows, self.dims)]
        used = table.used[np.ix_(rows, self.dims)] + np.outer(extra + 1, klass.vec[self.dims])
        score = self._fixed(ssn, klass)[rows].copy()
        w = self.weights
        if w["leastrequested.weight"]:
            score += w["leastrequested.weight"] * scoring.least_requested(alloc, used)
        if w["mostrequested.weight"]:
            score += w["mostrequested.weight"] * scoring.most_requested(alloc, used)
        if w["balancedresource.weight"]:
            score += w["balancedresource.weight"] * scoring.balanced(alloc, used)
        return score
