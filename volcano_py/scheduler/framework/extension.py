"""Volcano's extension points as typed Protocols, and the rule that combines each across plugin tiers.

A plugin implements an extension point by having the method the Protocol names; the session finds them
by type at open. Each combination rule is written once below, and ``EXTENSION_POINTS`` declares which rule
and which conf flag (``enableXxx``) each point uses.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

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


@runtime_checkable
class Preemptive(Protocol):
    def preemptive(self, queue: QueueInfo, task: TaskInfo) -> bool: ...


@runtime_checkable
class EventHandler(Protocol):
    """Told of every allocate (and pipeline) and every deallocate (evict, or an undo by discard)."""

    def on_allocate(self, task: TaskInfo) -> None: ...
    def on_deallocate(self, task: TaskInfo) -> None: ...


@runtime_checkable
class JobPlacer(Protocol):
    """Place a job's pending tasks through ``stmt``; None leaves the job to the next placer / greedy."""

    def place_job(self, ssn: Session, stmt: Statement, job: JobInfo) -> Placed | None: ...


@runtime_checkable
class DeviceCapacity(Protocol):
    """How many more pods of ``klass`` each node's devices can hold (at most ``cap``), or None when the class
    asks for no device. A count placer (cpsat) reads it for a pod's fit that per-node totals cannot express
    (shared GPU cards); the greedy path needs none, as it re-checks the device predicate pod by pod."""

    def device_slots(self, ssn: Session, klass: TaskClass, cap: int) -> IntArray | None: ...


# --- combination rules, each written once ------------------------------------------------------------------

Tiers = Sequence[Sequence[Callable[..., Any]]]


def first_nonzero(tiers: Tiers, left: Any, right: Any) -> int:
    """Order: the first plugin (tier by tier) that tells the two apart decides."""
    for tier in tiers:
        for fn in tier:
            result: int = fn(left, right)
            if result:
                return result
    return 0


def all_pass(tiers: Tiers, *args: Any) -> bool:
    """Every plugin must agree (predicates, job ready, allocatable)."""
    return all(fn(*args) for tier in tiers for fn in tier)


def any_true(tiers: Tiers, *args: Any) -> bool:
    """One plugin saying yes is enough (overused)."""
    return any(fn(*args) for tier in tiers for fn in tier)


def first_failure(tiers: Tiers, *args: Any) -> Any:
    """The first non-None answer, or None (job valid)."""
    for tier in tiers:
        for fn in tier:
            result = fn(*args)
            if result is not None:
                return result
    return None


def vote_by_tier(tiers: Tiers, *args: Any) -> bool:
    """Any REJECT refuses; otherwise the first tier with a PERMIT allows; all abstaining allows."""
    for tier in tiers:
        permitted = False
        for fn in tier:
            vote: Vote = fn(*args)
            if vote is Vote.REJECT:
                return False
            permitted = permitted or vote is Vote.PERMIT
        if permitted:
            return True
    return True


def first_tier_all(tiers: Tiers, *args: Any) -> bool:
    """The first tier with any implementer decides, all of its plugins agreeing; no implementer: False."""
    for tier in tiers:
        if tier:
            return all(fn(*args) for fn in tier)
    return False


def intersect_victims(tiers: Tiers, actor: TaskInfo, candidates: Sequence[TaskInfo]) -> list[TaskInfo]:
    """Victims: intersected within a tier; the first tier that names any decides."""
    for tier in tiers:
        victims: list[TaskInfo] | None = None
        for fn in tier:
            chosen: list[TaskInfo] | None = fn(actor, candidates)
            if chosen is None:
                continue
            if not chosen:
                victims = []
                break
            if victims is None:
                victims = list(chosen)
            else:
                keep = {t.uid for t in chosen}
                victims = [t for t in victims if t.uid in keep]
        if victims:
            return victims
    return []


def broadcast(tiers: Tiers, *args: Any) -> None:
    """Tell every plugin (job enqueued, events)."""
    for tier in tiers:
        for fn in tier:
            fn(*args)


@dataclass(frozen=True, slots=True)
class ExtensionPoint:
    protocol: type[Any]
    method: str
    flag: str | None


# Extension point -> (Protocol, method, conf flag that can turn it off per plugin).
EXTENSION_POINTS: dict[str, ExtensionPoint] = {
    "job_order": ExtensionPoint(JobOrder, "job_order", "enableJobOrder"),
    "queue_order": ExtensionPoint(QueueOrder, "queue_order", "enableQueueOrder"),
    "task_order": ExtensionPoint(TaskOrder, "task_order", "enableTaskOrder"),
    "predicate": ExtensionPoint(Predicate, "predicate", "enablePredicate"),
    "node_order": ExtensionPoint(NodeOrder, "node_order", "enableNodeOrder"),
    "job_valid": ExtensionPoint(JobValid, "job_valid", None),
    "job_ready": ExtensionPoint(JobReady, "job_ready", "enableJobReady"),
    "job_pipelined": ExtensionPoint(JobPipelined, "job_pipelined", "enableJobPipelined"),
    "job_starving": ExtensionPoint(JobStarving, "job_starving", "enableJobStarving"),
    "job_enqueueable": ExtensionPoint(JobEnqueueable, "job_enqueueable", "enableJobEnqueued"),
    "job_enqueued": ExtensionPoint(JobEnqueued, "job_enqueued", "enableJobEnqueued"),
    "allocatable": ExtensionPoint(Allocatable, "allocatable", "enableAllocatable"),
    "overused": ExtensionPoint(Overused, "overused", "enableOverused"),
    "preemptable": ExtensionPoint(Preemptable, "preemptable", "enablePreemptable"),
    "reclaimable": ExtensionPoint(Reclaimable, "reclaimable", "enableReclaimable"),
    "preemptive": ExtensionPoint(Preemptive, "preemptive", "enablePreemptive"),
    "on_allocate": ExtensionPoint(EventHandler, "on_allocate", None),
    "on_deallocate": ExtensionPoint(EventHandler, "on_deallocate", None),
    "place_job": ExtensionPoint(JobPlacer, "place_job", None),
}
