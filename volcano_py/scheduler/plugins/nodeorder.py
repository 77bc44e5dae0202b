"""nodeorder: kube-scheduler's scores, weighted as Volcano's nodeorder weights them (``leastrequested.weight``
1, ``mostrequested.weight`` 0, ``balancedresource.weight`` 1, ``nodeaffinity.weight`` 2,
``tainttoleration.weight`` 3, ``podaffinity.weight`` 2). Least and most requested look at cpu and memory;
the balance at cpu, memory and nvidia.com/gpu, scoring how the pod changes it (Kubernetes 1.36, which
Volcano vendors); node affinity preference and PreferNoSchedule taints are fixed per class; preferred pod
(anti-)affinity follows current placements."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from volcano_py.log import get_logger
from volcano_py.resources import CPU, GPU, MEMORY

from ..framework.arguments import Arguments, ConfError
from ..framework.classes import TaskClass
from ..framework.extension import FloatArray, IntArray
from ..framework.nodetable import NodeTable
from ..framework.session import Session
from . import scoring
from .matching import NodeLabels, SelectorError, untolerated
from .podaffinity import preferred_affinity_raw

log = get_logger(__name__)
_SOFT = frozenset({"PreferNoSchedule"})
_WEIGHTS = {
    "leastrequested.weight": 1,
    "mostrequested.weight": 0,
    "balancedresource.weight": 1,
    "nodeaffinity.weight": 2,
    "tainttoleration.weight": 3,
    "podaffinity.weight": 2,
}
# Volcano's scores not computed here (the snapshot carries no images or spread constraints): a weight of 0
# says as much and is accepted; any other weight is refused, since it could not be honoured.
_UNSCORED = {
    "imagelocality.weight": "image locality is not scored (the scheduler does not track node images)",
    "podtopologyspread.weight": "pod topology spread is not scored",
    "selectorspread.weight": "selector spread is not scored",
}


# Classes whose fixed scores one set of nodes keeps (an array over every node each); then they start over.
_FIXED_KEPT = 256


@dataclass
class _NodeFacts:
    """What nodeorder reads of the nodes alone, kept by the snapshot builder while they stay the same (the
    builder drops it when a node changes): the labels, the PreferNoSchedule taints grouped so that a class is
    checked once per distinct set, the allocatable cpu and memory, and each class's fixed scores by weights.
    At 5,000 nodes the agent scheduler opens a session per pod, and working these out anew was most of
    nodeorder's share of it."""

    labels: NodeLabels
    soft_taints: list[tuple[tuple[Mapping[str, Any], ...], IntArray]]
    dims: IntArray
    # cpu and memory allocatable, and the nvidia.com/gpu column (None: no node has one), for the balance.
    alloc: FloatArray
    gpu: int | None
    # Whether every node has cpu and memory (the two-resource formulas written out need it).
    both: bool
    fixed: dict[Hashable, dict[Hashable, FloatArray]] = field(default_factory=dict)

    @classmethod
    def of(cls, ssn: Session) -> _NodeFacts:
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
        labels = NodeLabels([n.labels for n in ssn.nodes], [n.name for n in ssn.nodes])
        table = ssn.table
        dims = np.array([table.index[n] for n in (CPU, MEMORY) if n in table.index], dtype=np.int64)
        alloc = table.allocatable[:, dims].astype(np.float64)
        taint_rows = [(soft[key], np.array(rows, dtype=np.int64)) for key, rows in groups.items()]
        both = len(dims) == 2 and bool((alloc > 0).all())
        return cls(labels, taint_rows, dims, alloc, table.index.get(GPU), both)


class NodeOrderPlugin:
    name = "nodeorder"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known(list(_WEIGHTS) + list(_UNSCORED))
        self.weights = {key: arguments.get_int(key, default, minimum=0) for key, default in _WEIGHTS.items()}
        self._weights_key = tuple(self.weights.values())
        for key, why in _UNSCORED.items():
            if arguments.get_int(key, 0, minimum=0):
                raise ConfError(
                    f"plugin nodeorder: {key}: {arguments.values[key]!r} is not supported: {why}; "
                    "set it to 0 or remove it"
                )
        self.dims = np.zeros(0, dtype=np.int64)
        self.labels = NodeLabels([], [])
        self._static: dict[Hashable, FloatArray] = {}
        self.soft_taints: list[tuple[tuple[Mapping[str, Any], ...], IntArray]] = []
        self.alloc = np.zeros((0, 2), dtype=np.float64)
        self.gpu: int | None = None
        self.both = False

    def on_session_open(self, ssn: Session) -> None:
        facts = ssn.snapshot.node_facts.get(self.name)
        if not isinstance(facts, _NodeFacts):
            facts = ssn.snapshot.node_facts[self.name] = _NodeFacts.of(ssn)
        self.dims = facts.dims
        self.alloc, self.gpu, self.both = facts.alloc, facts.gpu, facts.both
        self.labels, self.soft_taints = facts.labels, facts.soft_taints
        # Fixed scores depend on the weights too: two nodeorder entries of one conf keep theirs apart.
        self._static = facts.fixed.setdefault(self._weights_key, {})
        if len(self._static) > _FIXED_KEPT:
            self._static.clear()

    def on_session_close(self, ssn: Session) -> None:
        self._static = {}

    def _fixed(self, ssn: Session, klass: TaskClass) -> FloatArray:
        """Node affinity preference and taint toleration, normalised over all nodes, once per class."""
        cached = self._static.get(klass.constraint)
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
        self._static[klass.constraint] = out
        return out

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        table = ssn.table
        score = self._fixed(ssn, klass)[rows]
        w = self.weights
        if klass.has_pod_affinity and w["podaffinity.weight"]:
            # Depends on where pods are now, so never cached; such classes are placed pod by pod.
            raw = preferred_affinity_raw(ssn.nodes, self.labels, klass)[rows]
            low, high = (float(raw.min()), float(raw.max())) if raw.size else (0.0, 0.0)
            if high > low:
                score = score + w["podaffinity.weight"] * (raw - low) * scoring.MAX_NODE_SCORE / (high - low)
        if not (w["leastrequested.weight"] or w["mostrequested.weight"] or w["balancedresource.weight"]):
            return score
        gpu = self.gpu
        gpu_asked = gpu is not None and klass.vec[gpu] > 0 and w["balancedresource.weight"] > 0
        if len(self.dims) == 2 and self.both and not gpu_asked:
            return score + self._cpu_memory(table, klass, rows, extra)
        if w["leastrequested.weight"] or w["mostrequested.weight"]:
            alloc, _, after = _amounts(table, klass, rows, extra, self.dims)
            if w["leastrequested.weight"]:
                score = score + w["leastrequested.weight"] * scoring.least_requested(alloc, after)
            if w["mostrequested.weight"]:
                score = score + w["mostrequested.weight"] * scoring.most_requested(alloc, after)
        if w["balancedresource.weight"]:
            dims = np.append(self.dims, gpu) if gpu_asked and gpu is not None else self.dims
            balance = scoring.balanced(*_amounts(table, klass, rows, extra, dims))
            score = score + w["balancedresource.weight"] * balance
        return score

    def _cpu_memory(self, table: NodeTable, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        """The resource scores for a pod asking no nvidia.com/gpu, on nodes that all have cpu and memory:
        ``scoring``'s general formulas written out for two resources, several times faster. ``extra`` of
        the class are placed on each node already in this plan: the pod's change is from there."""
        w = self.weights
        c, m = self.dims
        req_c, req_m = klass.vec[c], klass.vec[m]
        alloc_c, alloc_m = self.alloc[rows, 0], self.alloc[rows, 1]
        before_c = table.used[rows, c] + extra * req_c
        before_m = table.used[rows, m] + extra * req_m
        # Fractions by division, as kube-scheduler computes them: a score on a whole-number boundary then
        # truncates the same way.
        fc = np.minimum((before_c + req_c) / alloc_c, 1.0)
        fm = np.minimum((before_m + req_m) / alloc_m, 1.0)
        score = np.zeros(len(rows), dtype=np.float64)
        if w["leastrequested.weight"]:
            # kube-scheduler's integer arithmetic, as scoring.least_requested (the epsilon keeps a whole
            # score such as 25 from reading as 24.999...).
            lc = np.floor((1.0 - fc) * scoring.MAX_NODE_SCORE + 1e-9)
            lm = np.floor((1.0 - fm) * scoring.MAX_NODE_SCORE + 1e-9)
            score += w["leastrequested.weight"] * np.floor((lc + lm) * 0.5)
        if w["mostrequested.weight"]:
            score += w["mostrequested.weight"] * (fc + fm) * 0.5 * scoring.MAX_NODE_SCORE
        if w["balancedresource.weight"]:
            half = scoring.MAX_NODE_SCORE / 2
            fc0 = np.minimum(before_c / alloc_c, 1.0)
            fm0 = np.minimum(before_m / alloc_m, 1.0)
            with_pod = np.floor((1 - np.abs((fc - fm) / 2)) * scoring.MAX_NODE_SCORE)
            without_pod = np.floor((1 - np.abs((fc0 - fm0) / 2)) * scoring.MAX_NODE_SCORE)
            score += w["balancedresource.weight"] * (half + np.floor((half + with_pod - without_pod) / 2))
        return score


def _amounts(
    table: NodeTable, klass: TaskClass, rows: IntArray, extra: IntArray, dims: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Of ``dims`` on the nodes of ``rows``: allocatable, used before the pod (``extra`` of its class placed
    there already in this plan), and used after it."""
    request = klass.vec[dims]
    before = table.used[np.ix_(rows, dims)] + np.outer(extra, request)
    return table.allocatable[np.ix_(rows, dims)], before, before + request
