"""Placement of a job with ``spec.subGroupPolicy`` when no HyperNode walk or solver takes it: sub-group by
sub-group, as Volcano's allocate.

The sub-groups that are not ready yet go first, those the job needs for its ``minSubGroups`` ahead of the
rest; each gets the pods that make it ready (its ``subGroupSize``) all at once or none, and one that is ready
already grows by one pod per turn. Placement stops once the job is ready, so other jobs get their turn. A
sub-group whose policy asks for a hard ``networkTopology`` is not placed here, with a reason naming the fix:
placing pod by pod cannot keep it inside one HyperNode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from volcano_py.api.subgroups import SubGroupKey

from ..framework.extension import Placed
from ..framework.job import JobInfo
from ..framework.subgroups import is_hard, placeable, turn_order
from ..framework.task import TaskInfo

if TYPE_CHECKING:
    from ..framework.session import Session
    from ..framework.statement import Statement

# How the pods of one sub-group are placed: ``placement.place_greedy``, handed in by placement (which
# dispatches here), so this module does not import it back.
GreedyPlacer = Callable[..., Placed]


def hard_topology_refusal(job: JobInfo, key: SubGroupKey) -> str:
    return (
        f"PodGroup spec.subGroupPolicy[{key.policy}].networkTopology is hard, which pod-by-pod placement "
        f"cannot keep inside one HyperNode, so sub-group {key.label(job.sub_group_policies)} waits: add the "
        "network-topology-aware plugin to the scheduler conf (or the cpsat plugin, for a sub-group not yet "
        "at its subGroupSize), or set its mode to soft"
    )


def place_by_sub_groups(ssn: Session, stmt: Statement, job: JobInfo, greedy: GreedyPlacer) -> Placed:
    """Place ``job`` sub-group by sub-group through ``stmt`` (see the module docstring), each sub-group's
    pods by ``greedy``."""
    allocated = pipelined = 0
    was_ready = ssn.job_ready(job)
    progressed = True
    while progressed:  # a sub-group ready at its size but the job not yet takes one more pod a pass
        progressed = False
        for key, members in turn_order(job):
            placed = _place_one(ssn, job, key, members, greedy)
            if placed is None:
                continue
            progressed = True
            allocated, pipelined = allocated + placed.allocated, pipelined + placed.pipelined
            if was_ready or ssn.job_ready(job):
                return Placed(allocated, pipelined)
    return Placed(allocated, pipelined)


def _place_one(
    ssn: Session, job: JobInfo, key: SubGroupKey | None, members: Sequence[TaskInfo], greedy: GreedyPlacer
) -> Placed | None:
    """The pods that make the sub-group ready (one more when it is), all through the current statement or
    none; None when they do not all fit."""
    waiting = ssn.sorted_tasks(placeable(job, members))
    if key is not None and is_hard(job, key):
        ssn.fit_failures_of(job).add(len(waiting), [hard_topology_refusal(job, key)])
        return None
    need = job.sub_group_missing(key, members)
    take = waiting[: max(need, 1)]
    if len(take) < need:
        return None  # its pods are not all there (or some are gated): it cannot be ready this session
    with ssn.statement() as trial:
        placed = greedy(ssn, trial, job, until_ready=False, only=take)
        got = placed.allocated + placed.pipelined
        if got == len(take):
            trial.commit()
            return placed
        trial.discard()
    if need > 1 and key is not None:
        ssn.fit_failures_of(job).add(
            0,
            [
                f"sub-group {key.label(job.sub_group_policies)}: {got} of the {need} pods it needs fit, so "
                f"none is placed (subGroupSize {job.sub_group_size(key)} is all or nothing)"
            ],
        )
    return None
