"""What the plugins say about jobs, tasks and queues, each extension point through its combination rule
(``combine``): in which order to take them, the yes/no questions the actions ask, which running pods may
go, and why a plugin said no. A part of ``session.Session``, apart from its nodes (``session_nodes``) and
what it decides (``session_outcomes``); none of it holds state beyond the session's ``points``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from . import combine
from . import extension as ext
from .job import JobInfo
from .node import QueueInfo
from .task import TaskInfo

if TYPE_CHECKING:
    from .session import Session


class PluginRules:
    """The job, task and queue extension points of ``Session``, of which it is only ever a part: it hands
    itself to the hooks that take the session as that (``cast``)."""

    points: ext.Points

    # --- ordering -------------------------------------------------------------------------------------------

    def job_less(self, left: JobInfo, right: JobInfo) -> bool:
        result = combine.first_nonzero(self.points.job_order, left, right)
        if result:
            return result < 0
        return (left.created, left.uid) < (right.created, right.uid)

    def job_key(self) -> Callable[[JobInfo], tuple[Any, ...]] | None:
        """A sort key equal to ``job_less`` when every job-order plugin offers ``job_order_key`` (a value
        whose order is its comparison's), else None; keys compare in C, comparators in Python."""
        keys = self.points.job_order_keys
        if keys is None:
            return None

        def job_key(job: JobInfo) -> tuple[Any, ...]:
            return (*(key(job) for key in keys), job.created, job.uid)

        return job_key

    def sorted_jobs(self, jobs: Sequence[JobInfo]) -> list[JobInfo]:
        """``jobs`` in the session's job order: the order enqueue and allocate pop them in, as of now."""
        key = self.job_key()
        if key is not None:
            return sorted(jobs, key=key)

        def cmp(a: JobInfo, b: JobInfo) -> int:
            return -1 if self.job_less(a, b) else (1 if self.job_less(b, a) else 0)

        return sorted(jobs, key=functools.cmp_to_key(cmp))

    def task_less(self, left: TaskInfo, right: TaskInfo) -> bool:
        result = combine.first_nonzero(self.points.task_order, left, right)
        if result:
            return result < 0
        return (left.created, left.name) < (right.created, right.name)

    def queue_less(self, left: QueueInfo, right: QueueInfo) -> bool:
        result = combine.first_nonzero(self.points.queue_order, left, right)
        if result:
            return result < 0
        return (left.created, left.name) < (right.created, right.name)

    def sorted_tasks(self, tasks: Sequence[TaskInfo]) -> list[TaskInfo]:
        if len(tasks) < 2:
            return list(tasks)

        def cmp(a: TaskInfo, b: TaskInfo) -> int:
            return -1 if self.task_less(a, b) else (1 if self.task_less(b, a) else 0)

        return sorted(tasks, key=functools.cmp_to_key(cmp))

    # --- yes/no questions -----------------------------------------------------------------------------------

    def job_ready(self, job: JobInfo) -> bool:
        return combine.all_pass(self.points.job_ready, job)

    def job_pipelined(self, job: JobInfo) -> bool:
        return combine.vote_by_tier(self.points.job_pipelined, job)

    def job_starving(self, job: JobInfo) -> bool:
        return combine.first_tier_all(self.points.job_starving, job)

    def job_enqueueable(self, job: JobInfo) -> bool:
        return combine.vote_by_tier(self.points.job_enqueueable, job)

    def job_enqueued(self, job: JobInfo) -> None:
        combine.broadcast(self.points.job_enqueued, job)

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return combine.all_pass(self.points.allocatable, queue, task)

    def overused(self, queue: QueueInfo) -> bool:
        return combine.any_true(self.points.overused, queue)

    def preemptive(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return combine.all_pass(self.points.preemptive, queue, task)

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo]:
        """Of ``preemptees``, those every preemptable plugin lets ``preemptor`` evict (the victim rule)."""
        return combine.first_deciding_tier(self.points.preemptable, preemptor, preemptees)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: Sequence[TaskInfo]) -> list[TaskInfo]:
        """Of ``reclaimees``, those every reclaimable plugin lets ``reclaimer`` evict (the victim rule)."""
        return combine.first_deciding_tier(self.points.reclaimable, reclaimer, reclaimees)

    def gang_evictable(
        self, kind: ext.EvictionKind, actor: TaskInfo, candidates: Sequence[TaskInfo]
    ) -> list[TaskInfo]:
        """Of ``candidates``, those the gang actions may evict for ``actor``'s gang (the same tier rule)."""
        tiers = [[functools.partial(fn, kind) for fn in tier] for tier in self.points.gang_evictable]
        return combine.first_deciding_tier(tiers, actor, candidates)

    def victim_tasks(self, candidates: Sequence[TaskInfo]) -> list[ext.Victim]:
        """The running pods plugins want evicted, with why (Volcano's VictimTasks rule)."""
        return combine.union_first_tier(self.points.victim_tasks, cast("Session", self), candidates)

    def evictable(self, candidates: Sequence[TaskInfo]) -> list[TaskInfo]:
        """Of ``candidates``, those every eviction guard (pdb, cdp) lets go together."""
        return combine.narrowed(self.points.evictable, candidates)

    # --- why plugins said no, in words ----------------------------------------------------------------------

    def explain_allocatable(self, queue: QueueInfo, task: TaskInfo) -> str:
        return combine.reasons(self.points.explain_allocatable, queue, task)

    def explain_enqueue(self, job: JobInfo) -> str:
        return combine.reasons(self.points.explain_enqueue, job)

    def explain_preemptive(self, queue: QueueInfo, task: TaskInfo) -> str:
        return combine.reasons(self.points.explain_preemptive, queue, task)
