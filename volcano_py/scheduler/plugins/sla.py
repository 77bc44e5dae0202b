"""sla: a job waits at most its ``sla-waiting-time``. Jobs are ordered by deadline (creation + waiting time;
jobs without one go after those with one), and once a job has waited that long, enqueue and pipelining are
permitted for it in its tier, whatever later tiers (overcommit, proportion) would say.

The waiting time is the PodGroup annotation ``volcano.sh/sla-waiting-time`` (or the older bare
``sla-waiting-time``), else the plugin argument ``sla-waiting-time``; both are Go durations ("1h2m3s").
"""

from __future__ import annotations

from datetime import timedelta

from volcano_py.api import constants as k
from volcano_py.api.common import parse_duration
from volcano_py.api.objects import annotations_of
from volcano_py.log import get_logger

from ..framework.arguments import Arguments
from ..framework.extension import Vote
from ..framework.job import JobInfo
from ..framework.session import Session
from ..framework.task import timestamp

log = get_logger(__name__)

WAITING_TIME_ARGUMENT = "sla-waiting-time"
_LEGACY_ANNOTATION = "sla-waiting-time"  # Volcano still reads the unprefixed key after its own


class SlaPlugin:
    name = "sla"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({WAITING_TIME_ARGUMENT})
        self.global_wait = arguments.get_duration(WAITING_TIME_ARGUMENT, None)
        self.now = 0.0
        self.deadlines: dict[str, float | None] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.now = timestamp(ssn.now)
        self.deadlines = {}

    def on_session_close(self, ssn: Session) -> None:
        self.deadlines = {}

    def _wait(self, job: JobInfo) -> timedelta | None:
        annotations = annotations_of(job.podgroup)
        for key in (k.JOB_WAITING_TIME_KEY, _LEGACY_ANNOTATION):
            text = annotations.get(key)
            if not text:
                continue
            try:
                wait = parse_duration(str(text))
            except ValueError:
                # Volcano logs and falls back to the global time; so do we, once per session per job.
                log.warning(
                    "sla: unreadable waiting time ignored", podgroup=job.uid, annotation=key, value=text
                )
                continue
            if wait > timedelta(0):
                return wait
        return self.global_wait

    def deadline(self, job: JobInfo) -> float | None:
        """Seconds since the epoch by which the job should have been scheduled; None without a wait."""
        if job.uid in self.deadlines:
            return self.deadlines[job.uid]
        wait = self._wait(job)
        result = None if wait is None else timestamp(job.created) + wait.total_seconds()
        self.deadlines[job.uid] = result
        return result

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        lk, rk = self.job_order_key(left), self.job_order_key(right)
        return (lk > rk) - (lk < rk)

    def job_order_key(self, job: JobInfo) -> tuple[int, float]:
        deadline = self.deadline(job)
        return (1, 0.0) if deadline is None else (0, deadline)

    def _permit(self, job: JobInfo) -> Vote:
        deadline = self.deadline(job)
        return Vote.PERMIT if deadline is not None and self.now >= deadline else Vote.ABSTAIN

    def job_enqueueable(self, job: JobInfo) -> Vote:
        return self._permit(job)

    def job_pipelined(self, job: JobInfo) -> Vote:
        return self._permit(job)
