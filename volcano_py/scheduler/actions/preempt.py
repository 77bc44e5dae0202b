"""preempt: within one queue, a starving gang evicts lower-priority jobs' pods to become placeable.

Queues are taken in queue order and their starving jobs (fewer than ``minAvailable`` pods placed) in job
order. For each, the victims are the running pods of strictly lower-priority jobs of the same queue that
every preemptable plugin lets go and that are not protected (``volcano.sh/preemptable: "false"``,
kube-system, system-critical). The whole gang is planned in one statement (see ``victims``): committed only
when the gang becomes placeable, else discarded with nothing evicted. The gang's pods are pipelined to the
nodes being freed (their nominated nodes) and bound by allocate once the victims are gone. The DRA devices
of claims held only by releasing pods count as free here (``ssn.after_releases``), and a gang claiming
devices has its victims found node by node by dry runs (``topology_preempt``), as the devices a pod needs
freed are particular ones.

Then, within each job, a pending pod may take the place of a running pod of the same job with a lower pod
priority. Preemption never crosses queues: that is reclaim's job.
"""

from __future__ import annotations

from collections.abc import Iterator

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.log import get_logger

from ..framework.arguments import Arguments, ConfError
from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from ..framework.task import TaskInfo
from .gangplan import VictimLayout, evict_for_gang
from .ordering import OrderedQueue
from .topology_preempt import CandidateLimits, preempt_node_by_node
from .victims import (
    EVICTABLE,
    Permits,
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


# Volcano's preempt arguments that size its search for candidate nodes. The gang plan weighs every node at
# once (see gangplan), a superset of any narrowed search; the node-by-node dry run of
# ``enableTopologyAwarePreemption`` stops after the count they give (see topology_preempt).
_CANDIDATE_NODE_KNOBS = (
    "minCandidateNodesPercentage",
    "minCandidateNodesAbsolute",
    "maxCandidateNodesAbsolute",
)
_TOPOLOGY_AWARE = "enableTopologyAwarePreemption"


def check_victim_action_arguments(arguments: Arguments, extra: tuple[str, ...] = ()) -> CandidateLimits:
    """The arguments preempt, reclaim and their gang* names share: Volcano's, accepted where honoured,
    refused by name where not. Returns the candidate-node limits they set."""
    arguments.check_known(
        {"predicateErrorCacheEnable", _TOPOLOGY_AWARE, "topologyAwarePreemptWorkerNum", *extra}
        | set(_CANDIDATE_NODE_KNOBS)
    )
    arguments.get_bool("predicateErrorCacheEnable", True)  # no predicate error cache here to switch
    # Volcano's dry runs use this many goroutines; one thread here finds the same victims.
    arguments.get_int("topologyAwarePreemptWorkerNum", 16, minimum=1)
    defaults = CandidateLimits()
    limits = CandidateLimits(
        arguments.get_int("minCandidateNodesPercentage", defaults.percentage, minimum=0),
        arguments.get_int("minCandidateNodesAbsolute", defaults.minimum, minimum=0),
        arguments.get_int("maxCandidateNodesAbsolute", defaults.maximum, minimum=0),
    )
    if limits.percentage > 100:
        raise ConfError(
            f"{arguments.owner}: minCandidateNodesPercentage must be between 0 and 100, "
            f"got {limits.percentage}"
        )
    return limits


def refuse_topology_aware(arguments: Arguments) -> None:
    """Only Volcano's preempt reads ``enableTopologyAwarePreemption``; elsewhere it would be ignored."""
    if arguments.get_bool(_TOPOLOGY_AWARE, False):
        raise ConfError(
            f"{arguments.owner}: {_TOPOLOGY_AWARE} is read by the preempt action only; remove it here"
        )


class Preempt:
    name = "preempt"

    def __init__(self, arguments: Arguments) -> None:
        self.limits = check_victim_action_arguments(arguments)
        self.topology_aware = arguments.get_bool(_TOPOLOGY_AWARE, False)
        self._layouts: dict[tuple[str, int], VictimLayout] = {}

    def execute(self, ssn: Session) -> None:
        # Preempt only pipelines pods, to nodes being freed: what releasing pods hold counts as free here.
        with ssn.after_releases():
            self._execute(ssn)

    def _execute(self, ssn: Session) -> None:
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
        pods = to_place(ssn, job)
        # A pod claiming DRA devices needs particular claims' devices freed, which counts of room cannot
        # express: its victims are found by dry runs whatever the argument, as Volcano's predicates find them.
        if any(t.claims_used for t in pods) or (
            self.topology_aware and any(ssn.is_dynamic(ssn.task_class(t)) for t in pods)
        ):
            evicted = preempt_node_by_node(
                ssn,
                job,
                victim_jobs=lambda: self._victim_jobs(ssn, job),
                permits=self.permits(ssn),
                admit=lambda t: ssn.allocatable(queue, t),
                limits=self.limits,
                reason=REASON,
                no_plan=f"preempt: no lower-priority pods in queue {job.queue} make room for the whole gang "
                "(victims tried node by node, with pod affinity re-checked)",
            )
        else:
            evicted = self._by_gang_plan(ssn, queue, job)
        if evicted is None:
            return False
        log.info("preempted", job=job.uid, queue=queue.name, victims=[t.key for t in evicted])
        return True

    def permits(self, ssn: Session) -> Permits:
        """The victim rule this action plans with: the plugins' ``preemptable``."""
        return ssn.preemptable

    @staticmethod
    def _victim_jobs(ssn: Session, job: JobInfo) -> Iterator[JobInfo]:
        return (
            other
            for other in ssn.jobs.values()
            if other.queue == job.queue and other.uid != job.uid and other.priority < job.priority
        )

    def _by_gang_plan(self, ssn: Session, queue: QueueInfo, job: JobInfo) -> list[TaskInfo] | None:
        return evict_for_gang(
            ssn,
            job,
            self._layouts,
            (job.queue, job.priority),  # victims of one queue and priority level serve every preemptor there
            permits=self.permits(ssn),
            victim_jobs=lambda: self._victim_jobs(ssn, job),
            admit=lambda t: ssn.allocatable(queue, t),
            reason=REASON,
            too_little=f"preempt: lower-priority pods in queue {job.queue} cannot free enough for it",
            no_plan=f"preempt: no lower-priority pods in queue {job.queue} make room for the whole gang",
        )

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
        # A pod claiming devices may need the victim's: its predicates are asked once the victim is out.
        if not task.claims_used and not ssn.predicate(klass).ok[row]:
            return False
        with ssn.statement() as stmt:
            stmt.evict(victim, REASON, task)
            fits = (ssn.table.future_idle[row] >= klass.vec).all() and ssn.predicate(klass).ok[row]
            if fits and ssn.allocatable(queue, task):
                stmt.pipeline(task, row)
                stmt.commit()
                return True
            stmt.discard()
        return False
