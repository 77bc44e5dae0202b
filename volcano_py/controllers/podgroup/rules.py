"""A PodGroup for a pod that asks for Volcano without one (batch/v1 Job, Deployment, StatefulSet, bare pod).

The group is named ``podgroup-<owner uid>`` so all replicas of one workload share it; ``minMember`` comes
from the owner's ``scheduling.volcano.sh/group-min-member`` annotation (default 1) and the queue from the
pod's ``scheduling.volcano.sh/queue-name``. The pod is then annotated with the group's name, which is how the
scheduler finds the gang.

A ReplicaSet scaled to zero gives its group back, as Volcano's PodGroup controller does: a Deployment's
rollout leaves the old ReplicaSet in place at zero replicas (for rollback), so the owner reference alone would
keep its PodGroup, counted by its queue, until the revision history drops it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.bodies.pod import pod_priority_class, pod_scheduler_name
from volcano_py.api.objects import (
    annotation_of,
    controller_of,
    is_deleting,
    name_of,
    namespace_of,
    spec_of,
    uid_of,
)
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import pod_quota_usage


def controller_ref(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    ref = controller_of(pod)
    return dict(ref) if ref is not None else None


def needs_podgroup(pod: Mapping[str, Any], scheduler_names: Collection[str]) -> bool:
    """A live pod for one of our schedulers, in no group yet, not created by a Volcano Job."""
    if pod_scheduler_name(pod) not in scheduler_names or is_deleting(pod):
        return False
    if annotation_of(pod, c.KUBE_GROUP_NAME_KEY):
        return False
    ref = controller_ref(pod)
    return not (ref and ref.get("kind") == c.JOB_KIND and ref.get("apiVersion") == c.BATCH_API_VERSION)


def podgroup_name(pod: Mapping[str, Any]) -> str:
    ref = controller_ref(pod)
    uid = ref.get("uid") if ref else uid_of(pod)
    return f"{c.PODGROUP_NAME_PREFIX}{uid}"


def min_member(owner_annotations: Mapping[str, str]) -> int:
    """The owner's group-min-member annotation; 1 when absent. A bad value is an error naming the fix."""
    raw = owner_annotations.get(c.VOLCANO_GROUP_MIN_MEMBER_KEY)
    if raw is None:
        return 1
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(
            f'annotation {c.VOLCANO_GROUP_MIN_MEMBER_KEY}={raw!r} is not an integer; write e.g. "3"'
        ) from None
    if value < 0:
        raise ValueError(f"annotation {c.VOLCANO_GROUP_MIN_MEMBER_KEY}={raw!r} must be >= 0")
    return value


def build_podgroup(pod: Mapping[str, Any], owner_annotations: Mapping[str, str]) -> dict[str, Any]:
    members = min_member(owner_annotations)
    ref = controller_ref(pod)
    owner = (
        dict(ref)
        if ref
        else {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": name_of(pod),
            "uid": uid_of(pod),
            "controller": True,
        }
    )
    pg_spec: dict[str, Any] = {
        "minMember": members,
        "minResources": (pod_quota_usage(spec_of(pod)) * members).to_quantities(),
    }
    queue = annotation_of(pod, c.QUEUE_NAME_ANNOTATION_KEY) or owner_annotations.get(
        c.QUEUE_NAME_ANNOTATION_KEY
    )
    if queue:
        pg_spec["queue"] = queue
    if pod_priority_class(pod):
        pg_spec["priorityClassName"] = pod_priority_class(pod)
    # Volcano-prefixed owner annotations (network topology, preemptable, ...) carry over to the group.
    annotations = {k: v for k, v in owner_annotations.items() if k.startswith(c.ANNOTATION_PREFIX)}
    return {
        "apiVersion": c.SCHEDULING_API_VERSION,
        "kind": c.PODGROUP_KIND,
        "metadata": {
            "name": podgroup_name(pod),
            "namespace": namespace_of(pod),
            "ownerReferences": [owner],
            "annotations": annotations,
        },
        "spec": pg_spec,
        "status": {"phase": PodGroupPhase.PENDING.value},
    }


def retired_podgroup(replicaset: Mapping[str, Any]) -> str | None:
    """The PodGroup to delete for a ReplicaSet at zero replicas, or None while it wants pods.

    ``spec.replicas`` defaults to 1 in the API, so an absent value wants pods.
    """
    if spec_of(replicaset).get("replicas", 1) != 0 or is_deleting(replicaset):
        return None
    return f"{c.PODGROUP_NAME_PREFIX}{uid_of(replicaset)}"
