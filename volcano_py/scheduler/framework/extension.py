"""The declared extension points and the collection of their implementers at session open.

``EXTENSION_POINTS`` is the one declared list (Protocol, method, conf flag ``enableXxx``); nothing is
discovered outside it. The session finds each point's implementers by Protocol and keeps them in ``Points``,
one typed attribute per point, so mypy checks every call. The Protocols are declared in ``protocols``, the
values they return in ``outcomes``, and each combination rule is written once, in ``combine.py``; plugins,
actions and the session import all of them from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from volcano_py.resources import Resource

from .job import JobInfo
from .node import QueueInfo
from .outcomes import (
    BoolArray,
    EvictionKind,
    FloatArray,
    Gradients,
    HyperNodeWalk,
    IntArray,
    Invalid,
    NodeVerdict,
    Placed,
    SubJobWalk,
    Victim,
    Vote,
)
from .protocols import (
    Allocatable,
    DeviceCapacity,
    EventHandler,
    EvictionGuard,
    ExplainAllocatable,
    ExplainEnqueue,
    ExplainPreemptive,
    GangEvictable,
    GateAdmitted,
    HyperNodeOrder,
    JobEnqueueable,
    JobEnqueued,
    JobOrder,
    JobOrderKey,
    JobPipelined,
    JobPlacer,
    JobReady,
    JobStarving,
    JobValid,
    NodeOrder,
    Overused,
    PairPreference,
    Predicate,
    Preemptable,
    Preemptive,
    QueueDeserved,
    QueueOrder,
    Reclaimable,
    SessionClose,
    SessionOpen,
    TaskOrder,
    TaskSplit,
    VictimTasks,
)
from .task import TaskInfo

if TYPE_CHECKING:
    from .classes import TaskClass
    from .session import Session
    from .statement import Statement

__all__ = [
    "EXTENSION_POINTS",
    "Allocatable",
    "BoolArray",
    "DeviceCapacity",
    "EventHandler",
    "EvictionGuard",
    "EvictionKind",
    "ExplainAllocatable",
    "ExplainEnqueue",
    "ExplainPreemptive",
    "ExtensionPoint",
    "FloatArray",
    "GangEvictable",
    "GateAdmitted",
    "Gradients",
    "HyperNodeOrder",
    "HyperNodeWalk",
    "IntArray",
    "Invalid",
    "JobEnqueueable",
    "JobEnqueued",
    "JobOrder",
    "JobOrderKey",
    "JobPipelined",
    "JobPlacer",
    "JobReady",
    "JobStarving",
    "JobValid",
    "NodeOrder",
    "NodeVerdict",
    "Overused",
    "PairPreference",
    "Placed",
    "Points",
    "Predicate",
    "Preemptable",
    "Preemptive",
    "QueueDeserved",
    "QueueOrder",
    "Reclaimable",
    "SessionClose",
    "SessionOpen",
    "SubJobWalk",
    "TaskOrder",
    "TaskSplit",
    "Tiers",
    "Victim",
    "VictimTasks",
    "Victims",
    "Vote",
    "implements",
]


T = TypeVar("T")
# Implementations of one point, tier by tier (bound methods of the plugins, in conf order).
Tiers = list[list[T]]
Victims = Callable[[TaskInfo, Sequence[TaskInfo]], list[TaskInfo] | None]


@dataclass(frozen=True, slots=True)
class ExtensionPoint:
    protocol: type[Any]
    method: str  # the Protocol's method, and the ``Points`` attribute holding its implementations
    flag: str | None  # the conf flag that turns it off per plugin; None: always on


# Whether a plugin class implements a Protocol, asked once per class: a runtime-checkable Protocol's
# isinstance walks its members every time, some thirty times per plugin per session. Plugins define their
# extension methods on the class, so the answer is the class's.
_IMPLEMENTS: dict[tuple[type, type], bool] = {}


def implements(plugin: object, protocol: type[Any]) -> bool:
    key = (type(plugin), protocol)
    known = _IMPLEMENTS.get(key)
    if known is None:
        known = _IMPLEMENTS[key] = isinstance(plugin, protocol)
    return known


# The declared extension points: Protocol, method, the conf flag that can turn it off per plugin.
EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    ExtensionPoint(JobOrder, "job_order", "enableJobOrder"),
    ExtensionPoint(QueueOrder, "queue_order", "enableQueueOrder"),
    ExtensionPoint(TaskOrder, "task_order", "enableTaskOrder"),
    ExtensionPoint(Predicate, "predicate", "enablePredicate"),
    ExtensionPoint(Predicate, "predicate_dynamic", "enablePredicate"),
    ExtensionPoint(NodeOrder, "node_order", "enableNodeOrder"),
    ExtensionPoint(TaskSplit, "class_split", "enableNodeOrder"),
    ExtensionPoint(PairPreference, "pair_preference", "enableNodeOrder"),
    ExtensionPoint(JobValid, "job_valid", None),
    ExtensionPoint(JobReady, "job_ready", "enableJobReady"),
    ExtensionPoint(JobPipelined, "job_pipelined", "enableJobPipelined"),
    ExtensionPoint(JobStarving, "job_starving", "enableJobStarving"),
    ExtensionPoint(JobEnqueueable, "job_enqueueable", "enableJobEnqueued"),
    ExtensionPoint(JobEnqueued, "job_enqueued", "enableJobEnqueued"),
    ExtensionPoint(Allocatable, "allocatable", "enableAllocatable"),
    ExtensionPoint(Overused, "overused", "enableOverused"),
    ExtensionPoint(Preemptable, "preemptable", "enablePreemptable"),
    ExtensionPoint(Reclaimable, "reclaimable", "enableReclaimable"),
    ExtensionPoint(Preemptive, "preemptive", "enablePreemptive"),
    ExtensionPoint(GangEvictable, "gang_evictable", None),
    ExtensionPoint(VictimTasks, "victim_tasks", "enabledVictim"),
    ExtensionPoint(EvictionGuard, "evictable", None),
    ExtensionPoint(EventHandler, "on_allocate", None),
    ExtensionPoint(EventHandler, "on_deallocate", None),
    ExtensionPoint(GateAdmitted, "on_gate_admitted", None),
    ExtensionPoint(JobPlacer, "place_job", None),
    ExtensionPoint(HyperNodeOrder, "hypernode_walk", None),
    ExtensionPoint(ExplainAllocatable, "explain_allocatable", None),
    ExtensionPoint(ExplainEnqueue, "explain_enqueue", None),
    ExtensionPoint(ExplainPreemptive, "explain_preemptive", None),
    ExtensionPoint(QueueDeserved, "queue_deserved", None),
)


@dataclass(slots=True)
class Points:
    """Per extension point, the enabled implementations tier by tier, typed so that mypy checks each call.

    ``job_order_keys`` is every job-order plugin's ``job_order_key``, or None unless all of them offer one.
    """

    job_order: Tiers[Callable[[JobInfo, JobInfo], int]]
    queue_order: Tiers[Callable[[QueueInfo, QueueInfo], int]]
    task_order: Tiers[Callable[[TaskInfo, TaskInfo], int]]
    predicate: Tiers[Callable[[Session, TaskClass], NodeVerdict]]
    predicate_dynamic: Tiers[Callable[[TaskClass], bool]]
    node_order: Tiers[Callable[[Session, TaskClass, IntArray, IntArray], FloatArray]]
    class_split: Tiers[Callable[[Session, TaskInfo], Hashable | None]]
    pair_preference: Tiers[Callable[[JobInfo], Mapping[tuple[str, str], int]]]
    job_valid: Tiers[Callable[[JobInfo], Invalid | None]]
    job_ready: Tiers[Callable[[JobInfo], bool]]
    job_pipelined: Tiers[Callable[[JobInfo], Vote]]
    job_starving: Tiers[Callable[[JobInfo], bool]]
    job_enqueueable: Tiers[Callable[[JobInfo], Vote]]
    job_enqueued: Tiers[Callable[[JobInfo], None]]
    allocatable: Tiers[Callable[[QueueInfo, TaskInfo], bool]]
    overused: Tiers[Callable[[QueueInfo], bool]]
    preemptable: Tiers[Victims]
    reclaimable: Tiers[Victims]
    preemptive: Tiers[Callable[[QueueInfo, TaskInfo], bool]]
    gang_evictable: Tiers[Callable[[EvictionKind, TaskInfo, Sequence[TaskInfo]], list[TaskInfo] | None]]
    victim_tasks: Tiers[Callable[[Session, Sequence[TaskInfo]], list[Victim]]]
    evictable: Tiers[Callable[[Sequence[TaskInfo]], list[TaskInfo]]]
    on_allocate: Tiers[Callable[[TaskInfo], None]]
    on_deallocate: Tiers[Callable[[TaskInfo], None]]
    on_gate_admitted: Tiers[Callable[[TaskInfo], None]]
    place_job: Tiers[Callable[[Session, Statement, JobInfo], Placed | None]]
    hypernode_walk: Tiers[Callable[[Session, JobInfo], HyperNodeWalk | None]]
    explain_allocatable: Tiers[Callable[[QueueInfo, TaskInfo], str | None]]
    explain_enqueue: Tiers[Callable[[JobInfo], str | None]]
    explain_preemptive: Tiers[Callable[[QueueInfo, TaskInfo], str | None]]
    queue_deserved: Tiers[Callable[[QueueInfo], Resource | None]]
    job_order_keys: list[Callable[[JobInfo], Any]] | None = None

    @classmethod
    def none(cls, tiers: int) -> Points:
        """No implementer at any point: a session's before it opens and after it closes (one per tier count,
        shared: nothing adds to a collected table)."""
        return _no_points(tiers)

    @classmethod
    def collect(cls, plugins: Sequence[tuple[int, Any, Callable[[str | None], bool]]], tiers: int) -> Points:
        """From (tier, plugin, is-flag-enabled) in conf order: each declared point's implementers."""
        if not plugins:
            return cls.none(tiers)
        found: dict[str, Any] = {}
        for point in EXTENSION_POINTS:
            by_tier: list[list[Any]] = [[] for _ in range(tiers)]
            for tier, plugin, enabled in plugins:
                if implements(plugin, point.protocol) and enabled(point.flag):
                    by_tier[tier].append(getattr(plugin, point.method))
            found[point.method] = by_tier
        ordering = [
            plugin
            for tier, plugin, enabled in plugins
            if implements(plugin, JobOrder) and enabled("enableJobOrder")
        ]
        keys: list[Callable[[JobInfo], Any]] = [
            p.job_order_key for p in ordering if implements(p, JobOrderKey)
        ]
        return cls(**found, job_order_keys=keys if len(keys) == len(ordering) else None)


@functools.cache
def _no_points(tiers: int) -> Points:
    empty: dict[str, Any] = {point.method: [[] for _ in range(tiers)] for point in EXTENSION_POINTS}
    return Points(**empty, job_order_keys=[])
