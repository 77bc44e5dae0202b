"""The invariant every evicting action keeps: no gang is left partly evicted.

A job evicted below its ``minAvailable`` while keeping some pods would hold room it cannot run in. So after a
session's decisions, every PodGroup that lost a pod either keeps at least ``minMember`` pods (counting those
the same session binds or pipelines for it) or keeps none. Checked on the plain objects the session read and
the result it returned, so the simulator and tests can assert it without a session.

``surplus`` is the rule evicting actions plan with: which pods a ready gang can lose one by one and stay
ready, by every minimum the gang plugin holds it to (``minAvailable``, each role's ``minTaskMember``, each
sub-group policy's ``minSubGroups``). A ``ps`` pod whose role is at its minimum is never such a pod, however
many spare workers the job has: losing it would break the gang as surely as losing the job's last pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from volcano_py.api.bodies.pod import pod_node_name
from volcano_py.api.objects import is_deleting, name_of, namespace_of, uid_of
from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.api.scheduling import group_key_of, min_member_of
from volcano_py.api.subgroups import SubGroupKey

from .decisions import SessionResult
from .job import JobInfo
from .status import TaskStatus, is_ready_status
from .task import TaskInfo

_DONE = (PodPhase.SUCCEEDED, PodPhase.FAILED)


def gangs_left_partly_evicted(
    pods: Iterable[Mapping[str, Any]], podgroups: Iterable[Mapping[str, Any]], result: SessionResult
) -> list[str]:
    """The PodGroups (``namespace/name``) the session's evictions leave with 0 < pods < ``minMember``, each
    with its counts."""
    evicted = {e.uid for e in result.evictions}
    if not evicted:
        return []
    placed = {b.uid for b in result.binds} | {p.uid for p in result.pipelined}
    holding: dict[str, int] = {}
    touched: set[str] = set()
    for pod in pods:
        group = group_key_of(pod)
        if group is None:
            continue
        uid = uid_of(pod)
        if uid in evicted:
            touched.add(group)
            continue
        on_node = bool(pod_node_name(pod)) and pod_phase(pod) not in _DONE
        if (on_node and not is_deleting(pod)) or uid in placed:
            holding[group] = holding.get(group, 0) + 1
    minimums: dict[str, int] = {}
    for pg in podgroups:
        minimums[f"{namespace_of(pg) or 'default'}/{name_of(pg)}"] = min_member_of(pg)
    out = []
    for group in sorted(touched):
        keeps, minimum = holding.get(group, 0), minimums.get(group, 1)
        if 0 < keeps < minimum:
            out.append(f"{group} keeps {keeps} of its minMember {minimum} pods after evictions")
    return out


def _holds(task: TaskInfo) -> bool:
    """Counted toward a minimum: holding resources or done, or a pending pod that asks for nothing."""
    return is_ready_status(task.status) or (task.status is TaskStatus.PENDING and task.best_effort)


def surplus(job: JobInfo, candidates: Sequence[TaskInfo]) -> list[TaskInfo]:
    """Of ``candidates`` (the job's pods, most preferred victim first), those that can go one after another
    while the job stays ready: each taken only while the job keeps ``minAvailable`` ready pods, its role keeps
    its enforced ``minTaskMember``, and its sub-group policy keeps ``minSubGroups`` ready sub-groups (a
    sub-group already missing a pod costs nothing more). A job not ready to begin with has none."""
    spare_job = job.ready_task_num - job.min_available
    if spare_job <= 0:
        return []
    role_minimums = job.role_minimums
    spare_role: dict[str, int] = {}
    if role_minimums:
        held: dict[str, int] = {}
        for task in job.tasks.values():
            if _holds(task):
                held[task.role] = held.get(task.role, 0) + 1
        spare_role = {role: held.get(role, 0) - need for role, need in role_minimums.items()}
    group_of: dict[str, SubGroupKey] = {}
    spare_group: dict[int, int] = {}
    broken: set[SubGroupKey] = set()
    if job.sub_group_policies:
        for key, members in job.sub_groups().items():
            if key is None:
                continue
            for task in members:
                group_of[task.uid] = key
            if job.sub_group_ready(key, members):
                spare_group[key.policy] = spare_group.get(key.policy, 0) + 1
            else:
                broken.add(key)
        for i, policy in enumerate(job.sub_group_policies):
            spare_group[i] = spare_group.get(i, 0) - (policy.min_sub_groups or 0)
    out: list[TaskInfo] = []
    for task in candidates:
        if spare_job <= 0:
            break
        if task.role in spare_role and spare_role[task.role] <= 0:
            continue
        key = group_of.get(task.uid)
        breaks = key is not None and key not in broken
        if key is not None and breaks and spare_group[key.policy] <= 0:
            continue
        out.append(task)
        spare_job -= 1
        if task.role in spare_role:
            spare_role[task.role] -= 1
        if key is not None and breaks:
            broken.add(key)
            spare_group[key.policy] -= 1
    return out
