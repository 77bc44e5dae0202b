"""preempt: within one queue, a starving gang evicts lower-priority jobs' pods to become placeable.

Queues are taken in queue order and their starving jobs (fewer than ``minAvailable`` pods placed) in job
order. For each, the victims are the running pods of strictly lower-priority jobs of the same queue that
every preemptable plugin lets go and that are not protected (``volcano.sh/preemptable: "false"``,
kube-system, system-critical). The whole gang is planned in one statement (see ``victims``): committed only
when the gang becomes placeable, else discarded with nothing evicted. The gang's pods are pipelined to the
nodes being freed (their nominated nodes) and bound by allocate once the victims are gone.

Then, within each job, a pending pod may take the place of a running pod of the same job with a lower pod
priority. Preemption never crosses queues: that is reclaim's job.
"""

from __future__ import annotations

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.log import get_logger

from ..framework.arguments import Arguments, ConfError
from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from ..framework.task import TaskInfo
from .gangplan import VictimLayout, evict_for_gang
from .ordering import OrderedQueue
from .victims import (
    EVICTABLE,
    by_preference,
    never_preempts,
    protected,
    to_place,
)

log = get_logger(__name__)

REASON = "preempt"


def starving_jobs(ssn: Session) -> dict[str, list[JobInfo]]:
    """Per queue, the admitted jobs short of their gang that have pods to place and may preempt."""
    by_queue: dict[str, list[JobInfo]] = {}
    for job in ssn.jobs.values():
        if job.queue not in ssn.queues or (ssn.enqueue_enabled and job.phase is PodGroupPhase.PENDING):
            continue
        if job.is_starving() and to_place(ssn, job) and not never_preempts(job):
            by_queue.setdefault(job.queue, []).append(job)
    return by_queue


# Volcano's preempt arguments that only narrow its search for candidate nodes: the gang plan here weighs every
# node at once (see gangplan), a superset of any narrowed search, so these are accepted and validated.
_CANDIDATE_NODE_KNOBS = (
    "minCandidateNodesPercentage",
    "minCandidateNodesAbsolute",
    "maxCandidateNodesAbsolute",
)


def check_victim_action_arguments(arguments: Arguments, extra: tuple[str, ...] = ()) -> None:
    """The arguments preempt, reclaim and their gang* names share: Volcano's, accepted where honoured,
    refused by name where not."""
    arguments.check_known(
        {
            "predicateErrorCacheEnable",
            "enableTopologyAwarePreemption",
            "topologyAwarePreemptWorkerNum",
            *extra,
        }
        | set(_CANDIDATE_NODE_KNOBS)
    )
    arguments.get_bool("predicateErrorCacheEnable", True)  # no predicate error cache here to switch
    for knob in _CANDIDATE_NODE_KNOBS:
        arguments.get_int(knob, 0, minimum=0)
    arguments.get_int("topologyAwarePreemptWorkerNum", 1, minimum=1)
    if arguments.get_bool("enableTopologyAwarePreemption", False):
        raise ConfError(
            f"{arguments.owner}: enableTopologyAwarePreemption is not supported: victims are chosen node by "
            "node by the gang plan, not by HyperNode domain; remove it"
        )


class Preempt:
    name = "preempt"

    def __init__(self, arguments: Arguments) -> None:
        check_victim_action_arguments(arguments)
        self._layouts: dict[tuple[str, int], VictimLayout] = {}

    def execute(self, ssn: Session) -> None:
        self._layouts = {}
        by_queue = starving_jobs(ssn)
        queues: OrderedQueue[QueueInfo] = OrderedQueue(ssn.queue_less, (ssn.queues[q] for q in by_queue))
        while queues:
            queue = queues.pop()
            jobs = OrderedQueue(ssn.job_less, by_queue[queue.name])
            while jobs:
                job = jobs.pop()
                if job.is_starving():
                    self._for_gang(ssn, queue, job)
        for job in list(ssn.jobs.values()):
            if job.queue not in ssn.queues or never_preempts(job):
                continue
            if not (ssn.enqueue_enabled and job.phase is PodGroupPhase.PENDING):
                self._within_job(ssn, ssn.queues[job.queue], job)

    def _for_gang(self, ssn: Session, queue: QueueInfo, job: JobInfo) -> bool:
        evicted = evict_for_gang(
            ssn,
            job,
            self._layouts,
            (job.queue, job.priority),  # victims of one queue and priority level serve every preemptor there
            permits=ssn.preemptable,
            victim_jobs=lambda: (
                other
                for other in ssn.jobs.values()
                if other.queue == job.queue and other.uid != job.uid and other.priority < job.priority
            ),
            admit=lambda t: ssn.allocatable(queue, t),
            reason=REASON,
            too_little=f"preempt: lower-priority pods in queue {job.queue} cannot free enough for it",
            no_plan=f"preempt: no lower-priority pods in queue {job.queue} make room for the whole gang",
        )
        if evicted is None:
            return False
        log.info("preempted", job=job.uid, queue=queue.name, victims=[t.key for t in evicted])
        return True

    def _within_job(self, ssn: Session, queue: QueueInfo, job: JobInfo) -> None:
        """A pending pod replaces a running, lower-priority pod of its own job on that pod's node."""
        running = by_preference(
            (t for t in job.tasks_in(*EVICTABLE) if t.node_name and not protected(t)), ssn
        )
        for task in to_place(ssn, job):
            lower = [r for r in running if r.priority < task.priority and r.status in EVICTABLE]
            if not lower:
                continue
            for victim in ssn.preemptable(task, lower):
                if self._swap(ssn, queue, task, victim):
                    break

    def _swap(self, ssn: Session, queue: QueueInfo, task: TaskInfo, victim: TaskInfo) -> bool:
        klass = ssn.task_class(task)
        row = ssn.node_of(victim)
        if not ssn.predicate(klass).ok[row]:
            return False
        with ssn.statement() as stmt:
            stmt.evict(victim, REASON, task)
            if (ssn.table.future_idle[row] >= klass.vec).all() and ssn.allocatable(queue, task):
                stmt.pipeline(task, row)
                stmt.commit()
                return True
            stmt.discard()
        return False
