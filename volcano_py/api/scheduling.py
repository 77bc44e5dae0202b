"""``scheduling.volcano.sh/v1beta1``: PodGroup (the unit the scheduler gangs) and Queue (who gets how much).

A PodGroup is what the scheduler actually schedules: the Job controller creates one per Job, and one is made
for a plain pod with ``schedulerName: volcano``. Queues are cluster-scoped and form a tree under ``root``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import Field, StrictBool, field_validator

from volcano_py.api import constants
from volcano_py.api.common import Int32, ResourceList, SubdomainName, Time, VolcanoModel, crd_default
from volcano_py.api.meta import KubeObject, LabelSelector, NetworkTopologySpec
from volcano_py.resources import Resource


class PodGroupPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    UNKNOWN = "Unknown"
    INQUEUE = "Inqueue"
    COMPLETED = "Completed"


class PodGroupConditionType(StrEnum):
    UNSCHEDULABLE = constants.PODGROUP_CONDITION_UNSCHEDULABLE
    SCHEDULED = constants.PODGROUP_CONDITION_SCHEDULED


class QueueState(StrEnum):
    OPEN = "Open"
    CLOSED = "Closed"
    CLOSING = "Closing"
    UNKNOWN = "Unknown"


class DequeueStrategy(StrEnum):
    # Stop at the head of the queue when it cannot be scheduled.
    FIFO = "fifo"
    # Skip a head that cannot be scheduled and try the next job.
    TRAVERSE = "traverse"


# --- PodGroup -------------------------------------------------------------------------------------------


class SubGroupPolicySpec(VolcanoModel):
    name: str | None = Field(default=None, max_length=253)
    network_topology: NetworkTopologySpec | None = None
    sub_group_size: Int32 | None = crd_default(1, ge=1)
    min_sub_groups: Int32 | None = crd_default(0, ge=0)
    label_selector: LabelSelector | None = None
    match_label_keys: list[str] = Field(default_factory=list)


class PodGroupSpec(VolcanoModel):
    min_member: Int32 = Field(default=0, ge=0)
    min_task_member: dict[str, Int32] = Field(default_factory=dict)
    queue: SubdomainName = crd_default(constants.DEFAULT_QUEUE)
    priority_class_name: str | None = Field(default=None, max_length=253)
    min_resources: ResourceList | None = None
    network_topology: NetworkTopologySpec | None = None
    sub_group_policy: list[SubGroupPolicySpec] = Field(default_factory=list)

    def min_resource(self) -> Resource:
        return Resource.parse(self.min_resources)


def group_name_of(pod: Mapping[str, Any]) -> str | None:
    """The name of the PodGroup a raw pod belongs to (its namespace's): Kubernetes' annotation, else
    Volcano's own; None for a pod in no PodGroup."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return annotations.get(constants.KUBE_GROUP_NAME_KEY) or annotations.get(constants.VOLCANO_GROUP_NAME_KEY)


def group_key_of(pod: Mapping[str, Any]) -> str | None:
    """``namespace/name`` of the PodGroup a raw pod belongs to (see ``group_name_of``), the key PodGroups
    are stored and bound under; None for a pod in no PodGroup."""
    name = group_name_of(pod)
    return f"{(pod.get('metadata') or {}).get('namespace') or 'default'}/{name}" if name else None


def min_member_of(podgroup: Mapping[str, Any]) -> int:
    """A raw PodGroup's ``spec.minMember`` as the scheduler gangs it: 0 when unset, as in Volcano (the CRD
    gives no default and Go reads an absent int32 as 0), and 1 when it is not a count at all (the session
    refuses such a group, with its reason)."""
    value = (podgroup.get("spec") or {}).get("minMember", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 1


class PodGroupCondition(VolcanoModel):
    type: str | None = None
    status: str | None = None
    transition_id: str | None = Field(default=None, alias="transitionID")
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class PodGroupStatus(VolcanoModel):
    phase: PodGroupPhase | None = None
    conditions: list[PodGroupCondition] = Field(default_factory=list)
    running: Int32 = Field(default=0, ge=0)
    succeeded: Int32 = Field(default=0, ge=0)
    failed: Int32 = Field(default=0, ge=0)


class PodGroup(KubeObject):
    """A gang of pods scheduled together: nothing runs until ``minMember`` of them can."""

    api_version: str = constants.SCHEDULING_API_VERSION
    kind: str = constants.PODGROUP_KIND
    spec: PodGroupSpec = Field(default_factory=PodGroupSpec)
    status: PodGroupStatus | None = None


# --- Queue ----------------------------------------------------------------------------------------------


class Guarantee(VolcanoModel):
    resource: ResourceList = Field(default_factory=dict)


class Reservation(VolcanoModel):
    nodes: list[str] = Field(default_factory=list)
    resource: ResourceList = Field(default_factory=dict)


class Cluster(VolcanoModel):
    name: str | None = None
    weight: Int32 | None = None
    capacity: ResourceList = Field(default_factory=dict)


class NodeGroupAffinity(VolcanoModel):
    required_during_scheduling_ignored_during_execution: list[str] = Field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: list[str] = Field(default_factory=list)


class QueueAffinity(VolcanoModel):
    node_group_affinity: NodeGroupAffinity | None = None
    node_group_anti_affinity: NodeGroupAffinity | None = None


class QueueSpec(VolcanoModel):
    weight: Int32 = crd_default(1, ge=1, le=65535)
    capability: ResourceList = Field(default_factory=dict)
    reclaimable: StrictBool | None = None
    extend_clusters: list[Cluster] = Field(default_factory=list)
    guarantee: Guarantee = Field(default_factory=Guarantee)
    affinity: QueueAffinity | None = None
    type: str | None = Field(default=None, max_length=253)
    parent: SubdomainName | None = None
    deserved: ResourceList = Field(default_factory=dict)
    priority: Int32 = Field(default=0, ge=0)
    dequeue_strategy: DequeueStrategy = crd_default(DequeueStrategy.TRAVERSE)

    @field_validator("weight", mode="before")
    @classmethod
    def _zero_weight_is_unset(cls, value: Any) -> Any:
        # Volcano's queue admission gives a weight of 0 (Go's unset) the default 1 before the schema sees it.
        return 1 if type(value) is int and value == 0 else value

    def capability_resource(self) -> Resource:
        return Resource.parse(self.capability)

    def deserved_resource(self) -> Resource:
        return Resource.parse(self.deserved)

    def guarantee_resource(self) -> Resource:
        return Resource.parse(self.guarantee.resource)

    @property
    def is_reclaimable(self) -> bool:
        # Volcano treats an unset ``reclaimable`` as true.
        return self.reclaimable is None or self.reclaimable


class QueueStatus(VolcanoModel):
    state: QueueState | None = None
    unknown: Int32 = Field(default=0, ge=0)
    pending: Int32 = Field(default=0, ge=0)
    running: Int32 = Field(default=0, ge=0)
    inqueue: Int32 = Field(default=0, ge=0)
    completed: Int32 = Field(default=0, ge=0)
    reservation: Reservation = Field(default_factory=Reservation)
    allocated: ResourceList = Field(default_factory=dict)


class Queue(KubeObject):
    """A cluster-scoped share of the cluster: weight, capability (ceiling), deserved and guarantee (floor)."""

    api_version: str = constants.SCHEDULING_API_VERSION
    kind: str = constants.QUEUE_KIND
    spec: QueueSpec = Field(default_factory=QueueSpec)
    status: QueueStatus | None = None


class TaskStatus(enum.Enum):
    """Where one pod stands in the scheduler's eyes (Volcano's ``TaskStatus``)."""

    PENDING = "Pending"
    ALLOCATED = "Allocated"
    PIPELINED = "Pipelined"
    BINDING = "Binding"
    BOUND = "Bound"
    RUNNING = "Running"
    RELEASING = "Releasing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"

    # Members are singletons compared by identity; Enum's own hash is a Python call on the name, and
    # statuses key the per-job and per-node indexes read for every task of every cycle.
    __hash__ = object.__hash__
