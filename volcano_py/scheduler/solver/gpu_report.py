"""GPUs per HyperNode for the metrics: how many there are, how many pods hold, and how many are stranded.

Stranded is the solver's measure (``solver/fragmentation.py``) against the shapes of the pods waiting now:
free GPUs on a partly used node that not one waiting GPU pod could use. With nothing waiting nothing is
stranded (idle is not stranded). Pure: the cluster's JSON objects in, numbers out; the runner calls it once
per cycle on the snapshot it already took.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py import resources
from volcano_py.api.objects import labels_of, name_of, spec_of, status_of
from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.resources import GPU, Resource
from volcano_py.scheduler.solver.fragmentation import StrandedGpus, vector_of
from volcano_py.scheduler.solver.hypernode_tree import TopologyError, build_tree, hypernodes_from_objects

Obj = Mapping[str, Any]
_DIMS = (resources.CPU, resources.MEMORY, GPU)
_FINISHED = (PodPhase.SUCCEEDED, PodPhase.FAILED)


@dataclass(frozen=True, slots=True)
class HyperNodeGpus:
    """Whole GPUs under one HyperNode (milli-units divided out, as Volcano reports scalar resources)."""

    capacity: float
    allocated: float
    stranded: float


def hypernode_gpus(
    nodes: Sequence[Obj], pods: Iterable[Obj], hypernodes: Sequence[Obj]
) -> dict[str, HyperNodeGpus]:
    """``{hypernode name: its GPUs}``; empty when there are no HyperNodes or they do not form a tree."""
    if not hypernodes:
        return {}
    labels = {name_of(n): dict(labels_of(n)) for n in nodes}
    try:
        tree = build_tree(hypernodes_from_objects(hypernodes), labels)
    except (TopologyError, ValueError):
        return {}  # the scheduler reports a broken topology itself; the metric stays silent
    allocatable = {
        name_of(n): Resource(
            {k: resources.amount_of(k, v) for k, v in (status_of(n).get("allocatable") or {}).items()}
        )
        for n in nodes
    }
    used: dict[str, dict[str, int]] = {name: {} for name in allocatable}
    waiting: list[Resource] = []
    for pod in pods:
        if pod_phase(pod) in _FINISHED:
            continue
        spec = spec_of(pod)
        request = resources.pod_request(spec)
        node = spec.get("nodeName")
        if node in used:
            for name, value in request.items():
                used[node][name] = used[node].get(name, 0) + value
        elif not node and request.amount(GPU) > 0:
            waiting.append(request)
    measure = StrandedGpus(list(_DIMS), list(dict.fromkeys(waiting))) if waiting else None
    per_node: dict[str, tuple[int, int, int]] = {}
    for name, alloc in allocatable.items():
        held = Resource(used[name])
        free = vector_of(Resource({k: alloc.amount(k) - held.amount(k) for k in _DIMS}), _DIMS)
        in_use = any(v > 0 for v in held.values())
        stranded = measure.of(free, in_use) if measure else 0
        per_node[name] = (alloc.amount(GPU), held.amount(GPU), stranded)
    out: dict[str, HyperNodeGpus] = {}
    for hypernode in tree.tiers:
        members = [per_node[n] for n in tree.nodes(hypernode) if n in per_node]
        out[hypernode] = HyperNodeGpus(
            capacity=sum(m[0] for m in members) / 1000,
            allocated=sum(m[1] for m in members) / 1000,
            stranded=sum(m[2] for m in members) / 1000,
        )
    return out
