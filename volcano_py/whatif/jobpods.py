"""The pods a Volcano Job would have, for a what-if before the controller has created them.

The controller creates a Job's pods only once its PodGroup is Inqueue, so a Job waiting for enqueue has none
for a session to place. The what-if builds them with the controller's own pod builder (pure), so they carry
the requests, selectors, tolerations and annotations the real ones will.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.job_view import JobSpecError, resolve_job
from volcano_py.api.objects import annotation_of, metadata_of, namespace_of
from volcano_py.api.podspec import PodPhase
from volcano_py.controllers.job.podbuilder import build_pod

Obj = dict[str, Any]


def pods_for_job(job: Mapping[str, Any], *, created: str) -> list[Obj]:
    """Every pod of ``job`` as Pending pods stamped ``created``; [] when the Job cannot be read."""
    try:
        spec = resolve_job(job)
    except JobSpecError:
        return []
    pods: list[Obj] = []
    for task in spec.tasks:
        for index in range(task.replicas):
            pod = build_pod(spec, task, index, version=0, retry_count=0)
            uid = f"whatif-{spec.uid}-{task.name}-{index}"
            pods.append(
                {
                    **pod,
                    "metadata": {**metadata_of(pod), "uid": uid, "creationTimestamp": created},
                    "status": {"phase": PodPhase.PENDING.value},
                }
            )
    return pods


def missing_pods(
    job: Mapping[str, Any] | None, podgroup_key: str, pods: Sequence[Obj], *, created: str
) -> list[Obj]:
    """The Job's pods when none of them exists yet (else [], the real ones are in ``pods``)."""
    if job is None:
        return []
    for pod in pods:
        group = annotation_of(pod, c.KUBE_GROUP_NAME_KEY)
        if group and f"{namespace_of(pod) or 'default'}/{group}" == podgroup_key:
            return []
    return pods_for_job(job, created=created)
