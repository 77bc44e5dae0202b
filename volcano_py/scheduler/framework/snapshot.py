"""Snapshot: the cluster at one instant, built from plain Kubernetes JSON dicts.

Every reader feeds the scheduler through ``objects.build_snapshot``, over ``Snapshot.build``. A snapshot
serves exactly one session: the session updates its tasks, nodes and jobs in place as it decides, which is
what keeps a cycle cheap, and records what it changed (``Touched``); build a fresh snapshot for the next
cycle. With ``Records`` kept by the caller, that next build starts from this one's views (``views.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from volcano_py.api import constants as k
from volcano_py.api.objects import name_of
from volcano_py.resources import Resource

from . import dra
from .extenders import ExtenderAnswers
from .job import JobInfo
from .node import NodeInfo, NodeUsage, QueueInfo
from .nodetable import NodeTable
from .shadow import ShadowSource
from .sharding import ShardScope
from .steady import SteadyJobs
from .task import TaskInfo
from .views import Reset, Touched, Views

Obj = Mapping[str, Any]
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Orphan:
    """A pod for us that the session cannot schedule, with why (the runtime turns it into an event)."""

    task: TaskInfo
    reason: str


def priority_values(priority_classes: Iterable[Obj]) -> tuple[dict[str, int], int]:
    """PriorityClass name -> value, and the global default value (0 when no class is globalDefault)."""
    values: dict[str, int] = {}
    default = 0
    for pc in priority_classes:
        name = name_of(pc)
        value = pc.get("value", 0)
        if not isinstance(value, int):
            raise ValueError(f"PriorityClass {name}: value must be an integer, got {value!r}")
        values[name] = value
        if pc.get("globalDefault"):
            default = value
    values.setdefault("", default)
    return values, default


class _Kept(Generic[R]):
    """Parsed records of one kind, by the identity of the dict each was read from (this build, the last)."""

    __slots__ = ("last", "seen")

    def __init__(self) -> None:
        self.last: dict[int, tuple[Obj, R]] = {}
        self.seen: dict[int, tuple[Obj, R]] = {}

    def read(self, obj: Obj, parse: Callable[[Obj], R]) -> R:
        key = id(obj)
        entry = self.last.get(key)
        if entry is None or entry[0] is not obj:  # the dict is kept too, so its id cannot be reused meanwhile
            entry = (obj, parse(obj))
        self.seen[key] = entry
        return entry[1]

    def turn(self) -> None:
        self.last, self.seen = self.seen, {}


class Records:
    """What the last snapshot was built from, kept for the next: each version of an object is read once,
    and the views (nodes with their tasks, jobs, the node table) are brought up to date by what changed
    instead of being built again (``views.Views``).

    The runtime's informers replace an object's dict when the object changes and never change a dict they
    handed out, so a dict's identity stands for its version. A snapshot is good until the next one is built
    from the same records: the next build first undoes what its session changed, and takes its objects on.
    A change of PriorityClasses or of the schedulers served reads everything again (pods and PodGroups carry
    their priority), as does a node that comes or goes.
    """

    __slots__ = ("_last", "_spare", "keep", "slices", "views")

    def __init__(self, *, keep: bool = True) -> None:
        # keep=False: a one-off build (a test, a reader of one snapshot) reads everything and keeps nothing.
        self.keep = keep
        self.views: Views | None = None
        # Views left half brought up to date by a bad object: their records (as read) are still good.
        self._spare: Views | None = None
        # The last snapshot built, whose session's changes the next build undoes.
        self._last: Snapshot | None = None
        # ResourceSlices as the DRA allocator reads them (None: unreadable), read when a session asks.
        self.slices: _Kept[dra.SliceDevices | None] = _Kept()

    def fork(self) -> Records:
        """Records whose first build starts from what these have read (each object's parse, never changed
        once made) but that share none of their views: a snapshot built from one is never changed by a
        build from the other. The what-if keeps the cluster as it is for reading, and runs its trials'
        sessions over the fork, reading each pod once for both."""
        fork = Records(keep=self.keep)
        if self.keep:
            fork._spare = self.views or self._spare
        return fork

    def slice(self, obj: Obj) -> dra.SliceDevices | None:
        if not self.keep:
            return dra.read_slice_or_none(obj)
        return self.slices.read(obj, dra.read_slice_or_none)

    def views_for(
        self,
        ours: frozenset[str],
        priorities: dict[str, int],
        nodes: Sequence[Obj],
        pods: Sequence[Obj],
        podgroups: Sequence[Obj],
        claims: Sequence[Obj],
    ) -> Views:
        last, self._last = self._last, None
        touched = None
        if last is not None:
            last.superseded = True
            touched = last.touched if last.consumed else None
        views, self.views = self.views, None
        parsed = self._spare
        self._spare = None
        if views is not None and views.ours == ours and views.priorities == priorities:
            try:
                views.update(nodes, pods, podgroups, claims, touched)
            except Reset:
                parsed = views
            except Exception:
                self._spare = views
                raise
            else:
                self.views = views
                return views
        if parsed is not None and parsed.priorities != priorities:
            parsed = None
        fresh = Views(ours, priorities, keep=self.keep)
        try:
            fresh.fill(nodes, pods, podgroups, claims, parsed)
        except Exception:
            self._spare = parsed
            raise
        if self.keep:
            self.views = fresh
        return fresh

    def built(self, snapshot: Snapshot) -> None:
        if self.keep:
            self._last = snapshot
        self.slices.turn()


def _seq(objs: Iterable[Obj]) -> Sequence[Obj]:
    return objs if isinstance(objs, list | tuple) else list(objs)


@dataclass(slots=True, eq=False)
class Snapshot:
    nodes: list[NodeInfo]
    jobs: dict[str, JobInfo]
    queues: dict[str, QueueInfo]
    priority_classes: dict[str, int] = field(default_factory=dict)
    hypernodes: tuple[Obj, ...] = ()
    # PodDisruptionBudgets and ResourceQuotas as the API returns them (the pdb and resourcequota plugins).
    pdbs: tuple[Obj, ...] = ()
    resource_quotas: tuple[Obj, ...] = ()
    # Numatopology objects (nodeinfo.volcano.sh), one per node, for the numa-aware plugin.
    numatopologies: tuple[Obj, ...] = ()
    # DeviceClasses, ResourceSlices and ResourceClaims (resource.k8s.io), for Dynamic Resource Allocation.
    device_classes: tuple[Obj, ...] = ()
    resource_slices: tuple[Obj, ...] = ()
    resource_claims: tuple[Obj, ...] = ()
    # ``resource_claims`` read, by ``namespace/name`` (``dra_claims``).
    claim_index: dict[str, dra.Claim] | None = None
    # How ``dra_slices`` reads a slice (the caller's records keep what was read for the next snapshot).
    slice_reader: Callable[[Obj], dra.SliceDevices | None] = dra.read_slice_or_none
    # The conf's HTTP extender's answers, asked by the runtime before the session (None: not asked).
    extender: ExtenderAnswers | None = None
    # A blocked FIFO head's shadow, from the runtime's forecast of this cluster (None: no backfill, strict).
    shadows: ShadowSource | None = None
    # Node name -> its load from the metrics source (the usage plugin); nodes without a reading are absent.
    node_usage: Mapping[str, NodeUsage] = field(default_factory=dict)
    orphans: list[Orphan] = field(default_factory=list)
    # The nodes of this scheduler's NodeShard and what the session does with them (None: sharding is off).
    shard: ShardScope | None = None
    # The tasks on ``nodes`` with any pod (anti-)affinity (None: not gathered; ``affine_tasks`` looks).
    affine: tuple[TaskInfo, ...] | None = None
    # What plugins derive from ``nodes`` alone, by plugin name: the builder hands the same dict to the next
    # snapshot while the nodes stay the same, so what is in it must never be changed once made.
    node_facts: dict[str, Any] = field(default_factory=dict)
    # The node table of ``nodes`` kept by the builder (None: the session builds its own); sessions copy it.
    table: NodeTable | None = None
    # The jobs nothing happened to since a session settled them, summed per queue (None: a one-off build,
    # every job is walked).
    steady: SteadyJobs | None = None
    # What the session over this snapshot changed in its views (the next build from the same records
    # undoes it).
    touched: Touched = field(default_factory=Touched)
    consumed: bool = False
    # A newer snapshot was built from the same records, which changed the views this one shares.
    superseded: bool = False

    def affine_tasks(self) -> tuple[TaskInfo, ...]:
        """The tasks on the nodes with any pod (anti-)affinity: those whose terms bind other pods."""
        if self.affine is None:
            self.affine = tuple(t for n in self.nodes for t in n.tasks.values() if t.affinity)
        return self.affine

    def dra_slices(self) -> list[dra.SliceDevices]:
        """The ResourceSlices as the DRA allocator reads them, unreadable ones left out."""
        return [s for s in (self.slice_reader(obj) for obj in self.resource_slices) if s is not None]

    def dra_claims(self) -> dict[str, dra.Claim]:
        """The ResourceClaims as the allocator reads them, by ``namespace/name`` (read once per snapshot)."""
        if self.claim_index is None:
            self.claim_index = {c.key: c for c in (dra.read_claim(obj) for obj in self.resource_claims)}
        return self.claim_index

    @classmethod
    def build(
        cls,
        *,
        nodes: Iterable[Obj] = (),
        pods: Iterable[Obj] = (),
        podgroups: Iterable[Obj] = (),
        queues: Iterable[Obj] = (),
        priority_classes: Iterable[Obj] = (),
        hypernodes: Iterable[Obj] = (),
        pdbs: Iterable[Obj] = (),
        resource_quotas: Iterable[Obj] = (),
        numatopologies: Iterable[Obj] = (),
        device_classes: Iterable[Obj] = (),
        resource_slices: Iterable[Obj] = (),
        resource_claims: Iterable[Obj] = (),
        node_usage: Mapping[str, NodeUsage] | None = None,
        queue_charges: Mapping[str, Resource] | None = None,
        scheduler_names: Iterable[str] = (k.SCHEDULER_NAME,),
        records: Records | None = None,
        shard: ShardScope | None = None,
    ) -> Snapshot:
        """Group pods into jobs by ``scheduling.k8s.io/group-name`` and charge every pod to its node.

        Pods of other schedulers and terminating pods count on their nodes (terminating ones as
        releasing). A pending pod of ours naming a PodGroup that does not exist becomes an ``Orphan``; a
        pod of ours naming none gets a one-pod shadow job in the ``default`` queue. A ``default`` queue is
        assumed when none is given, as Volcano creates one at start.

        With ``records`` (kept by the caller from one build to the next), objects already read in the last
        build are not read again; their dicts must not have been changed in place since.
        """
        ours = frozenset(scheduler_names)
        prio, _default = priority_values(priority_classes)
        if records is None:
            records = Records(keep=False)
        claims = tuple(resource_claims)
        views = records.views_for(ours, prio, _seq(nodes), _seq(pods), _seq(podgroups), claims)
        queue_map = {q.name: q for q in (QueueInfo.from_queue(q) for q in queues)}
        queue_map.setdefault(k.DEFAULT_QUEUE, QueueInfo(name=k.DEFAULT_QUEUE))
        for name, held in (queue_charges or {}).items():
            if name in queue_map:
                queue_map[name].held_elsewhere = held
        jobs = views.all_jobs()
        orphans = [Orphan(task, f"PodGroup {task.job_id} not found") for task in views.orphaned()]
        for job in jobs.values():
            if job.queue not in queue_map:
                for task in job.pending_tasks:
                    orphans.append(Orphan(task, f"queue {job.queue} of PodGroup {job.uid} not found"))
        snapshot = cls(
            nodes=list(views.nodes),
            jobs=jobs,
            queues=queue_map,
            priority_classes=prio,
            hypernodes=tuple(hypernodes),
            pdbs=tuple(pdbs),
            resource_quotas=tuple(resource_quotas),
            numatopologies=tuple(numatopologies),
            device_classes=tuple(device_classes),
            resource_slices=tuple(resource_slices),
            resource_claims=claims,
            claim_index=views.claim_index,
            slice_reader=records.slice,
            node_usage=dict(node_usage or {}),
            orphans=orphans,
            shard=shard,
            table=views.table,
            steady=views.steady,
            affine=tuple(views.affine.values()),
            node_facts=views.node_facts,
        )
        records.built(snapshot)
        return snapshot
