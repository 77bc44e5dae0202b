"""Volcano's extension points as typed Protocols.

A plugin implements an extension point by having the method its Protocol declares; the session finds the
implementers by Protocol at open and keeps them in ``Points``, one typed attribute per point, so mypy checks
every call. ``EXTENSION_POINTS`` is the one declared list (Protocol, method, conf flag ``enableXxx``); nothing
is discovered outside it. Each combination rule is written once, in ``combine.py``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from volcano_py.api.subgroups import SubGroupKey
from volcano_py.resources import Resource

from .job import JobInfo
from .node import QueueInfo
from .task import TaskInfo

if TYPE_CHECKING:
    from .classes import TaskClass
    from .session import Session
    from .statement import Statement

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class Vote(enum.Enum):
    """A plugin's say on a yes/no question decided tier by tier."""

    PERMIT = 1
    ABSTAIN = 0
    REJECT = -1


@dataclass(frozen=True, slots=True)
class Invalid:
    """Why a job cannot be scheduled at all this session (``JobValid``)."""

    reason: str
    message: str


@dataclass(slots=True)
class NodeVerdict:
    """Which nodes pass a predicate; for those that fail, why, as (reason text, failing-node mask) pairs."""

    ok: BoolArray
    failures: list[tuple[str, BoolArray]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Victim:
    """A running pod a plugin wants evicted by ``shuffle``, and why (told in the pod's Evict Event)."""

    task: TaskInfo
    why: str


@dataclass(frozen=True, slots=True)
class Placed:
    """What a job placer did for one job (its changes are on the statement)."""

    allocated: int
    pipelined: int


# --- the extension points ----------------------------------------------------------------------------------


@runtime_checkable
class SessionOpen(Protocol):
    def on_session_open(self, ssn: Session) -> None: ...


@runtime_checkable
class SessionClose(Protocol):
    def on_session_close(self, ssn: Session) -> None: ...


@runtime_checkable
class JobOrder(Protocol):
    def job_order(self, left: JobInfo, right: JobInfo) -> int: ...


@runtime_checkable
class JobOrderKey(Protocol):
    """Optional beside ``job_order``: a sort key whose order is ``job_order``'s (keys compare in C). Used only
    when every job-order plugin offers one."""

    def job_order_key(self, job: JobInfo) -> Any: ...


@runtime_checkable
class QueueOrder(Protocol):
    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int: ...


@runtime_checkable
class TaskOrder(Protocol):
    def task_order(self, left: TaskInfo, right: TaskInfo) -> int: ...


@runtime_checkable
class Predicate(Protocol):
    """Filter nodes for a task class, vectorised. ``predicate_dynamic`` says whether the answer can change
    while pods are placed in this session (host ports, pod affinity); otherwise it is computed once."""

    def predicate(self, ssn: Session, klass: TaskClass) -> NodeVerdict: ...
    def predicate_dynamic(self, klass: TaskClass) -> bool: ...


@runtime_checkable
class NodeOrder(Protocol):
    """Score the nodes at ``rows`` for one more pod of ``klass`` (higher is better), as if ``extra[i]`` pods
    of the class were already added to ``rows[i]`` (rows may repeat); scores of plugins are summed. The
    hypothetical ``extra`` lets placement score a node's 1st, 2nd, ... pod in one vectorised call."""

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray: ...


@runtime_checkable
class TaskSplit(Protocol):
    """Pods this plugin scores apart though their specs are alike (task-topology: by job, task and bucket):
    ``class_split`` is a value that keeps such pods out of each other's class (None: no say). Such scores
    follow where the job's other pods land, so placement scores a split class again after each pod."""

    def class_split(self, ssn: Session, task: TaskInfo) -> Hashable | None: ...


@runtime_checkable
class PairPreference(Protocol):
    """How much ``job`` wants two of its pods on one node, by their tasks (``volcano.sh/task-spec``): a score
    per pair of pods, > 0 together, < 0 apart; pairs not listed are indifferent. A count placer (cpsat) adds
    it to its objective, where the greedy path gets the same wish from ``node_order`` pod by pod."""

    def pair_preference(self, job: JobInfo) -> Mapping[tuple[str, str], int]: ...


@runtime_checkable
class JobValid(Protocol):
    def job_valid(self, job: JobInfo) -> Invalid | None: ...


@runtime_checkable
class JobReady(Protocol):
    def job_ready(self, job: JobInfo) -> bool: ...


@runtime_checkable
class JobPipelined(Protocol):
    def job_pipelined(self, job: JobInfo) -> Vote: ...


@runtime_checkable
class JobStarving(Protocol):
    def job_starving(self, job: JobInfo) -> bool: ...


@runtime_checkable
class JobEnqueueable(Protocol):
    def job_enqueueable(self, job: JobInfo) -> Vote: ...


@runtime_checkable
class JobEnqueued(Protocol):
    def job_enqueued(self, job: JobInfo) -> None: ...


@runtime_checkable
class Allocatable(Protocol):
    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool: ...


@runtime_checkable
class Overused(Protocol):
    def overused(self, queue: QueueInfo) -> bool: ...


@runtime_checkable
class Preemptable(Protocol):
    """Of ``preemptees``, those this plugin lets ``preemptor`` evict; None abstains."""

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo] | None: ...


@runtime_checkable
class Reclaimable(Protocol):
    def reclaimable(self, reclaimer: TaskInfo, reclaimees: Sequence[TaskInfo]) -> list[TaskInfo] | None: ...


class EvictionKind(enum.Enum):
    """Which gang-aware action asks ``gang_evictable`` (Volcano's EvictionKind)."""

    GANG_PREEMPT = "gangpreempt"
    GANG_RECLAIM = "gangreclaim"


@runtime_checkable
class GangEvictable(Protocol):
    """Volcano's UnifiedEvictable, asked by ``gangpreempt`` and ``gangreclaim``: of ``candidates``, those this
    plugin lets the gang of ``actor`` evict; None abstains. Unlike ``preemptable``/``reclaimable`` it is not
    the gang plugin's to keep a victim gang whole: the actions offer pods in bundles a gang survives (its
    surplus) or loses whole, so gang lets every candidate go. No conf flag turns it off, as in Volcano."""

    def gang_evictable(
        self, kind: EvictionKind, actor: TaskInfo, candidates: Sequence[TaskInfo]
    ) -> list[TaskInfo] | None: ...


@runtime_checkable
class VictimTasks(Protocol):
    """Of the running pods ``candidates``, those this plugin wants evicted now (Volcano's VictimTasks:
    rescheduling, tdm); the ``shuffle`` action evicts them."""

    def victim_tasks(self, ssn: Session, candidates: Sequence[TaskInfo]) -> list[Victim]: ...


@runtime_checkable
class EvictionGuard(Protocol):
    """Of the pods ``candidates`` (in the order they would go), those this plugin lets ``shuffle`` evict
    together (pdb's budgets, cdp's cooldowns): the protections preempt and reclaim honour."""

    def evictable(self, candidates: Sequence[TaskInfo]) -> list[TaskInfo]: ...


@runtime_checkable
class Preemptive(Protocol):
    def preemptive(self, queue: QueueInfo, task: TaskInfo) -> bool: ...


@runtime_checkable
class EventHandler(Protocol):
    """Told of every allocate (and pipeline) and every deallocate (evict, or an undo by discard)."""

    def on_allocate(self, task: TaskInfo) -> None: ...
    def on_deallocate(self, task: TaskInfo) -> None: ...


@runtime_checkable
class GateAdmitted(Protocol):
    """Told of each pod whose queue-allocation gate the session removes: its queue admitted it, and it is
    placed in a later session, once the gate is gone (a quota plugin holds its room till then)."""

    def on_gate_admitted(self, task: TaskInfo) -> None: ...


@runtime_checkable
class JobPlacer(Protocol):
    """Place a job's pending tasks through ``stmt``; None leaves the job to the next placer / greedy."""

    def place_job(self, ssn: Session, stmt: Statement, job: JobInfo) -> Placed | None: ...


# HyperNodes (name, node mask) grouped by tier, lowest tier first.
Gradients = tuple[tuple[tuple[str, BoolArray], ...], ...]


@dataclass(frozen=True, slots=True)
class HyperNodeWalk:
    """Where to try a job with a network topology, as Volcano's allocate walks it: ``gradients`` are the
    HyperNodes (name, node mask) grouped by tier, lowest first; the job is tried inside each HyperNode of a
    tier and goes to the best by ``score`` of those where it fitted. ``unplaced``: the reason a job that
    fits nowhere waits with (None: it falls to the placement of jobs without topology)."""

    gradients: Gradients
    score: Callable[[Sequence[str]], Mapping[str, float]]
    unplaced: str | None = None
    # When set, the job is placed inside a HyperNode sub-group by sub-group (its partitions), and a
    # HyperNode's score is the sum of its sub-groups' scores.
    subjobs: tuple[SubJobWalk, ...] = ()


@dataclass(frozen=True, slots=True)
class SubJobWalk:
    """One sub-group of a job (a partition of ``subGroupSize`` pods) placed as one: ``gradients(h)`` are the
    HyperNodes under the job's HyperNode ``h`` to try it in, by tier, lowest first; ``score`` as the job's."""

    tasks: tuple[TaskInfo, ...]
    gradients: Callable[[str], Gradients]
    score: Callable[[Sequence[str]], Mapping[str, float]]
    # Which sub-group (None: the job's default one), for its size.
    key: SubGroupKey | None = None


@runtime_checkable
class HyperNodeOrder(Protocol):
    """The HyperNode walk for ``job`` (Volcano's HyperNode gradient and order functions), or None when the
    job has no network topology to follow."""

    def hypernode_walk(self, ssn: Session, job: JobInfo) -> HyperNodeWalk | None: ...


@runtime_checkable
class DeviceCapacity(Protocol):
    """How many more pods of ``klass`` each node's devices can hold (at most ``cap``), or None when the class
    asks for no device of this plugin's (or none it can count). A count placer (cpsat) reads it for a pod's
    fit that per-node totals cannot express (shared GPU cards, DRA devices); the greedy path needs none, as it
    re-checks the device predicate pod by pod. ``predicate_dynamic_besides_devices``: whether the plugin's
    predicate also changes as pods land for a reason the count does not capture (then no count is used)."""

    def device_slots(self, ssn: Session, klass: TaskClass, cap: int) -> IntArray | None: ...
    def predicate_dynamic_besides_devices(self, klass: TaskClass) -> bool: ...


@runtime_checkable
class ExplainAllocatable(Protocol):
    """Why ``allocatable`` said no for ``task`` in ``queue``, in words (None or "": nothing to add)."""

    def explain_allocatable(self, queue: QueueInfo, task: TaskInfo) -> str | None: ...


@runtime_checkable
class ExplainEnqueue(Protocol):
    """Why ``job_enqueueable`` said no for ``job``, in words."""

    def explain_enqueue(self, job: JobInfo) -> str | None: ...


@runtime_checkable
class ExplainPreemptive(Protocol):
    """Why ``preemptive`` said no for ``task`` of ``queue``, in words."""

    def explain_preemptive(self, queue: QueueInfo, task: TaskInfo) -> str | None: ...


@runtime_checkable
class QueueDeserved(Protocol):
    """A queue's deserved share, for its status and ``volcano_queue_deserved_*`` (the last plugin's wins)."""

    def queue_deserved(self, queue: QueueInfo) -> Resource | None: ...


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
    def collect(cls, plugins: Sequence[tuple[int, Any, Callable[[str | None], bool]]], tiers: int) -> Points:
        """From (tier, plugin, is-flag-enabled) in conf order: each declared point's implementers."""
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
