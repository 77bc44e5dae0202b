"""allocate: place the pending tasks of Inqueue jobs, queue order -> job order -> task order.

Each round takes the first queue that is not overused and its first job, places that job's tasks through
one statement (``place_job``: a solver plugin or the greedy placement), then commits if the gang is ready,
holds if it is only pipelined (waiting on releasing pods), and discards otherwise: no partial gang binds.
The job and queue go back into their heaps, so shares updated by the allocation order the next round.

A job already ready grows only while the cluster keeps the room owed to admitted gangs whose pods the Job
controller has not created yet (``owed``): early sessions must not hand that room to whichever Job's pods
came first.

With ``SchedulingGatesQueueAdmission`` on, each job's pods held only by the queue-allocation gate are
admitted to their queue as the job's turn comes, before its other pods are placed (``queue_gate``).

In a queue with ``spec.dequeueStrategy: fifo`` a job that cannot be placed holds every later job of the
queue for the session, but for those that backfill without delaying its estimated start (``fifo``).

Without an ``enqueue`` action in the conf, allocate is the admission gate instead, as in Volcano: it moves
every Pending PodGroup of a known queue to Inqueue first, with no enqueueable vote and no queue-state check
(the Job controller creates pods only for Inqueue groups, so nothing would ever start otherwise).
"""

from __future__ import annotations

from volcano_py.api.scheduling import PodGroupPhase

from ..framework.arguments import Arguments
from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.sampling import NodeSampling
from ..framework.session import Session
from .fifo import backfill
from .ordering import OrderedQueue
from .owed import Owed, fits_all, owed_to_admitted
from .placement import place_job
from .queue_gate import admit_gated, awaiting_admission


class Allocate:
    name = "allocate"

    def __init__(self, arguments: Arguments) -> None:
        # predicateErrorCacheEnable is accepted for Volcano confs; there is no such cache here to switch.
        # The node-sampling knobs are Volcano's scheduler flags, settable here per conf.
        arguments.check_known(
            {
                "predicateErrorCacheEnable",
                "percentageOfNodesToFind",
                "minPercentageOfNodesToFind",
                "minNodesToFind",
            }
        )
        arguments.get_bool("predicateErrorCacheEnable", True)
        defaults = NodeSampling()
        self.sampling = NodeSampling(
            percentage=arguments.get_int("percentageOfNodesToFind", defaults.percentage, minimum=0),
            min_percentage=arguments.get_int(
                "minPercentageOfNodesToFind", defaults.min_percentage, minimum=0
            ),
            min_nodes=arguments.get_int("minNodesToFind", defaults.min_nodes, minimum=1),
        )

    @staticmethod
    def _admit_pending(ssn: Session) -> None:
        """Pending -> Inqueue for every PodGroup whose queue exists, including those the session set aside
        at open as short of pods: those are the ones waiting for this phase to get their pods."""
        for job in ssn.snapshot.jobs.values():
            if job.phase is PodGroupPhase.PENDING and job.queue in ssn.queues:
                ssn.set_phase(job, PodGroupPhase.INQUEUE)

    def _candidates(self, ssn: Session) -> dict[str, list[JobInfo]]:
        gates = ssn.features.queue_admission_gates
        by_queue: dict[str, list[JobInfo]] = {}
        for job in ssn.waiting_jobs():
            if job.queue not in ssn.queues:
                continue
            if job.phase is PodGroupPhase.PENDING:
                continue  # enqueue has not admitted it (or, in a conf ordering enqueue later, not yet)
            if _placeable(job) or (gates and awaiting_admission(job)):
                by_queue.setdefault(job.queue, []).append(job)
        return by_queue

    def execute(self, ssn: Session) -> None:
        ssn.sampling.percentage = self.sampling.percentage
        ssn.sampling.min_percentage = self.sampling.min_percentage
        ssn.sampling.min_nodes = self.sampling.min_nodes
        if not ssn.enqueue_enabled:
            self._admit_pending(ssn)
        # Gangs short of pods left the session at open or at enqueue; the snapshot still holds them.
        owed = owed_to_admitted(ssn.unsettled)  # a steady job is Running or Completed: owed nothing
        by_queue = self._candidates(ssn)
        queues: OrderedQueue[QueueInfo] = OrderedQueue(ssn.queue_less, (ssn.queues[q] for q in by_queue))
        key = ssn.job_key()
        jobs = {q: OrderedQueue(ssn.job_less, js, key=key) for q, js in by_queue.items()}
        while queues:
            queue = queues.pop()
            waiting = jobs[queue.name]
            if ssn.overused(queue):
                self._explain_overused(ssn, queue, waiting)
                continue
            if not waiting:
                continue
            job = waiting.pop()
            if ssn.features.queue_admission_gates:
                admit_gated(ssn, queue, job)
            if _placeable(job) and self._allocate_job(ssn, job, owed):
                waiting.push(job)
            elif queue.strict_fifo and not (ssn.job_ready(job) or ssn.job_pipelined(job)):
                backfill(ssn, queue, job, waiting)
            queues.push(queue)

    def _explain_overused(self, ssn: Session, queue: QueueInfo, waiting: OrderedQueue[JobInfo]) -> None:
        """Jobs left waiting in a queue that reached its share learn which limit stopped them."""
        while waiting:
            job = waiting.pop()
            pending = [t for t in job.pending_tasks if not t.best_effort]
            if not pending:
                continue
            reason = ssn.explain_allocatable(queue, pending[0])
            ssn.fit_failures_of(job).add(len(pending), [reason or f"queue {queue.name} is overused"])

    def _allocate_job(self, ssn: Session, job: JobInfo, owed: Owed) -> bool:
        """One round for one job; True when it placed something and still has tasks to place."""
        growing = bool(owed) and ssn.job_ready(job)
        with ssn.statement() as stmt:
            placed = place_job(ssn, stmt, job)
            if growing and not _keeps(ssn, owed):
                stmt.discard()
                pending = [t for t in job.pending_tasks if not t.best_effort]
                ssn.fit_failures_of(job).add(len(pending), [owed.reason()])
                return False
            if ssn.job_ready(job):
                stmt.commit()
            elif ssn.job_pipelined(job):
                stmt.hold()
            else:
                stmt.discard()
                return False
        return _placeable(job) and placed.allocated + placed.pipelined > 0


def _keeps(ssn: Session, owed: Owed) -> bool:
    """Whether the nodes, as they will be once releasing pods are gone, still hold every owed pod."""
    table = ssn.table
    return fits_all(table.future_idle, [(table.vector(g.each), g.count) for g in owed.gangs])


def _placeable(job: JobInfo) -> bool:
    return any(not t.best_effort for t in job.pending_tasks)
