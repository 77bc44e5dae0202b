"""priority: higher PriorityClass value first, for jobs and for tasks; lower priority may be preempted."""

from __future__ import annotations

from collections.abc import Sequence

from ..framework.arguments import Arguments
from ..framework.extension import EvictionKind
from ..framework.job import JobInfo
from ..framework.session import Session
from ..framework.task import TaskInfo


class PriorityPlugin:
    name = "priority"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()
        self.ssn: Session | None = None

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn

    def on_session_close(self, ssn: Session) -> None:
        self.ssn = None

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        return (left.priority < right.priority) - (left.priority > right.priority)

    def job_order_key(self, job: JobInfo) -> int:
        return -job.priority

    def task_order(self, left: TaskInfo, right: TaskInfo) -> int:
        return (left.priority < right.priority) - (left.priority > right.priority)

    def _job_priority(self, task: TaskInfo) -> int:
        assert self.ssn is not None
        job = self.ssn.jobs.get(task.job_id or "")
        return job.priority if job is not None else task.priority

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        mine = self._job_priority(preemptor)
        victims = []
        for task in preemptees:
            if task.job_id == preemptor.job_id:
                # Within one job, only lower-priority tasks give way.
                if task.priority < preemptor.priority:
                    victims.append(task)
            elif self._job_priority(task) < mine:
                victims.append(task)
        return victims

    def gang_evictable(
        self, kind: EvictionKind, actor: TaskInfo, candidates: Sequence[TaskInfo]
    ) -> list[TaskInfo] | None:
        """gangpreempt takes only from lower-priority jobs; gangreclaim is about queue shares, not priority
        (legacy reclaim has no priority rule either)."""
        if kind is EvictionKind.GANG_RECLAIM:
            return list(candidates)
        mine = self._job_priority(actor)
        return [t for t in candidates if self._job_priority(t) < mine]
