"""drf: dominant resource fairness between jobs. A job's share is its largest fraction of any cluster
resource it holds; the job with the smaller share is served first, and shares move with every allocation.
Shares are kept as numpy vectors over the session's resource columns, updated in O(1) per pod."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from volcano_py.resources import PODS, Resource

from ..framework.arguments import Arguments
from ..framework.job import JobInfo
from ..framework.session import Session
from ..framework.steady import Held
from ..framework.task import TaskInfo

Vector = npt.NDArray[np.float64]


class DrfPlugin:
    name = "drf"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()
        self.ssn: Session | None = None
        self.inverse_total: Vector = np.zeros(0)
        self.allocated: dict[str, Vector] = {}
        self.share: dict[str, float] = {}
        # Vectors and shares by the identity of a holding (jobs hold interned amounts: many are alike).
        self._seen: dict[int, tuple[Vector, float]] = {}
        self.steady: Mapping[str, Held] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        total = ssn.table.allocatable.sum(axis=0).astype(np.float64)
        # 1/total, zero where the cluster has none (and for the pod count, which is not a share).
        self.inverse_total = np.divide(1.0, total, out=np.zeros_like(total), where=total > 0)
        self.inverse_total[ssn.table.index[PODS]] = 0.0
        # Jobs holding the same resources share one vector and share (many jobs are alike, and hold one
        # interned object: keyed by identity); the vectors are never changed in place, an allocation
        # replaces its job's.
        self._seen = {}
        # A steady job's share is worked out when first asked (``_known``).
        for job in ssn.unsettled:
            self.allocated[job.uid], self.share[job.uid] = self._of(job.allocated)
        self.steady = ssn.steady.jobs if ssn.steady is not None else {}

    def _of(self, held: Resource) -> tuple[Vector, float]:
        known = self._seen.get(id(held))
        if known is None:
            assert self.ssn is not None
            vec = self.ssn.table.vector(held, pods=0).astype(np.float64)
            known = self._seen[id(held)] = (vec, self._share_of(vec))
        return known

    def _known(self, uid: str) -> bool:
        """Whether the job of ``uid`` has a share: a steady one gets it from what it held at the open."""
        if uid in self.share:
            return True
        held = self.steady.get(uid)
        if held is None:
            return False
        self.allocated[uid], self.share[uid] = self._of(held.allocated)
        return True

    def on_session_close(self, ssn: Session) -> None:
        self.allocated.clear()
        self.share.clear()
        self._seen = {}
        self.steady = {}
        self.ssn = None

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        ls, rs = self.job_order_key(left), self.job_order_key(right)
        return (ls > rs) - (ls < rs)

    def job_order_key(self, job: JobInfo) -> float:
        return self.share[job.uid] if self._known(job.uid) else 0.0

    def _update(self, task: TaskInfo, sign: int) -> None:
        if self.ssn is None or not self._known(task.job_id or ""):
            return
        vec = self.allocated[task.job_id or ""]
        vec = self.allocated[task.job_id or ""] = vec + sign * self.ssn.task_class(task).vec
        self.share[task.job_id or ""] = self._share_of(vec)

    def on_allocate(self, task: TaskInfo) -> None:
        self._update(task, 1)

    def on_deallocate(self, task: TaskInfo) -> None:
        self._update(task, -1)

    def _share_of(self, vec: Vector) -> float:
        return float((vec * self.inverse_total).max(initial=0.0))

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        """Victims whose job, having lost them, still holds a dominant share at least that of the
        preemptor's job having gained the preemptor (Volcano's rule): preemption evens shares out and never
        inverts them. Volcano's default conf switches this off (``enablePreemptable: false``)."""
        if self.ssn is None or not self._known(preemptor.job_id or ""):
            return None
        mine = self.allocated[preemptor.job_id or ""]
        ssn = self.ssn
        gainer = self._share_of(mine + ssn.task_class(preemptor).vec)
        theirs_after: dict[str, Vector] = {}
        victims = []
        for task in preemptees:
            uid = task.job_id or ""
            if not self._known(uid):
                continue
            theirs_after[uid] = theirs_after.get(uid, self.allocated[uid]) - ssn.table.vector(task.resreq)
            if gainer <= self._share_of(theirs_after[uid]) + 1e-6:
                victims.append(task)
        return victims
