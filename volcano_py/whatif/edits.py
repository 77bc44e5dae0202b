"""The changes a what-if tries, made on copies of the cluster's objects (the caller's are never changed)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from volcano_py.api import constants as k
from volcano_py.api.bodies.podgroup import podgroup_written_status, with_podgroup_status
from volcano_py.api.objects import (
    labels_of,
    metadata_of,
    name_of,
    namespace_of,
    owner_named,
    spec_of,
    status_of,
    uid_of,
)
from volcano_py.api.scheduling import PodGroupPhase, QueueState
from volcano_py.resources import Resource
from volcano_py.scheduler.core import (
    ClusterObjects,
    Snapshot,
    TopologyError,
    build_tree,
    hypernodes_from_objects,
)

from .model import AddNodes, Change, EndJobs, RaiseWeight

Obj = dict[str, Any]


def shown_name(podgroup: Mapping[str, Any]) -> str:
    """A PodGroup as a person names it: the Volcano Job owning it, else the PodGroup (``namespace/name``)."""
    return f"{namespace_of(podgroup) or 'default'}/{owner_named(podgroup, k.JOB_KIND) or name_of(podgroup)}"


def edit_queues(objs: ClusterObjects, edits: dict[str, Callable[[Obj], None]]) -> ClusterObjects:
    queues = []
    for queue in objs.queues:
        edit = edits.get(name_of(queue))
        if edit is not None:
            queue = copy.deepcopy(queue)
            edit(queue)
        queues.append(queue)
    return replace(objs, queues=tuple(queues))


def with_phase(podgroup: Obj, phase: PodGroupPhase) -> Obj:
    """A copy of ``podgroup`` in ``phase`` (as the scheduler's status write leaves it)."""
    return with_podgroup_status(podgroup, {**(podgroup_written_status(podgroup) or {}), "phase": phase.value})


def set_capability(capability: Resource | None) -> Callable[[Obj], None]:
    def edit(queue: Obj) -> None:
        spec = queue.setdefault("spec", {})
        if capability is None:
            spec.pop("capability", None)
        else:
            spec["capability"] = capability.to_quantities()

    return edit


def open_queue(queue: Obj) -> None:
    queue.setdefault("status", {})["state"] = QueueState.OPEN.value


def _freed_claim(claim: Obj, pod_uids: set[str]) -> Obj:
    """The claim once the pods ``pod_uids`` are gone: a claim only they held is deallocated (as
    kube-controller-manager does), so its DRA devices are free."""
    status = status_of(claim)
    users = {str(r.get("uid")) for r in status.get("reservedFor") or ()}
    if not users or not users <= pod_uids:
        return claim
    return {**claim, "status": {k: v for k, v in status.items() if k not in ("allocation", "reservedFor")}}


def without_jobs(objs: ClusterObjects, view: Snapshot, victims: Iterable[str]) -> ClusterObjects:
    gone = set(victims)
    pod_uids = {t.uid for uid in gone for t in view.jobs[uid].tasks.values()}
    return replace(
        objs,
        resource_claims=tuple(_freed_claim(c, pod_uids) for c in objs.resource_claims),
        pods=tuple(p for p in objs.pods if uid_of(p) not in pod_uids),
        podgroups=tuple(
            pg for pg in objs.podgroups if f"{namespace_of(pg) or 'default'}/{name_of(pg)}" not in gone
        ),
    )


def with_nodes(objs: ClusterObjects, template: Obj, count: int, has_tree: bool) -> ClusterObjects:
    base = name_of(template)
    added: list[Obj] = []
    for i in range(count):
        name = f"{base}-whatif-{i + 1}"
        node = copy.deepcopy(template)
        node = {
            **node,
            "metadata": {
                **metadata_of(node),
                "name": name,
                "labels": {**labels_of(node), "kubernetes.io/hostname": name},
            },
            # Schedulable: a node cordoned like the template would help no job.
            "spec": {key: value for key, value in spec_of(node).items() if key != "unschedulable"},
        }
        added.append(node)
    slices = tuple(_slices_like(objs.resource_slices, base, [name_of(n) for n in added]))
    hypernodes = objs.hypernodes
    if has_tree and added:
        # New nodes a HyperNode's selector does not already take arrive as one new rack, so a job bound to
        # a tier-1 HyperNode can use them together.
        nodes = {name_of(n): labels_of(n) for n in (*objs.nodes, *added)}
        try:
            covered = set(build_tree(hypernodes_from_objects(hypernodes), nodes).leaf_of_node)
        except TopologyError:
            covered = set()
        loose = [name_of(n) for n in added if name_of(n) not in covered]
        if loose:
            rack: Obj = {
                "apiVersion": k.TOPOLOGY_API_VERSION,
                "kind": k.HYPERNODE_KIND,
                "metadata": {"name": f"{base}-whatif-rack"},
                "spec": {
                    "tier": 1,
                    "members": [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in loose],
                },
            }
            hypernodes = (*hypernodes, rack)
    return replace(
        objs,
        nodes=(*objs.nodes, *added),
        hypernodes=hypernodes,
        resource_slices=(*objs.resource_slices, *slices),
    )


def _slices_like(slices: Iterable[Obj], base: str, names: list[str]) -> Iterable[Obj]:
    """The template node's own ResourceSlices (its DRA devices), for each new node: a pool of its own."""
    mine = [s for s in slices if spec_of(s).get("nodeName") == base]
    for name in names:
        for piece in mine:
            spec = spec_of(piece)
            pool = {**(spec.get("pool") or {}), "name": f"{(spec.get('pool') or {}).get('name')}-{name}"}
            yield {
                **piece,
                "metadata": {"name": f"{name_of(piece)}-{name}"},
                "spec": {**spec, "nodeName": name, "pool": pool},
            }


def set_weight(weight: int) -> Callable[[Obj], None]:
    def edit(queue: Obj) -> None:
        queue.setdefault("spec", {})["weight"] = weight

    return edit


def apply_change(objs: ClusterObjects, view: Snapshot, change: Change, has_tree: bool) -> ClusterObjects:
    if isinstance(change, RaiseWeight):
        return edit_queues(objs, {change.queue: set_weight(change.to)})
    if isinstance(change, EndJobs):
        return without_jobs(objs, view, change.jobs)
    if isinstance(change, AddNodes):
        template = next(n for n in objs.nodes if name_of(n) == change.like)
        return with_nodes(objs, template, change.count, has_tree)
    return objs
