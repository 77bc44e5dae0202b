"""A job's sub-groups (``spec.subGroupPolicy``) as every placer sees them: which go first, which pods each
may place now, and which policies ask for a hard topology. Pure functions over ``JobInfo``."""

from __future__ import annotations

from collections.abc import Sequence

from volcano_py.api.meta import NetworkTopologyMode
from volcano_py.api.subgroups import SubGroupKey, min_sub_groups

from .job import JobInfo
from .status import TaskStatus
from .task import TaskInfo

SubGroup = tuple[SubGroupKey | None, list[TaskInfo]]


def is_hard(job: JobInfo, key: SubGroupKey | None) -> bool:
    """Whether the sub-group's policy asks for a hard network topology."""
    if key is None:
        return False
    topology = job.sub_group_policies[key.policy].network_topology
    return topology is not None and topology.mode == NetworkTopologyMode.HARD


def placeable(job: JobInfo, members: Sequence[TaskInfo]) -> list[TaskInfo]:
    """The members allocate may place: pending, not held by scheduling gates, asking for resources."""
    return [t for t in members if t.status is TaskStatus.PENDING and not t.gated and not t.best_effort]


def turn_order(job: JobInfo) -> list[SubGroup]:
    """Sub-groups with pods to place, in Volcano's order: not ready before ready, and of those not ready,
    the ones the job needs for each policy's ``minSubGroups`` first; partition order within."""
    groups = job.sub_groups()
    wanted: dict[int, int] = {}
    for i, policy in enumerate(job.sub_group_policies):
        ready = sum(
            1
            for key, members in groups.items()
            if key is not None
            and key.policy == i
            and job.sub_group_ready(key, members, include_pipelined=True)
        )
        wanted[i] = max(min_sub_groups(policy) - ready, 0)
    required: list[SubGroup] = []
    others: list[SubGroup] = []
    ready_ones: list[SubGroup] = []
    for key, members in groups.items():
        if not placeable(job, members):
            continue
        if job.sub_group_ready(key, members, include_pipelined=True):
            ready_ones.append((key, members))
        elif key is not None and wanted.get(key.policy, 0) > 0:
            wanted[key.policy] -= 1
            required.append((key, members))
        else:
            others.append((key, members))
    return required + others + ready_ones
