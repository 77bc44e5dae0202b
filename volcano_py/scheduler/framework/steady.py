"""Steady jobs: the jobs nothing has happened to since a session closed them with nothing to write, summed
per queue, so a cycle's passes over jobs walk only the others.

Most jobs of a busy cluster are steady: every pod bound, running or done, the PodGroup Running or Completed
and already saying so. What each per-job pass would take from one (what it holds, what it holds beyond its
``minResources``) cannot change while the job stays as it is, so the views keep those amounts summed per
queue, adding a job when it settles and taking it out when anything about it changes (a pod joins, leaves
or moves on, its PodGroup changes, a session touches it). A pass adds the queue's sum to what it finds by
walking the rest.

A job is steady only under the conf that settled it (``conf``): another conf may judge it otherwise, so a
session under another conf walks every job. A session may still change a steady job (an eviction); its
``moved`` jobs are walked at the close, with what the views summed for them taken back out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from volcano_py.api import constants as k
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import Resource, Tally, count_into, count_out, total_counted

from .job import JobInfo
from .status import TaskStatus

# What a steady job's pods may be doing: holding their place (bound or on their way there: a backlog's jobs
# wait minutes for their binds, and nothing in a session acts on them meanwhile), or done. A pod that moves
# on changes its job, which the next session walks again before it can settle.
_STEADY_STATUSES = frozenset(
    {TaskStatus.BINDING, TaskStatus.BOUND, TaskStatus.RUNNING, TaskStatus.SUCCEEDED, TaskStatus.FAILED}
)
# The PodGroup phases nothing acts on: enqueue admits Pending ones, proportion counts Inqueue ones.
_STEADY_PHASES = frozenset({PodGroupPhase.RUNNING, PodGroupPhase.COMPLETED})


@dataclass(frozen=True, slots=True)
class Held:
    """What a steady job added to its queue's sums, taken back out as added."""

    job: JobInfo
    queue: str
    allocated: Resource
    # What it holds beyond its ``minResources`` (None: it has none, or is not Running).
    elastic: Resource | None


def steady_now(job: JobInfo) -> bool:
    """Whether ``job`` is steady as the views hold it: settled by the last session that closed it and
    unchanged since, told nothing but Scheduled, its pods bound, running or done."""
    if not all(status in _STEADY_STATUSES for status, tasks in job.by_status.items() if tasks):
        return False
    if job.shadow:
        return True  # a plain pod's job: no PodGroup to write, no condition to tell
    settled = job.settled
    if settled is None or settled[0] != job.version or job.phase not in _STEADY_PHASES:
        return False
    said = settled[1]
    # Told it is unschedulable, a job is out of the session: only a session says whether it still is.
    return said is None or (isinstance(said, tuple) and said[0] == k.PODGROUP_CONDITION_SCHEDULED)


@dataclass(slots=True, eq=False)
class SteadyJobs:
    """The steady jobs of the views, by uid, and what they hold summed per queue."""

    jobs: dict[str, Held] = field(default_factory=dict)
    held: dict[str, Tally] = field(default_factory=dict)
    elastic: dict[str, Tally] = field(default_factory=dict)
    # The conf the steady jobs were settled under (None: none yet, so no session skips any job).
    conf: object | None = None
    # Jobs a session's close found settled and steady-looking: the next update judges them.
    settling: list[JobInfo] = field(default_factory=list)

    def add(self, job: JobInfo) -> None:
        allocated = job.allocated
        elastic = None
        if job.min_resources is not None and job.phase is PodGroupPhase.RUNNING:
            elastic = (allocated - job.min_resources).clamp_min_zero()
        held = Held(job, job.queue, allocated, elastic)
        self.jobs[job.uid] = held
        count_into(self.held.setdefault(job.queue, {}), allocated)
        if elastic is not None:
            count_into(self.elastic.setdefault(job.queue, {}), elastic)

    def remove(self, uid: str) -> None:
        held = self.jobs.pop(uid, None)
        if held is None:
            return
        count_out(self.held[held.queue], held.allocated)
        if held.elastic is not None:
            count_out(self.elastic[held.queue], held.elastic)

    def judge(self, job: JobInfo | None, uid: str) -> None:
        """Put the job of ``uid`` (None: gone) in or out, as it is now."""
        known = self.jobs.get(uid)
        if known is not None:
            if job is known.job and steady_now(job):
                return
            self.remove(uid)
        if job is not None and steady_now(job):
            self.add(job)

    def held_by(self, queue: str) -> Resource:
        return total_counted(self.held.get(queue, {}))

    def for_conf(self, conf: object) -> SteadyJobs | None:
        """These steady jobs when ``conf`` settled them, else None (walk every job)."""
        return self if self.conf is conf else None
