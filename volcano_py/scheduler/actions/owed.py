"""Room owed to admitted gangs whose pods do not exist yet.

enqueue admits a PodGroup (Pending -> Inqueue) because its ``minResources`` fit, and only then does the Job
controller create its pods. In Volcano the next session comes a whole period later, by which time those pods
nearly always exist, so every Job admitted together competes in that session and each gets its minimum first.
Here a session also starts as soon as a burst of new pods ends (``framework/pacing``): often while the
controller is still creating the pods of other Jobs the same session admitted. Without a hold, the first Job
whose pods exist would grow beyond its minimum into the room the others were admitted for, and they would
wait for it to finish.

So while an admitted gang has fewer pods than its ``minAvailable``, what it still lacks of its
``minResources`` is kept from other jobs' growth beyond their own minimum. A gang's minimum is never held
back: enqueue already admitted every minimum against the cluster together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import Resource

from ..framework.job import JobInfo

# Most PodGroups a reason names; the rest are counted.
NAMED: int = 3


@dataclass(frozen=True, slots=True)
class Owed:
    """What admitted gangs still waiting for their pods are owed, in total, and which gangs."""

    total: Resource
    jobs: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return not self.total.is_zero()

    def kept_in(self, room: Mapping[str, int]) -> bool:
        """Whether ``room`` (what is free in the cluster, or will be once releasing pods are gone) still
        holds everything owed."""
        return self.total.fits_in(room)

    def reason(self) -> str:
        shown = ", ".join(self.jobs[:NAMED])
        more = len(self.jobs) - NAMED
        named = f"{shown} and {more} more" if more > 0 else shown
        plural = "s" if len(self.jobs) > 1 else ""
        return (
            f"room kept for admitted PodGroup{plural} {named} until {'their' if plural else 'its'} pods "
            "are created"
        )


def awaiting_pods(job: JobInfo) -> Resource:
    """What ``job`` is owed: its ``minResources`` not yet allocated, when enqueue admitted it and it has fewer
    pods than ``minAvailable`` (pods held by ``spec.schedulingGates`` count as the gang's, not as owed)."""
    if job.phase is not PodGroupPhase.INQUEUE or job.min_resources is None:
        return Resource()
    if job.valid_task_num >= job.min_available:
        return Resource()
    return job.deduct_gated((job.min_resources - job.allocated).clamp_min_zero())


def owed_to_admitted(jobs: Iterable[JobInfo]) -> Owed:
    total = Resource()
    names: list[str] = []
    for job in jobs:
        if job.shadow or job.phase is not PodGroupPhase.INQUEUE:
            continue  # the common cases (a plain pod's job, a running gang), decided without its tasks
        amount = awaiting_pods(job)
        if not amount.is_zero():
            total = total + amount
            names.append(f"{job.namespace}/{job.name}")
    return Owed(total, tuple(sorted(names)))
