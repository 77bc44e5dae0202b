"""overcommit: admit (enqueue) jobs while their ``minResources`` fit in the cluster's capacity times
``overcommit-factor`` (default 1.2) minus what is used and what admitted jobs still wait for."""

from __future__ import annotations

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import Resource, format_quantity

from ..framework.arguments import Arguments
from ..framework.extension import Vote
from ..framework.job import JobInfo
from ..framework.session import Session

DEFAULT_FACTOR = 1.2


class OvercommitPlugin:
    name = "overcommit"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({"overcommit-factor"})
        self.factor = arguments.get_float("overcommit-factor", DEFAULT_FACTOR, minimum=1.0)
        self.limit = Resource()
        self.used = Resource()
        self.inqueue = Resource()

    def on_session_open(self, ssn: Session) -> None:
        self.limit = Resource({name: int(amount * self.factor) for name, amount in ssn.total.items()})
        self.used = ssn.table.used_total()
        inqueue = Resource()
        for job in ssn.unsettled:  # a steady job is Running or Completed
            if job.phase is PodGroupPhase.INQUEUE and job.min_resources is not None:
                # What an admitted job has not yet got of its minimum still counts against the cluster.
                inqueue = inqueue + job.deduct_gated((job.min_resources - job.allocated).clamp_min_zero())
        self.inqueue = inqueue

    def on_session_close(self, ssn: Session) -> None:
        self.inqueue = Resource()

    def _over(self, job: JobInfo) -> list[str]:
        need = job.min_request
        future = self.used + self.inqueue + need
        return [name for name in need if future.amount(name) > self.limit.amount(name)]

    def job_enqueueable(self, job: JobInfo) -> Vote:
        return Vote.REJECT if self._over(job) else Vote.PERMIT

    def job_enqueued(self, job: JobInfo) -> None:
        self.inqueue = self.inqueue + job.deduct_gated(job.min_request)

    def explain_enqueue(self, job: JobInfo) -> str | None:
        parts = []
        for name in self._over(job):
            held = format_quantity(name, self.used.amount(name) + self.inqueue.amount(name))
            asked = format_quantity(name, job.min_request.amount(name))
            limit = format_quantity(name, self.limit.amount(name))
            parts.append(
                f"cluster over-commit limit on {name}: {held} in use or admitted + {asked} requested > "
                f"{limit} ({self.factor:g} x capacity)"
            )
        return "; ".join(parts) or None
