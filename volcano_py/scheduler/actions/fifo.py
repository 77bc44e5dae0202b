"""A queue with ``spec.dequeueStrategy: fifo``: its jobs start in queue order, none passing the head.

Volcano defines the field (``traverse``, the default, skips a head that cannot be scheduled and tries the
next job); here ``fifo`` is enforced by enqueue and allocate: once a queue's head can be neither admitted
nor placed in a session, the queue's later jobs are not tried in that session, and each learns why from
its pending reason. A head waiting only for releasing pods (pipelined) has its place, so it blocks nothing.
"""

from __future__ import annotations

from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from .ordering import OrderedQueue


def held_reason(queue: QueueInfo, head: JobInfo) -> str:
    return (
        f"queue {queue.name} dequeues in strict FIFO order (spec.dequeueStrategy: fifo): waiting behind "
        f"{head.uid}, which cannot be scheduled yet"
    )


def drain(waiting: OrderedQueue[JobInfo]) -> list[JobInfo]:
    """The queue's later jobs, in order, taken out of ``waiting``: held behind the head this session."""
    held: list[JobInfo] = []
    while waiting:
        held.append(waiting.pop())
    return held


def note_held(ssn: Session, queue: QueueInfo, head: JobInfo, waiting: OrderedQueue[JobInfo]) -> None:
    """Allocate's hold: each later job's pending reason says which head it waits for."""
    reason = held_reason(queue, head)
    for job in drain(waiting):
        ssn.fit_failures_of(job).add(max(len(job.pending_tasks), 1), [reason])
