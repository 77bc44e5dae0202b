"""reclaim: a queue below its deserved share takes resources back from queues above theirs.

Queues are taken in queue order, skipping overused and closed ones; their starving jobs in job order.
Victims are the running pods of other queues that are reclaimable (``spec.reclaimable`` not false), not
protected, and that every reclaimable plugin lets go — the queue-share plugin (``capacity`` or
``proportion``) keeps each victim queue at or above its deserved share and its guarantee. Pod by pod, the
reclaiming gang must stay allowed by ``preemptive`` (within deserved) and ``allocatable`` (within capability
up the queue tree, after the simulated evictions). The gang is planned in one statement as in preempt and
committed only when it becomes placeable as a whole; as in preempt, the DRA devices of claims held only by
victims count as free, and a gang claiming devices has its victims found node by node by dry runs.

Without a plugin implementing ``preemptive`` there is no notion of a fair share to restore, so reclaim
does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from volcano_py.log import get_logger

from ..framework.arguments import Arguments
from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from ..framework.task import TaskInfo
from .gangplan import VictimLayout, evict_for_gang
from .ordering import OrderedQueue
from .preempt import check_victim_action_arguments, refuse_topology_aware, starving_jobs
from .topology_preempt import CandidateLimits, preempt_node_by_node
from .victims import (
    Permits,
    note,
    to_place,
)

log = get_logger(__name__)

REASON = "reclaim"


class Reclaim:
    name = "reclaim"

    def __init__(self, arguments: Arguments) -> None:
        check_victim_action_arguments(arguments)
        refuse_topology_aware(arguments)
        self._layouts: dict[tuple[str, int], VictimLayout] = {}

    def execute(self, ssn: Session) -> None:
        # Reclaim only pipelines pods, to nodes being freed: what releasing pods hold counts as free here.
        with ssn.after_releases():
            self._execute(ssn)

    def _execute(self, ssn: Session) -> None:
        self._layouts = {}
        if not any(ssn.points.preemptive):
            log.debug("reclaim skipped: no plugin implements preemptive (enable capacity or proportion)")
            return
        by_queue = starving_jobs(ssn)
        queues: OrderedQueue[QueueInfo] = OrderedQueue(ssn.queue_less, (ssn.queues[q] for q in by_queue))
        while queues:
            queue = queues.pop()
            if not queue.open or ssn.overused(queue):
                continue
            jobs = OrderedQueue(ssn.job_less, by_queue[queue.name])
            while jobs:
                job = jobs.pop()
                if job.is_starving():
                    self._for_gang(ssn, queue, job)

    def permits(self, ssn: Session) -> Permits:
        """The victim rule this action plans with: the plugins' ``reclaimable``."""
        return ssn.reclaimable

    def _admit(self, ssn: Session, queue: QueueInfo, task: TaskInfo) -> bool:
        return ssn.preemptive(queue, task) and ssn.allocatable(queue, task)

    def _for_gang(self, ssn: Session, queue: QueueInfo, job: JobInfo) -> bool:
        preemptor = to_place(ssn, job)[0]
        if not ssn.preemptive(queue, preemptor):
            why = ssn.explain_preemptive(queue, preemptor) or f"queue {queue.name} may not reclaim"
            note(ssn, job, f"reclaim: {why}")
            return False

        def victim_jobs() -> Iterator[JobInfo]:
            return (
                other
                for other in ssn.jobs.values()
                if other.queue != job.queue
                and other.queue in ssn.queues
                and ssn.queues[other.queue].reclaimable
            )

        no_plan = "reclaim: no set of pods other queues may give up makes room for the whole gang"
        if any(t.claims_used for t in to_place(ssn, job)):
            # The DRA devices a pod needs freed are particular ones: found node by node by dry runs.
            evicted = preempt_node_by_node(
                ssn,
                job,
                victim_jobs=victim_jobs,
                permits=self.permits(ssn),
                admit=lambda t: self._admit(ssn, queue, t),
                limits=CandidateLimits(),
                reason=REASON,
                no_plan=no_plan,
            )
        else:
            evicted = evict_for_gang(
                ssn,
                job,
                self._layouts,
                (job.queue, 0),  # victims seen from one queue serve all its jobs
                permits=self.permits(ssn),
                victim_jobs=victim_jobs,
                admit=lambda t: self._admit(ssn, queue, t),
                reason=REASON,
                too_little="reclaim: other queues hold too little above their deserved share for the gang",
                no_plan=no_plan,
            )
        if evicted is None:
            return False
        log.info("reclaimed", job=job.uid, queue=queue.name, victims=[t.key for t in evicted])
        return True
