"""capacity: per-queue deserved, guarantee and capability over hierarchical queues (``spec.parent``).

The arithmetic lives in ``capacity_math`` (limits) and ``capacity_ledger`` (usage); this module only wires
it to the session: it builds the ledger at open, keeps it current through allocate/deallocate events (so a
discarded statement undoes its charges), and answers enqueue, allocate, reclaim and queue order from it.
The model is stated in ``docs/queues.md``. It replaces ``proportion``; the conf loader refuses both.
With ``capacity.DynamicResourceAllocationEnable`` (default true) the devices a queue's pods claim through DRA
count as ``deviceclass/<class>`` in its usage (``capacity_dra``), for capability, deserved and guarantee to
name.

With ``SchedulingGatesQueueAdmission`` on, a pod admitted past its queue-allocation gate holds its room in the
ledger (reserved) from then until it is placed or gone: at open, every pending pod that opted in and is no
longer gated; during the session, each one allocate ungates. So the next gated pod is judged against it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from volcano_py.api.queue_gate import opted_in
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.log import get_logger
from volcano_py.resources import Resource

from ..framework.arguments import Arguments, ConfError
from ..framework.extension import EvictionKind, Vote
from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from ..framework.status import ALLOCATED_STATUSES, TaskStatus
from ..framework.task import TaskInfo
from .capacity_dra import DeviceQuota
from .capacity_ledger import QuotaLedger, QuotaVerdict
from .capacity_math import QueueQuota, QuotaTree, build_tree

log = get_logger(__name__)


def quota_of(queue: QueueInfo) -> QueueQuota:
    return QueueQuota(
        name=queue.name,
        parent=queue.parent,
        deserved=queue.deserved,
        guarantee=queue.guarantee,
        capability=queue.capability,
        reclaimable=queue.reclaimable,
        priority=queue.priority,
        weight=queue.weight,
    )


@functools.lru_cache(maxsize=8)
def _tree(specs: tuple[QueueQuota, ...], total: Resource) -> QuotaTree:
    """The tree of these queues over this cluster, kept while neither changes: its inputs are immutable and
    it is only read, and the agent scheduler opens a session (so a tree) per pod."""
    return build_tree(specs, total)


class CapacityPlugin:
    name = "capacity"

    def __init__(self, arguments: Arguments) -> None:
        # Volcano's capacity arguments: its DRA quota switches (devices counted per DeviceClass, on by
        # default as Volcano follows Kubernetes' DynamicResourceAllocation gate; consumable capacity is not
        # implemented), and ancestorReclaimLevel (reclaim from an ancestor's other subtrees only up to some
        # level), which is not implemented.
        arguments.check_known(
            {
                "capacity.DynamicResourceAllocationEnable",
                "capacity.DRAConsumableCapacityEnable",
                "ancestorReclaimLevel",
            }
        )
        self.dra = arguments.get_bool("capacity.DynamicResourceAllocationEnable", True)
        if arguments.get_bool("capacity.DRAConsumableCapacityEnable", False):
            raise ConfError(
                "plugin capacity: capacity.DRAConsumableCapacityEnable: true is not supported: consumable "
                "capacity (capacity.requests in a claim) is refused by the predicates plugin, so there is "
                "none to count; remove it"
            )
        self.devices: DeviceQuota | None = None
        if "ancestorReclaimLevel" in arguments.values:
            raise ConfError(
                "plugin capacity: ancestorReclaimLevel is not supported: reclaim here takes from any queue "
                "over its deserved share, at any level of the tree; remove it"
            )
        self.ssn: Session | None = None
        self.ledger: QuotaLedger | None = None
        self._refusals: dict[str, str] = {}
        # Pods holding reserved room: task uid -> (queue, request).
        self._reserved: dict[str, tuple[str, Resource]] = {}

    def _book(self) -> QuotaLedger:
        if self.ledger is None:
            raise RuntimeError("capacity plugin used outside a session")
        return self.ledger

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        tree = _tree(tuple(quota_of(q) for q in ssn.queues.values()), ssn.total)
        for problem in (*tree.problems, *tree.broken.values()):
            log.warning("queue configuration", problem=problem)
        ledger = QuotaLedger(tree)
        claims = ssn.snapshot.dra_claims() if self.dra else {}
        self.devices = DeviceQuota(claims) if claims else None
        for job in ssn.jobs.values():
            if job.queue not in tree.queues:
                continue
            held = job.allocated
            if self.devices is not None:
                for task in job.tasks_in(*ALLOCATED_STATUSES):
                    if task.claims_used:
                        held = held + self.devices.add(job.queue, task)
            ledger.charge(job.queue, held)
            minimum = job.min_resources
            if minimum is None:
                continue
            if job.phase in (PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING):
                # Admitted jobs still expect the rest of their minimum.
                ledger.admit(job.queue, job.deduct_gated((minimum - held).clamp_min_zero()))
            ledger.stretch(job.queue, (held - minimum).clamp_min_zero())
        for queue in ssn.queues.values():
            if queue.held_elsewhere and queue.name in tree.queues:  # the other scheduler's pods in it
                ledger.charge(queue.name, queue.held_elsewhere)
        self.ledger = ledger
        self._reserved = {}
        if ssn.features.queue_admission_gates:
            for job in ssn.waiting_jobs():
                for task in job.tasks_in(TaskStatus.PENDING):
                    self._hold(job.queue, task)

    def on_session_close(self, ssn: Session) -> None:
        # The ledger stays: the session's closing reads each queue's deserved share after the plugins close.
        self._refusals.clear()

    def _queue_of(self, task: TaskInfo) -> str | None:
        assert self.ssn is not None
        job = self.ssn.jobs.get(task.job_id or "")
        return job.queue if job is not None else None

    # --- events: the ledger follows every allocate, pipeline, evict and undo ----------------------------

    def on_allocate(self, task: TaskInfo) -> None:
        queue = self._queue_of(task)
        if queue is not None and queue in self._book().tree.queues:
            held = self._reserved.pop(task.uid, None)
            if held is not None:
                self._book().unreserve(*held)
            extra = self.devices.add(queue, task) if self.devices is not None and task.claims_used else None
            self._book().charge(queue, task.resreq + extra if extra else task.resreq)

    def on_deallocate(self, task: TaskInfo) -> None:
        queue = self._queue_of(task)
        if queue is not None and queue in self._book().tree.queues:
            extra = (
                self.devices.remove(queue, task) if self.devices is not None and task.claims_used else None
            )
            self._book().release(queue, task.resreq + extra if extra else task.resreq)
            if self.ssn is not None and self.ssn.features.queue_admission_gates:
                self._hold(queue, task)  # an undone allocation of a gate-admitted pod holds its room again

    def on_gate_admitted(self, task: TaskInfo) -> None:
        queue = self._queue_of(task)
        if queue is not None and task.uid not in self._reserved:
            self._reserve(queue, task)

    def _hold(self, queue: str, task: TaskInfo) -> None:
        """Reserve for ``task`` when it is pending, past its gate, and opted in to queue admission."""
        if task.status is TaskStatus.PENDING and not task.gated and opted_in(task.pod):
            self._reserve(queue, task)

    def _reserve(self, queue: str, task: TaskInfo) -> None:
        if queue in self._book().tree.queues and task.uid not in self._reserved:
            self._reserved[task.uid] = (queue, task.resreq)
            self._book().reserve(queue, task.resreq)

    # --- enqueue ----------------------------------------------------------------------------------------

    def _minimum(self, job: JobInfo) -> Resource:
        """What the job needs to start: its minimum request, and the devices its first pods' claims ask for
        (Volcano counts the claims of the pods that exist, up to minAvailable of them)."""
        if self.devices is None:
            return job.min_request
        first = job.tasks_in(TaskStatus.PENDING)[: max(job.min_available, 1)]
        extra = self.devices.request(job.queue, *(t for t in first if t.claims_used))
        return job.min_request + extra if extra else job.min_request

    def job_enqueueable(self, job: JobInfo) -> Vote:
        verdict = self._book().enqueueable(job.queue, self._minimum(job))
        if verdict.ok:
            return Vote.PERMIT
        self._refusals[job.uid] = verdict.reason
        return Vote.REJECT

    def job_enqueued(self, job: JobInfo) -> None:
        if job.queue in self._book().tree.queues:
            self._book().admit(job.queue, job.deduct_gated(self._minimum(job)))

    def explain_enqueue(self, job: JobInfo) -> str:
        return self._refusals.get(job.uid, "")

    # --- allocate ---------------------------------------------------------------------------------------

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return queue.open and self._allocatable(queue, task).ok

    def explain_allocatable(self, queue: QueueInfo, task: TaskInfo) -> str:
        if not queue.open:
            return f"queue {queue.name} is {queue.state}"
        return self._allocatable(queue, task).reason

    def _allocatable(self, queue: QueueInfo, task: TaskInfo) -> QuotaVerdict:
        held = self._reserved.get(task.uid)
        request = task.resreq
        if self.devices is not None and task.claims_used:
            request = request + self.devices.request(queue.name, task)
        return self._book().allocatable(queue.name, request, own=held[1] if held is not None else None)

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        """Higher priority first, then the queue furthest below its deserved share, best-effort ones last."""
        if left.priority != right.priority:
            return -1 if left.priority > right.priority else 1
        book = self._book()
        if left.name not in book.tree.queues or right.name not in book.tree.queues:
            return 0
        ls, rs = book.share(left.name), book.share(right.name)
        if ls != rs:
            return -1 if ls < rs else 1
        ld, rd = book.limits(left.name).deserved_set, book.limits(right.name).deserved_set
        return 0 if ld == rd else (-1 if ld else 1)

    def queue_deserved(self, queue: QueueInfo) -> Resource | None:
        book = self._book()
        return book.limits(queue.name).deserved if queue.name in book.tree.queues else None

    # --- reclaim ----------------------------------------------------------------------------------------

    def preemptive(self, queue: QueueInfo, task: TaskInfo) -> bool:
        """May ``queue`` reclaim for one more pod? (The reclaim action asks pod by pod, so a gang is judged
        with the pods placed before it already charged.)"""
        return queue.open and self._book().can_reclaim(queue.name, task.resreq).ok

    def explain_preemptive(self, queue: QueueInfo, task: TaskInfo) -> str:
        if not queue.open:
            return f"queue {queue.name} is {queue.state}"
        return self._book().can_reclaim(queue.name, task.resreq).reason

    def gang_evictable(
        self, kind: EvictionKind, actor: TaskInfo, candidates: Sequence[TaskInfo]
    ) -> list[TaskInfo] | None:
        """gangreclaim keeps each victim queue at its guarantee and deserved share, as reclaim does;
        gangpreempt stays within one queue, whose share it does not change."""
        if kind is EvictionKind.GANG_PREEMPT:
            return list(candidates)
        return self.reclaimable(actor, candidates)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        """Of ``reclaimees`` (in the order the action prefers them), those whose queues may give them up,
        judged as if the ones before them were already taken."""
        book = self._book()
        mine = self._queue_of(reclaimer)
        if mine is None:
            return []
        victims: list[TaskInfo] = []
        for task in reclaimees:
            theirs = self._queue_of(task)
            if theirs is None or theirs not in book.tree.queues:
                continue
            if book.can_give_up(theirs, task.resreq, mine).ok:
                book.release(theirs, task.resreq)
                victims.append(task)
        for task in victims:
            queue = self._queue_of(task)
            assert queue is not None
            book.charge(queue, task.resreq)
        return victims
