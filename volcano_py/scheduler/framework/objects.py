"""The session's input as the API's objects, and the one way to turn them into a ``Snapshot``.

Every reader of the scheduler (its runtime, the dashboard, the what-if behind ``vcctl job why``, the
simulator) hands the objects it holds to ``build_snapshot`` as one ``ClusterObjects``, so each kind the
plugins read (PodDisruptionBudgets for ``pdb``, ResourceQuotas for ``resourcequota``, Numatopologies for
``numa-aware``) reaches every session, and a malformed object is left out the same way everywhere: the
session runs without it and the caller gets an ``Unschedulable`` naming it (the runtime turns those into
Warning events; the other readers have no one to tell).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from volcano_py.api.shard import NodeShard, ShardingMode
from volcano_py.resources import Resource

from .job import JobInfo
from .node import NodeInfo, NodeUsage, QueueInfo
from .sharding import NO_SHARDING, Sharding, ShardScope, shard_scope
from .snapshot import Records, Snapshot, priority_values
from .task import TaskInfo

# The API's JSON as clients and informers hand it over (read-only here).
Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ClusterObjects:
    """Every kind one session reads, as the API's JSON (never mutated by the scheduler)."""

    nodes: Sequence[Obj] = ()
    pods: Sequence[Obj] = ()
    podgroups: Sequence[Obj] = ()
    queues: Sequence[Obj] = ()
    priority_classes: Sequence[Obj] = ()
    hypernodes: Sequence[Obj] = ()
    pdbs: Sequence[Obj] = ()
    resource_quotas: Sequence[Obj] = ()
    numatopologies: Sequence[Obj] = ()
    # resource.k8s.io (Dynamic Resource Allocation), for the predicates plugin.
    device_classes: Sequence[Obj] = ()
    resource_slices: Sequence[Obj] = ()
    resource_claims: Sequence[Obj] = ()
    # shard.volcano.sh NodeShards: read only by a scheduler with sharding on (``sharding.py``).
    nodeshards: Sequence[Obj] = ()
    # Node name -> its load, read from the conf's metrics source by the runtime (no API kind: empty for
    # readers without a metrics source, and then the usage plugin passes every node, as with stale data).
    node_usage: Mapping[str, NodeUsage] = field(default_factory=dict)
    # Bumped by the runtime's cache on every change it mirrors (0 for objects read once).
    generation: int = 0
    # Queue -> what another scheduler's pods hold in it (the agent scheduler's for the batch scheduler, and
    # the other way round): counted in the queue's allocation (``QueueInfo.held_elsewhere``).
    queue_charges: Mapping[str, Resource] = field(default_factory=dict)


# The API kinds of ``ClusterObjects`` (every field but the node usage and ``generation``), for code that
# walks all of them.
KINDS = tuple(
    f.name for f in fields(ClusterObjects) if f.name not in ("node_usage", "generation", "queue_charges")
)


@dataclass(frozen=True, slots=True)
class Unschedulable:
    """A pod or PodGroup the session could not place (or an object it could not read), with the reason to
    show on it."""

    obj: Mapping[str, Any]
    reason: str
    message: str
    # Seconds the object must have waited for this reason before it is told (0: at once).
    after: float = 0.0


def _keep_valid(
    objs: Iterable[Obj], check: Callable[[Obj], object], reason: str
) -> tuple[list[Obj], list[Unschedulable]]:
    good: list[Obj] = []
    bad: list[Unschedulable] = []
    for obj in objs:
        try:
            check(obj)
        except ValueError as exc:
            bad.append(Unschedulable(obj, reason, str(exc)))
            continue
        good.append(obj)
    return good, bad


def build_snapshot(
    objects: ClusterObjects,
    scheduler_names: Sequence[str],
    records: Records | None = None,
    *,
    sharding: Sharding = NO_SHARDING,
) -> tuple[Snapshot, list[Unschedulable]]:
    """The session's Snapshot of ``objects``; on a malformed object, the Snapshot without it and a warning
    naming it.

    ``records`` (the runtime's, kept from one cycle to the next) spares re-reading an object seen before;
    ``sharding``: the scheduler's sharding flags, which make the snapshot carry its shard's nodes. A
    malformed NodeShard is left out like any other object (so, when it is this scheduler's own, its nodes
    are none in hard mode, until it is fixed).
    """
    shards, bad_shards = (
        ([], [])
        if sharding.mode is ShardingMode.NONE
        else _keep_valid(objects.nodeshards, NodeShard.model_validate, "Invalid")
    )
    scope = shard_scope(sharding, shards)
    try:
        return _build(objects, objects, scheduler_names, records, scope), bad_shards
    except ValueError:
        pass  # find the culprit(s) one by one: slow, and only when something is wrong
    priority_classes, bad_pc = _keep_valid(
        objects.priority_classes, lambda pc: priority_values([pc]), "Invalid"
    )
    prio, _ = priority_values(priority_classes)
    nodes, bad_nodes = _keep_valid(objects.nodes, NodeInfo.from_node, "Invalid")
    queues, bad_queues = _keep_valid(objects.queues, QueueInfo.from_queue, "Invalid")
    podgroups, bad_pgs = _keep_valid(
        objects.podgroups, lambda pg: JobInfo.from_podgroup(pg, priority_classes=prio), "Unschedulable"
    )
    pods, bad_pods = _keep_valid(
        objects.pods, lambda pod: TaskInfo.from_pod(pod, priority_classes=prio), "FailedScheduling"
    )
    valid = ClusterObjects(
        nodes=nodes, pods=pods, podgroups=podgroups, queues=queues, priority_classes=priority_classes
    )
    snapshot = _build(objects, valid, scheduler_names, records, scope)
    return snapshot, bad_shards + bad_pc + bad_nodes + bad_queues + bad_pgs + bad_pods


def _build(
    objects: ClusterObjects,
    valid: ClusterObjects,
    scheduler_names: Sequence[str],
    records: Records | None,
    shard: ShardScope | None,
) -> Snapshot:
    return Snapshot.build(
        nodes=valid.nodes,
        pods=valid.pods,
        podgroups=valid.podgroups,
        queues=valid.queues,
        priority_classes=valid.priority_classes,
        hypernodes=objects.hypernodes,
        pdbs=objects.pdbs,
        resource_quotas=objects.resource_quotas,
        numatopologies=objects.numatopologies,
        device_classes=objects.device_classes,
        resource_slices=objects.resource_slices,
        resource_claims=objects.resource_claims,
        node_usage=objects.node_usage,
        queue_charges=objects.queue_charges,
        scheduler_names=scheduler_names,
        records=records,
        shard=shard,
    )
