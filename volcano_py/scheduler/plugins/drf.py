"""drf: dominant resource fairness between jobs. A job's share is its largest fraction of any cluster
resource it holds; the job with the smaller share is served first, and shares move with every allocation."""

from __future__ import annotations

from collections.abc import Sequence

from volcano_py.resources import Resource

from ..framework.arguments import Arguments
from ..framework.job import JobInfo
from ..framework.session import Session
from ..framework.task import TaskInfo


def dominant_share(allocated: Resource, total: Resource) -> float:
    """max over resources of allocated / total (resources the cluster lacks are ignored)."""
    share = 0.0
    for name, amount in allocated.items():
        cap = total.amount(name)
        if cap > 0:
            share = max(share, amount / cap)
    return share


class DrfPlugin:
    name = "drf"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()
        self.total = Resource()
        self.allocated: dict[str, Resource] = {}
        self.share: dict[str, float] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.total = ssn.total
        for job in ssn.jobs.values():
            self.allocated[job.uid] = job.allocated
            self.share[job.uid] = dominant_share(self.allocated[job.uid], self.total)

    def on_session_close(self, ssn: Session) -> None:
        self.allocated.clear()
        self.share.clear()

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        ls, rs = self.share.get(left.uid, 0.0), self.share.get(right.uid, 0.0)
        return (ls > rs) - (ls < rs)

    def _update(self, task: TaskInfo, sign: int) -> None:
        uid = task.job_id or ""
        if uid not in self.allocated:
            return
        self.allocated[uid] = self.allocated[uid] + task.resreq * sign
        self.share[uid] = dominant_share(self.allocated[uid], self.total)

    def on_allocate(self, task: TaskInfo) -> None:
        self._update(task, 1)

    def on_deallocate(self, task: TaskInfo) -> None:
        self._update(task, -1)

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        """Victims whose job, having lost them, still holds a dominant share at least that of the
        preemptor's job having gained the preemptor (Volcano's rule): preemption evens shares out and never
        inverts them. Volcano's default conf switches this off (``enablePreemptable: false``)."""
        mine = self.allocated.get(preemptor.job_id or "")
        if mine is None:
            return None
        theirs_after: dict[str, Resource] = {}
        gainer = dominant_share(mine + preemptor.resreq, self.total)
        victims = []
        for task in preemptees:
            uid = task.job_id or ""
            if uid not in self.allocated:
                continue
            theirs_after[uid] = theirs_after.get(uid, self.allocated[uid]) - task.resreq
            if gainer <= dominant_share(theirs_after[uid], self.total) + 1e-6:
                victims.append(task)
        return victims
