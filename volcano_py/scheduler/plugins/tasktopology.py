"""task-topology: a Job's annotations say which of its tasks share a node and which keep apart
(``volcano.sh/task-topology-affinity``, ``-anti-affinity``) and which go first (``-task-order``); the rule
that reads them is ``volcano_py.api.task_topology``, the buckets and scores are ``tasktopology_buckets``.

Hooks, as Volcano's: task order inside a job, a node score (0..100 x ``task-topology.weight``, default 1),
and the allocate events that keep the counts. Pods of one job, task and bucket form their own class, placed
and scored pod by pod. For the ``cpsat`` placer the same wish is a score per pair of pods on one node
(``pair_preference``). A job whose annotations name a task it lacks (or one task twice in a group) is placed
as if it had none, as Volcano does; it is logged each session here, and ``vcctl job why`` says so.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np

from volcano_py.api.objects import annotations_of
from volcano_py.api.task_topology import TaskTopologyError, has_task_topology, task_topology_of
from volcano_py.log import get_logger

from ..framework.arguments import Arguments
from ..framework.classes import TaskClass
from ..framework.extension import FloatArray, IntArray
from ..framework.job import JobInfo
from ..framework.session import Session
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo
from . import scoring
from .tasktopology_buckets import JobBuckets, Relations

log = get_logger(__name__)

WEIGHT_ARGUMENT = "task-topology.weight"
# Placed in this session: what an allocate event counts and a discard takes back.
_PLACED = frozenset({TaskStatus.ALLOCATED, TaskStatus.PIPELINED})


@dataclass(frozen=True, slots=True)
class BucketClass:
    """This plugin's part of a split class: pods of one job's task dealt into one bucket."""

    job_id: str
    role: str
    bucket: int


def _annotations(job: JobInfo) -> Mapping[str, str]:
    return annotations_of(job.podgroup)


class TaskTopologyPlugin:
    name = "task-topology"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({WEIGHT_ARGUMENT})
        self.weight = arguments.get_int(WEIGHT_ARGUMENT, 1, minimum=0)
        self.ssn: Session | None = None
        # Job uid -> its buckets (None: no topology, or one Volcano would ignore). Built at session open, or
        # earlier on first use: another plugin's session open may already ask for a pod's class.
        self.jobs: dict[str, JobBuckets | None] = {}
        # Pod uid -> the node its allocate event counted it on (a discard clears the pod's node first).
        self.counted: dict[str, str] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        # Dealt now, before any pod is placed, whichever hook would ask first.
        for job in ssn.waiting_jobs():
            self._buckets(job.uid)

    def on_session_close(self, ssn: Session) -> None:
        self.ssn, self.jobs, self.counted = None, {}, {}

    def _buckets(self, job_id: str | None) -> JobBuckets | None:
        if job_id is None:
            return None
        if job_id in self.jobs:
            return self.jobs[job_id]
        buckets = None
        ssn = self.ssn
        job = ssn.jobs.get(job_id) if ssn is not None else None
        if ssn is not None and job is not None and job.pending_tasks and has_task_topology(_annotations(job)):
            try:
                topology = task_topology_of(_annotations(job), {t.role for t in job.tasks.values()})
            except TaskTopologyError as err:
                log.warning("task-topology: annotations ignored", podgroup=job.uid, error=str(err))
                topology = None
            if topology is not None:
                table = ssn.table
                buckets = JobBuckets(
                    Relations.of(topology),
                    job.tasks.values(),
                    lambda t: table.vector(t.resreq),
                    len(table.names),
                )
        self.jobs[job_id] = buckets
        return buckets

    # --- hooks ----------------------------------------------------------------------------------------------

    def class_split(self, ssn: Session, task: TaskInfo) -> Hashable | None:
        self.ssn = ssn
        buckets = self._buckets(task.job_id)
        bucket = buckets.bucket(task) if buckets is not None else None
        return None if bucket is None else BucketClass(task.job_id or "", task.role, bucket.index)

    def task_order(self, left: TaskInfo, right: TaskInfo) -> int:
        mine, theirs = self._buckets(left.job_id), self._buckets(right.job_id)
        if mine is None or theirs is None:
            return 0
        if left.job_id != right.job_id:
            # Pods in a bucket go before those out of one, whichever job (Volcano's rule).
            in_mine, in_theirs = mine.bucket(left) is not None, theirs.bucket(right) is not None
            return 0 if in_mine == in_theirs else (-1 if in_mine else 1)
        return mine.order(left, right)

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        mine = next((s for s in klass.split or () if isinstance(s, BucketClass)), None)
        buckets = self._buckets(mine.job_id) if mine is not None and self.weight else None
        if mine is None or buckets is None:
            return np.zeros(len(rows), dtype=np.float64)
        table = ssn.table
        room = table.free[rows] + table.releasing[rows] - np.outer(extra, klass.vec)
        raw = buckets.scores(mine.bucket, mine.role, klass.vec, rows, table.node_index, room, extra)
        result: FloatArray = raw * self.weight * scoring.MAX_NODE_SCORE / max(buckets.largest, 1)
        return result

    def pair_preference(self, job: JobInfo) -> Mapping[tuple[str, str], int]:
        buckets = self._buckets(job.uid)
        if buckets is None or not self.weight:
            return {}
        relations = buckets.relations
        roles = sorted({t.role for t in job.tasks.values() if t.role})
        return {(a, b): score * self.weight for a in roles for b in roles if (score := relations.pair(a, b))}

    def on_allocate(self, task: TaskInfo) -> None:
        if task.status not in _PLACED or task.uid in self.counted:
            return
        buckets = self._buckets(task.job_id)
        if buckets is not None:
            buckets.placed(task, task.node_name)
            self.counted[task.uid] = task.node_name

    def on_deallocate(self, task: TaskInfo) -> None:
        node = self.counted.pop(task.uid, None)
        buckets = self._buckets(task.job_id) if node is not None else None
        if buckets is not None and node is not None:
            buckets.unplaced(task, node)
