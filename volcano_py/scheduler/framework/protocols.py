"""Volcano's extension points as typed Protocols, one per point.

A plugin implements an extension point by having the method its Protocol declares, with no base class
and no registration per point. ``extension`` lists which Protocols count as points and collects the
implementers at session open; the values these methods return are in ``outcomes``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from volcano_py.resources import Resource

from .job import JobInfo
from .node import QueueInfo
from .outcomes import (
    EvictionKind,
    FloatArray,
    HyperNodeWalk,
    IntArray,
    Invalid,
    NodeVerdict,
    Placed,
    Victim,
    Vote,
)
from .task import TaskInfo

if TYPE_CHECKING:
    from .classes import TaskClass
    from .session import Session
    from .statement import Statement


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
