"""The dashboard's nodes and GPUs, grouped by HyperNode: what each node holds, who uses its GPUs, and which
scheduler owns it (its NodeShard, when the sharding controller runs)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api.shard import NodeOwner, node_owners, read_nodeshards
from volcano_py.resources import GPU, PODS
from volcano_py.scheduler.core import (
    Snapshot,
    StrandedGpus,
    TaskStatus,
    TopologyError,
    build_tree,
    hypernodes_from_objects,
    vector_of,
)

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class NodeCell:
    """One node's GPUs, whole GPUs: ``used + free == gpus``; ``stranded`` of the free can serve no waiting
    pod shape."""

    name: str
    gpus: int
    used: int
    free: int
    stranded: int
    ready: bool
    cordoned: bool
    # The NodeShard that has it (None: no shard lists it, or no sharding at all).
    owner: NodeOwner | None = None


@dataclass(frozen=True, slots=True)
class Group:
    """A HyperNode (or the nodes in none) with its child HyperNodes and its own member nodes."""

    name: str
    tier: int | None
    children: tuple[Group, ...] = ()
    nodes: tuple[NodeCell, ...] = ()

    def cells(self) -> list[NodeCell]:
        return [*self.nodes, *(n for child in self.children for n in child.cells())]


@dataclass(frozen=True, slots=True)
class GpuTotals:
    gpus: int = 0
    used: int = 0
    free: int = 0
    stranded: int = 0
    nodes: int = 0


def node_cells(snapshot: Snapshot, nodeshards: Iterable[Obj] = ()) -> list[NodeCell]:
    # A malformed NodeShard is left out (the scheduler leaves it out too, and warns about it on the health
    # page): its nodes show no owner rather than the page none.
    owners = node_owners(read_nodeshards(nodeshards)[0])
    waiting = list(
        dict.fromkeys(t.resreq for job in snapshot.jobs.values() for t in job.tasks_in(TaskStatus.PENDING))
    )
    dims = sorted({d for n in snapshot.nodes for d in n.allocatable} | {d for r in waiting for d in r})
    measure = StrandedGpus(dims, waiting)
    cells = []
    for node in snapshot.nodes:
        alloc = node.allocatable
        free = (alloc - node.used).clamp_min_zero()
        gpus = alloc.amount(GPU) // 1000
        free_gpus = min(gpus, free.amount(GPU) // 1000)
        in_use = any(t.resreq.amount(d) for t in node.tasks.values() for d in t.resreq if d != PODS)
        stranded = measure.of(vector_of(free, dims), in_use) // 1000 if waiting else 0
        cells.append(
            NodeCell(
                name=node.name,
                gpus=gpus,
                used=gpus - free_gpus,
                free=free_gpus,
                stranded=min(stranded, free_gpus),
                ready=node.ready,
                cordoned=node.unschedulable,
                owner=owners.get(node.name),
            )
        )
    return cells


def node_groups(cells: Sequence[NodeCell], snapshot: Snapshot) -> list[Group]:
    """Top-tier HyperNodes (spines) holding lower ones (racks) holding nodes; then nodes in no HyperNode."""
    by_name = {cell.name: cell for cell in cells}
    try:
        specs = hypernodes_from_objects(snapshot.hypernodes)
        tree = build_tree(specs, {n.name: n.labels for n in snapshot.nodes}) if specs else None
    except TopologyError:
        tree = None
    if tree is None:
        return [Group("all nodes", None, nodes=tuple(cells))] if cells else []

    def group(name: str) -> Group:
        return Group(
            name,
            tree.tiers[name],
            children=tuple(group(ch) for ch in sorted(tree.children.get(name, ()))),
            nodes=tuple(by_name[n] for n in sorted(tree.node_members.get(name, ())) if n in by_name),
        )

    tops = sorted(name for name in tree.tiers if name not in tree.parent)
    groups = [group(name) for name in tops]
    loose = tuple(cell for cell in cells if cell.name not in tree.leaf_of_node)
    if loose:
        groups.append(Group("nodes in no HyperNode", None, nodes=loose))
    return groups


def gpu_totals(cells: Sequence[NodeCell]) -> GpuTotals:
    return GpuTotals(
        gpus=sum(c.gpus for c in cells),
        used=sum(c.used for c in cells),
        free=sum(c.free for c in cells),
        stranded=sum(c.stranded for c in cells),
        nodes=len(cells),
    )
