"""NodeInfo and QueueInfo: a node and a queue as the scheduler sees them, read from their JSON; and a node's
load as the metrics source reports it (``NodeUsage``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from volcano_py.api.bodies.node import node_allocatable, node_ready, node_taints, node_unschedulable
from volcano_py.api.bodies.queue import (
    queue_affinity,
    queue_allocated,
    queue_capability,
    queue_dequeue_strategy,
    queue_deserved,
    queue_guarantee,
    queue_name,
    queue_parent,
    queue_priority,
    queue_reclaimable,
    queue_state,
    queue_weight,
)
from volcano_py.api.objects import annotations_of, creation_timestamp_of, labels_of, name_of
from volcano_py.api.scheduling import DequeueStrategy, QueueState
from volcano_py.resources import PODS, QuantityError, Resource, total

from .devices import NodeGpus, device_request, held_by, hold, node_gpus, release
from .status import OCCUPYING_STATUSES, TaskStatus
from .task import TaskInfo

# Kubernetes' kubelet default when a node does not report ``pods`` in its allocatable.
DEFAULT_MAX_PODS = 110


_new_node = object.__new__


@dataclass(slots=True, eq=False)
class NodeInfo:
    """One node: its fixed facts, and the tasks on it (which the session updates as it allocates)."""

    name: str
    allocatable: Resource
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, Any], ...] = ()
    unschedulable: bool = False
    ready: bool = True
    tasks: dict[str, TaskInfo] = field(default_factory=dict)
    # Per-GPU bookkeeping when the node's device plugin reports shared GPUs (deviceshare), else None.
    gpus: NodeGpus | None = None

    def add_task(self, task: TaskInfo) -> None:
        """Charge a pod already on the node, including the GPU cards its annotations say it holds."""
        self.tasks[task.uid] = task
        if self.gpus is not None:
            request = device_request(task.pod)
            if not request.empty:
                held = held_by(self.gpus, task.pod, request)
                if held is not None:
                    hold(self.gpus, task.uid, held)

    def remove_task(self, task: TaskInfo) -> None:
        """Undo ``add_task`` (and any cards a session held for the pod here)."""
        self.tasks.pop(task.uid, None)
        if self.gpus is not None:
            release(self.gpus, task.uid)

    def fresh(self) -> NodeInfo:
        """A twin for a new snapshot: the node's facts shared, with no tasks charged yet. Written out field
        by field: ``dataclasses.replace`` cost a few microseconds per node per cycle."""
        twin = _new_node(NodeInfo)
        twin.name = self.name
        twin.allocatable = self.allocatable
        twin.labels = self.labels
        twin.taints = self.taints
        twin.unschedulable = self.unschedulable
        twin.ready = self.ready
        twin.tasks = {}
        twin.gpus = self.gpus.unheld() if self.gpus is not None else None
        return twin

    @classmethod
    def from_node(cls, node: Mapping[str, Any]) -> NodeInfo:
        name = name_of(node)
        try:
            allocatable = Resource.parse(node_allocatable(node))
        except QuantityError as err:
            raise ValueError(f"node {name}: status.allocatable: {err}") from None
        if allocatable.amount(PODS) == 0:
            allocatable = allocatable + {PODS: DEFAULT_MAX_PODS}
        return cls(
            name=name,
            allocatable=allocatable,
            labels=dict(labels_of(node)),
            taints=tuple(node_taints(node)),
            unschedulable=node_unschedulable(node),
            ready=node_ready(node),
            gpus=node_gpus(allocatable, annotations_of(node)),
        )

    def _sum(self, statuses: frozenset[TaskStatus]) -> Resource:
        return total(t.resreq + {PODS: 1} for t in self.tasks.values() if t.status in statuses)

    @property
    def used(self) -> Resource:
        """Requests of the tasks holding the node, releasing ones included, one ``pods`` each."""
        return self._sum(OCCUPYING_STATUSES)

    @property
    def releasing(self) -> Resource:
        return self._sum(frozenset({TaskStatus.RELEASING}))

    @property
    def pipelined(self) -> Resource:
        return self._sum(frozenset({TaskStatus.PIPELINED}))

    @property
    def idle(self) -> Resource:
        return self.allocatable - self.used

    @property
    def future_idle(self) -> Resource:
        """What will be free once releasing pods are gone and pipelined ones have arrived."""
        return self.idle + self.releasing - self.pipelined


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """A node's load as the metrics source reported it (Volcano's ``NodeUsage``): CPU and memory in percent
    (0-100), each averaged over Volcano's 10-minute window, and when it was read. The ``usage`` plugin
    disregards a reading older than 5 minutes, as Volcano does."""

    cpu: float
    memory: float
    collected_at: datetime


@dataclass(slots=True, eq=False)
class QueueInfo:
    """A ``scheduling.volcano.sh/v1beta1`` Queue."""

    name: str
    weight: int = 1
    capability: Resource | None = None
    deserved: Resource | None = None
    guarantee: Resource = field(default_factory=Resource)
    reclaimable: bool = True
    priority: int = 0
    parent: str = ""
    state: str = QueueState.OPEN.value
    created: str = ""
    allocated_status: Resource = field(default_factory=Resource)
    # What another scheduler's pods hold in this queue (the agent scheduler's, for the batch scheduler, and
    # the other way round): counted in its allocation by the queue plugins, so both keep its capability.
    held_elsewhere: Resource = field(default_factory=Resource)
    # spec.affinity: nodeGroupAffinity / nodeGroupAntiAffinity (read by the nodegroup plugin)
    affinity: Mapping[str, Any] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    dequeue_strategy: DequeueStrategy = DequeueStrategy.TRAVERSE

    @property
    def open(self) -> bool:
        return self.state in ("", QueueState.OPEN)

    @property
    def strict_fifo(self) -> bool:
        """``spec.dequeueStrategy: fifo``: no job of the queue passes a head that cannot be scheduled."""
        return self.dequeue_strategy is DequeueStrategy.FIFO

    @classmethod
    def from_queue(cls, queue: Mapping[str, Any]) -> QueueInfo:
        name = queue_name(queue)

        def resources(field_name: str, value: Any) -> Resource:
            try:
                return Resource.parse(value or {})
            except QuantityError as err:
                raise ValueError(f"queue {name}: spec.{field_name}: {err}") from None

        try:
            weight = queue_weight(queue)
        except ValueError as err:
            raise ValueError(f"queue {name}: {err}") from None
        capability = resources("capability", queue_capability(queue)) if queue_capability(queue) else None
        deserved = resources("deserved", queue_deserved(queue)) if queue_deserved(queue) else None
        guarantee = resources("guarantee.resource", queue_guarantee(queue))
        try:
            strategy = queue_dequeue_strategy(queue)
        except ValueError as err:
            raise ValueError(f"queue {name}: {err}") from None
        return cls(
            name=name,
            weight=weight,
            capability=capability,
            deserved=deserved,
            guarantee=guarantee,
            reclaimable=queue_reclaimable(queue),
            priority=queue_priority(queue),
            parent=queue_parent(queue),
            state=queue_state(queue),
            created=creation_timestamp_of(queue),
            allocated_status=resources("status.allocated", queue_allocated(queue)),
            affinity=dict(queue_affinity(queue)),
            annotations=dict(annotations_of(queue)),
            dequeue_strategy=strategy,
        )
