"""Build the pod ``<job>-<task>-<index>`` from a task template, labelled and annotated as Volcano does.

The labels and annotations are what the scheduler, ``vcctl`` and Volcano's own tools read to find a pod's
job, task, index, PodGroup and queue, and what the controller reads back to tell a pod of the current job
version from one created before the last restart.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.job_view import ResolvedJob, ResolvedTask
from volcano_py.api.objects import annotations_of, labels_of
from volcano_py.controllers.job.plan import pod_name

# Job annotations and labels a pod inherits, so the scheduler's plugins see them per pod.
_INHERITED_ANNOTATIONS = (c.PREEMPTABLE_KEY, c.COOLDOWN_TIME_KEY, c.REVOCABLE_ZONE_KEY)
_INHERITED_LABELS = (c.PREEMPTABLE_KEY, c.COOLDOWN_TIME_KEY)


def owner_reference(spec: ResolvedJob) -> dict[str, Any]:
    return {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.JOB_KIND,
        "name": spec.name,
        "uid": spec.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _volume_name(spec: ResolvedJob, i: int) -> str:
    return f"{spec.name}-volume-{i}"


def build_pod(
    spec: ResolvedJob, task: ResolvedTask, index: int, *, version: int, retry_count: int
) -> dict[str, Any]:
    template: Mapping[str, Any] = task.template
    pod_spec: dict[str, Any] = copy.deepcopy(task.spec.pod_spec)
    if not pod_spec.get("schedulerName"):
        pod_spec["schedulerName"] = spec.scheduler_name
    if not pod_spec.get("priorityClassName") and spec.priority_class_name:
        pod_spec["priorityClassName"] = spec.priority_class_name

    seen_claims: set[str] = set()
    for i, vol in enumerate(spec.volumes):
        if vol.claim_name in seen_claims:
            continue
        seen_claims.add(vol.claim_name)
        name = _volume_name(spec, i)
        pod_spec.setdefault("volumes", []).append(
            {"name": name, "persistentVolumeClaim": {"claimName": vol.claim_name}}
        )
        for container in pod_spec.get("containers") or ():
            container.setdefault("volumeMounts", []).append({"name": name, "mountPath": vol.mount_path})

    idx = str(index)
    annotations: dict[str, str] = dict(annotations_of(template))
    annotations.update(
        {
            c.TASK_INDEX_KEY: idx,
            c.TASK_SPEC_KEY: task.name,
            c.KUBE_GROUP_NAME_KEY: spec.podgroup_name,
            c.JOB_NAME_KEY: spec.name,
            c.QUEUE_NAME_KEY: spec.queue,
            c.JOB_VERSION_KEY: str(version),
            c.POD_TEMPLATE_KEY: f"{spec.name}-{task.name}",
            c.JOB_RETRY_COUNT_KEY: str(retry_count),
        }
    )
    if task.topology_policy:
        annotations[c.NUMA_POLICY_KEY] = task.topology_policy
    for key in _INHERITED_ANNOTATIONS:
        if key in spec.annotations:
            annotations[key] = spec.annotations[key]
    if c.JDB_MIN_AVAILABLE_KEY in spec.annotations:
        annotations[c.JDB_MIN_AVAILABLE_KEY] = spec.annotations[c.JDB_MIN_AVAILABLE_KEY]
    elif c.JDB_MAX_UNAVAILABLE_KEY in spec.annotations:
        annotations[c.JDB_MAX_UNAVAILABLE_KEY] = spec.annotations[c.JDB_MAX_UNAVAILABLE_KEY]

    labels: dict[str, str] = dict(labels_of(template))
    labels.update(
        {
            c.TASK_INDEX_KEY: idx,
            c.JOB_NAME_KEY: spec.name,
            c.TASK_SPEC_KEY: task.name,
            c.JOB_NAMESPACE_KEY: spec.namespace,
            c.QUEUE_NAME_KEY: spec.queue,
        }
    )
    for key in _INHERITED_LABELS:
        if key in spec.labels:
            labels[key] = spec.labels[key]
    if task.partition is not None:
        labels[c.TASK_PARTITION_ID_KEY] = str(index // task.partition.partition_size)

    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(spec.name, task.name, index),
            "namespace": spec.namespace,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(spec)],
        },
        "spec": pod_spec,
    }


def build_pvc(spec: ResolvedJob, claim_name: str, claim_spec: Mapping[str, Any]) -> dict[str, Any]:
    """A PVC the Job asked the controller to create (``volumes[].volumeClaim``), owned by the Job."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": claim_name,
            "namespace": spec.namespace,
            "ownerReferences": [owner_reference(spec)],
        },
        "spec": copy.deepcopy(dict(claim_spec)),
    }
