"""The PodGroup ``<job>-<job uid>`` a Job is scheduled through, and how it follows edits of the Job.

``minResources`` is what the scheduler's enqueue action reserves before admitting the group: the quota usage
(requests, limits, pod counts: ``resources.pod_quota_usage``) of the first ``minAvailable`` pods, taking tasks
in descending priority-class value (Volcano's ``calcPGMinResources``), so a gang is admitted only when its
essential members could run. The scheduler weighs the requests; the quota names are there for what reads
the PodGroup as Volcano writes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.bodies.podgroup import podgroup_spec
from volcano_py.api.job_view import ResolvedJob, ResolvedTask
from volcano_py.controllers.job.podbuilder import owner_reference
from volcano_py.resources import Resource, pod_quota_usage


def _task_requests(task: ResolvedTask) -> Resource:
    return pod_quota_usage(task.spec.pod_spec)


def min_resources(spec: ResolvedJob, priorities: Mapping[str, int]) -> Resource:
    """Requests of the first ``minAvailable`` pods by task priority (ties keep the Job's task order)."""

    def priority(task: ResolvedTask) -> int:
        name = task.spec.pod_spec.get("priorityClassName") or ""
        return priorities.get(name, 0)

    ordered = sorted(spec.tasks, key=priority, reverse=True)
    remaining = spec.min_available
    total = Resource()
    if spec.min_available < spec.total_task_min_available:
        for task in ordered:
            n = min(remaining, task.replicas)
            total = total + _task_requests(task) * n
            remaining -= n
            if remaining <= 0:
                break
        return total
    # Every task's minimum first, then the rest of the replicas in the same order, up to minAvailable.
    for task in ordered:
        n = min(task.min_available, remaining)
        total = total + _task_requests(task) * n
        remaining -= n
        if remaining <= 0:
            return total
    for task in ordered:
        n = min(task.replicas - task.min_available, remaining)
        total = total + _task_requests(task) * n
        remaining -= n
        if remaining <= 0:
            break
    return total


def desired_spec(spec: ResolvedJob, priorities: Mapping[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "minMember": spec.min_available,
        "minTaskMember": {t.name: t.min_available for t in spec.tasks},
        "queue": spec.queue,
        "minResources": min_resources(spec, priorities).to_quantities(),
    }
    if spec.priority_class_name:
        out["priorityClassName"] = spec.priority_class_name
    if spec.network_topology:
        nt = spec.network_topology
        topo: dict[str, Any] = {"mode": nt.get("mode", "hard")}
        if nt.get("highestTierAllowed") is not None:
            topo["highestTierAllowed"] = nt["highestTierAllowed"]
        elif nt.get("highestTierName"):
            topo["highestTierName"] = nt["highestTierName"]
        out["networkTopology"] = topo
    groups = sub_group_policy(spec)
    if groups:
        out["subGroupPolicy"] = groups
    return out


def sub_group_policy(spec: ResolvedJob) -> list[dict[str, Any]]:
    """One sub-group per partitioned task (Volcano's ``getSubGroupPolicy``): its pods, told apart by their
    partition-id label, in groups of ``partitionSize``, with the partition's network topology."""
    out: list[dict[str, Any]] = []
    for task in spec.tasks:
        policy = task.partition
        if policy is None:
            continue
        group: dict[str, Any] = {
            "name": task.name,
            "subGroupSize": policy.partition_size,
            "minSubGroups": policy.min_partitions,
            "labelSelector": {"matchLabels": {c.TASK_SPEC_KEY: task.name}},
            "matchLabelKeys": [c.TASK_PARTITION_ID_KEY],
        }
        nt = policy.network_topology
        if nt is not None:
            # The mode always written, as the API server's default would write it: a PodGroup read back
            # then equals the desired one and is not patched again.
            topo: dict[str, Any] = {"mode": nt.mode.value}
            if nt.highest_tier_allowed is not None:
                topo["highestTierAllowed"] = nt.highest_tier_allowed
            elif nt.highest_tier_name:
                topo["highestTierName"] = nt.highest_tier_name
            group["networkTopology"] = topo
        out.append(group)
    return out


def build_podgroup(spec: ResolvedJob, priorities: Mapping[str, int]) -> dict[str, Any]:
    return {
        "apiVersion": c.SCHEDULING_API_VERSION,
        "kind": c.PODGROUP_KIND,
        "metadata": {
            "name": spec.podgroup_name,
            "namespace": spec.namespace,
            "labels": dict(spec.labels),
            "annotations": dict(spec.annotations),
            "ownerReferences": [owner_reference(spec)],
        },
        "spec": desired_spec(spec, priorities),
    }


def spec_patch(
    current: Mapping[str, Any], spec: ResolvedJob, priorities: Mapping[str, int]
) -> dict[str, Any] | None:
    """A merge patch bringing an existing PodGroup's spec to the Job's (scale, priority), or None."""
    have = podgroup_spec(current)
    want = desired_spec(spec, priorities)
    patch: dict[str, Any] = {}
    for key in ("minMember", "priorityClassName"):
        if key in want and have.get(key) != want[key]:
            patch[key] = want[key]
    if (have.get("minTaskMember") or {}) != want["minTaskMember"]:
        patch["minTaskMember"] = _replacing(have.get("minTaskMember") or {}, want["minTaskMember"])
    if Resource.parse(have.get("minResources") or {}) != Resource.parse(want["minResources"]):
        patch["minResources"] = _replacing(have.get("minResources") or {}, want["minResources"])
    if (have.get("subGroupPolicy") or []) != want.get("subGroupPolicy", []):
        patch["subGroupPolicy"] = want.get("subGroupPolicy")  # a merge patch replaces a list; null drops it
    return {"spec": patch} if patch else None


def _replacing(have: Mapping[str, Any], want: Mapping[str, Any]) -> dict[str, Any]:
    """A merge-patch value that replaces map ``have`` by ``want``: keys to drop are set to null."""
    out: dict[str, Any] = {key: None for key in have if key not in want}
    out.update(want)
    return out
