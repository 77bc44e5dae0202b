"""Room owed to admitted gangs whose pods do not exist yet.

enqueue admits a PodGroup (Pending -> Inqueue) because its ``minResources`` fit, and only then does the Job
controller create its pods. In Volcano the next session comes a whole period later, by which time those pods
nearly always exist, so every Job admitted together competes in that session and each gets its minimum first.
Here a session also starts as soon as a burst of new pods ends (``framework/pacing``): often while the
controller is still creating the pods of other Jobs the same session admitted. Without a hold, the first Job
whose pods exist would grow beyond its minimum into the room the others were admitted for, and they would
wait for it to finish.

So while an admitted gang has fewer pods than its ``minAvailable``, the pods it lacks are kept a place from
other jobs' growth beyond their own minimum. A gang's minimum is never held back: enqueue already admitted
every minimum against the cluster together. The missing pods are not known yet, so each is taken to ask an
equal share of ``minResources``, and the hold is on whole pods per node: room scattered in slivers over many
nodes, none of which fits a pod, keeps nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import Resource

from ..framework.job import JobInfo

IntArray = npt.NDArray[np.int64]

# Most PodGroups a reason names; the rest are counted.
NAMED = 3


@dataclass(frozen=True, slots=True)
class OwedGang:
    """An admitted gang waiting for its pods: ``count`` pods, each taken to ask ``each``."""

    job: str
    each: Resource
    count: int


@dataclass(frozen=True, slots=True)
class Owed:
    gangs: tuple[OwedGang, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.gangs)

    def reason(self) -> str:
        names = sorted(g.job for g in self.gangs)
        shown = ", ".join(names[:NAMED])
        more = len(names) - NAMED
        named = f"{shown} and {more} more" if more > 0 else shown
        many = len(names) > 1
        return (
            f"room kept for admitted PodGroup{'s' if many else ''} {named} until "
            f"{'their' if many else 'its'} pods are created"
        )


def awaiting_pods(job: JobInfo) -> OwedGang | None:
    """What ``job`` is owed when enqueue admitted it and it has fewer pods than ``minAvailable``: the pods it
    lacks of its minimum (those already holding room count), each an equal share of ``minResources``."""
    if job.phase is not PodGroupPhase.INQUEUE or job.min_resources is None:
        return None
    if job.valid_task_num >= job.min_available:
        return None
    count = job.min_available - job.ready_task_num - job.waiting_task_num
    if count <= 0:
        return None
    share = job.min_available
    each = Resource({name: -(-amount // share) for name, amount in job.min_resources.items()})
    return OwedGang(f"{job.namespace}/{job.name}", each.clamp_min_zero(), count)


def owed_to_admitted(jobs: Iterable[JobInfo]) -> Owed:
    gangs: list[OwedGang] = []
    for job in jobs:
        if job.shadow or job.phase is not PodGroupPhase.INQUEUE:
            continue  # the common cases (a plain pod's job, a running gang), decided without its tasks
        gang = awaiting_pods(job)
        if gang is not None:
            gangs.append(gang)
    return Owed(tuple(gangs))


def fits_all(free: IntArray, demands: Sequence[tuple[IntArray, int]]) -> bool:
    """Whether ``free`` (a row of resource amounts per node) holds every demand: ``count`` pods of the row
    ``each``, whole pods per node, taken in turn from the first nodes that hold them."""
    room = np.maximum(free, 0)
    for each, count in sorted(demands, key=lambda d: -int(d[0].sum())):
        asked = np.flatnonzero(each)
        if count <= 0 or asked.size == 0:
            continue
        per_node = (room[:, asked] // each[asked]).min(axis=1)
        held = np.cumsum(per_node)
        if held.size == 0 or held[-1] < count:
            return False
        last = int(np.searchsorted(held, count))
        taken = per_node.copy()
        taken[last + 1 :] = 0
        taken[last] -= int(held[last]) - count
        room = room - taken[:, None] * each[None, :]
    return True
