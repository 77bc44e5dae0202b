"""Snapshot: the cluster at one instant, built from plain Kubernetes JSON dicts.

Every reader feeds the scheduler through ``objects.build_snapshot``, over ``Snapshot.build``. A snapshot
serves exactly one session: the session updates its tasks and nodes in place as it decides, which is what
keeps a cycle cheap; build a fresh snapshot for the next cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from volcano_py.api import constants as k

from . import dra
from .extenders import ExtenderAnswers
from .job import JobInfo
from .node import NodeInfo, NodeUsage, QueueInfo
from .shadow import ShadowSource
from .status import OCCUPYING_STATUSES, TaskStatus
from .task import TaskInfo

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
        name = (pc.get("metadata") or {}).get("name") or ""
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
    """What one snapshot parsed, kept for the next: each version of an object is read once.

    The runtime's informers replace an object's dict when the object changes and never change a dict they
    handed out, so a dict's identity stands for its version: the same dict next cycle is the same record.
    Each snapshot still gets records of its own (``fresh()`` twins), because a session changes its tasks,
    nodes and jobs as it decides. Only objects seen in the last snapshot are kept, so memory follows the
    cluster. A change of PriorityClasses drops everything (pods and PodGroups carry their priority).
    """

    __slots__ = ("_by_uid", "_priorities", "jobs", "keep", "nodes", "slices", "tasks")

    def __init__(self, *, keep: bool = True) -> None:
        # keep=False: a one-off build (the simulator, a what-if, a test) reads everything and keeps nothing.
        self.keep = keep
        self._priorities: dict[str, int] = {}
        self.tasks: _Kept[TaskInfo] = _Kept()
        self.nodes: _Kept[NodeInfo] = _Kept()
        self.jobs: _Kept[JobInfo] = _Kept()
        # ResourceSlices as the DRA allocator reads them (None: unreadable), read when a session asks.
        self.slices: _Kept[dra.SliceDevices | None] = _Kept()
        # The last build's pods by uid, made only when a new version of some pod is met (``_last_pod``).
        self._by_uid: dict[str, tuple[Obj, TaskInfo]] | None = None

    def begin(self, priorities: dict[str, int]) -> None:
        self._by_uid = None
        if priorities != self._priorities:
            self.tasks, self.nodes, self.jobs = _Kept(), _Kept(), _Kept()
            self._priorities = dict(priorities)

    def end(self) -> None:
        for kept in (self.tasks, self.nodes, self.jobs, self.slices):
            kept.turn()
        self._by_uid = None

    def task(self, pod: Obj) -> TaskInfo:
        if not self.keep:
            return self._parse_pod(pod)
        return self.tasks.read(pod, self._parse_pod).fresh()

    def node(self, node: Obj) -> NodeInfo:
        if not self.keep:
            return NodeInfo.from_node(node)
        return self.nodes.read(node, NodeInfo.from_node).fresh()

    def slice(self, obj: Obj) -> dra.SliceDevices | None:
        if not self.keep:
            return dra.read_slice_or_none(obj)
        return self.slices.read(obj, dra.read_slice_or_none)

    def job(self, podgroup: Obj) -> JobInfo:
        if not self.keep:
            return self._parse_podgroup(podgroup)
        return self.jobs.read(podgroup, self._parse_podgroup).fresh()

    def _parse_pod(self, pod: Obj) -> TaskInfo:
        if self.keep:
            uid = (pod.get("metadata") or {}).get("uid")
            last = self._last_pod(uid) if uid else None
            if last is not None:
                revised = last[1].revised(last[0], pod)
                if revised is not None:
                    return revised
        return TaskInfo.from_pod(pod, priority_classes=self._priorities)

    def _last_pod(self, uid: str) -> tuple[Obj, TaskInfo] | None:
        """The version of pod ``uid`` the last build read, and its record. The index is made on the first
        new version a build meets, so a build with none costs nothing more."""
        if self._by_uid is None:
            self._by_uid = {entry[1].uid: entry for entry in self.tasks.last.values()}
        return self._by_uid.get(uid)

    def _parse_podgroup(self, podgroup: Obj) -> JobInfo:
        return JobInfo.from_podgroup(podgroup, priority_classes=self._priorities)


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
    consumed: bool = False

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
        scheduler_names: Iterable[str] = (k.SCHEDULER_NAME,),
        records: Records | None = None,
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
        records.begin(prio)
        node_list = sorted((records.node(n) for n in nodes), key=lambda n: n.name)
        by_name = {n.name: n for n in node_list}
        queue_map = {q.name: q for q in (QueueInfo.from_queue(q) for q in queues)}
        queue_map.setdefault(k.DEFAULT_QUEUE, QueueInfo(name=k.DEFAULT_QUEUE))
        jobs: dict[str, JobInfo] = {}
        for pg in podgroups:
            job = records.job(pg)
            jobs[job.uid] = job
        orphans: list[Orphan] = []
        claims = tuple(resource_claims)
        claim_index: dict[str, dra.Claim] | None = None
        for pod in pods:
            task = records.task(pod)
            if task.claims_used and task.status is TaskStatus.PENDING:
                if claim_index is None:
                    claim_index = {c.key: c for c in (dra.read_claim(obj) for obj in claims)}
                # Pods differ by their claims' state, which is not in the pod: this snapshot's twin says it.
                base = task.class_key if isinstance(task.class_key, tuple) else (task.class_key,)
                task.class_key = (*base, dra.claims_class_key(task.pod, claim_index))
            node = by_name.get(task.node_name) if task.node_name else None
            if node is not None and task.status in OCCUPYING_STATUSES:
                node.add_task(task)
            if task.scheduler_name not in ours:
                continue
            if task.job_id is None:
                if task.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
                    continue
                job = JobInfo.shadow_for(task)
                jobs[job.uid] = job
                task.job_id = job.uid
                job.add_task(task)
                continue
            owner = jobs.get(task.job_id)
            if owner is None:
                # Only a pod still waiting for a node is ours to report: a bound, running or finished pod of a
                # deleted PodGroup (a completed job's group is deleted by its owner) needs no scheduling, and
                # an event on each of them every cycle and every restart grows with the cluster's history.
                if task.status is TaskStatus.PENDING:
                    orphans.append(Orphan(task, f"PodGroup {task.job_id} not found"))
                continue
            owner.add_task(task)
        for job in jobs.values():
            if job.queue not in queue_map:
                for task in job.pending_tasks:
                    orphans.append(Orphan(task, f"queue {job.queue} of PodGroup {job.uid} not found"))
        records.end()
        return cls(
            nodes=node_list,
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
            claim_index=claim_index,
            slice_reader=records.slice,
            node_usage=dict(node_usage or {}),
            orphans=orphans,
        )
