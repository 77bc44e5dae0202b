"""enqueue: move PodGroups Pending -> Inqueue when their queue and the cluster can take ``minResources``.

Only Inqueue jobs get pods created by the Job controller and are considered by allocate, so this is the
admission gate that keeps a cluster from filling with half-started gangs. In a queue with
``spec.dequeueStrategy: fifo`` a job that cannot be admitted holds the queue's later jobs (``fifo``).
"""

from __future__ import annotations

from volcano_py.api import constants as k
from volcano_py.api.scheduling import PodGroupPhase

from ..framework.arguments import Arguments
from ..framework.decisions import Explanation
from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from .fifo import drain, held_reason
from .ordering import OrderedQueue

NOT_INQUEUEABLE = "NotInqueueable"


class Enqueue:
    name = "enqueue"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()

    def execute(self, ssn: Session) -> None:
        pending: dict[str, list[JobInfo]] = {}
        for job in ssn.unsettled:  # a steady job is Running or Completed
            if job.phase is PodGroupPhase.PENDING and job.queue in ssn.queues and job.uid in ssn.jobs:
                pending.setdefault(job.queue, []).append(job)
        queues: OrderedQueue[QueueInfo] = OrderedQueue(ssn.queue_less, (ssn.queues[q] for q in pending))
        key = ssn.job_key()
        jobs = {q: OrderedQueue(ssn.job_less, js, key=key) for q, js in pending.items()}
        while queues:
            queue = queues.pop()
            waiting = jobs[queue.name]
            if not waiting:
                continue
            job = waiting.pop()
            if not self._try(ssn, queue, job) and queue.strict_fifo:
                for held in drain(waiting):
                    self._refuse(ssn, held, held_reason(queue, job))
            queues.push(queue)

    def _try(self, ssn: Session, queue: QueueInfo, job: JobInfo) -> bool:
        if not queue.open:
            message = f"queue {queue.name} is {queue.state}; it admits no new jobs"
        elif job.min_resources is None or ssn.job_enqueueable(job):
            ssn.job_enqueued(job)
            ssn.set_phase(job, PodGroupPhase.INQUEUE)
            # As the next session's start would: a gang still short of pods is not tried by this one's
            # actions (each try would place what pods exist and discard them again).
            ssn.check_valid(job)
            return True
        else:
            message = ssn.explain_enqueue(job) or "the queue or the cluster cannot take minResources"
        self._refuse(ssn, job, message)
        return False

    @staticmethod
    def _refuse(ssn: Session, job: JobInfo, message: str) -> None:
        ssn.explanations[job.uid] = Explanation(job.uid, NOT_INQUEUEABLE, message)
        ssn.set_condition(job, k.PODGROUP_CONDITION_UNSCHEDULABLE, NOT_INQUEUEABLE, message)
