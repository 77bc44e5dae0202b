"""Which Queue a pod's room is charged to, when another scheduler placed it.

The batch scheduler and the agent scheduler place pods of the same Queues: each counts what the other's
pods hold there, so that between them a Queue's capability is kept. A pod's Queue is its PodGroup's
``spec.queue`` (``scheduling.k8s.io/group-name``), else the one its annotation names (Volcano's
``scheduling.volcano.sh/queue-name``, which the PodGroup controller reads for a plain pod, then the Job
controller's ``volcano.sh/queue-name``), else ``default``, as Volcano's PodGroup controller decides it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import constants as c
from .podspec import PodPhase, pod_phase
from .scheduling import group_key_of

Obj = Mapping[str, Any]


def queue_of_pod(pod: Obj, podgroup_queue: Callable[[str], str | None]) -> str:
    """The Queue of ``pod``; ``podgroup_queue`` maps a PodGroup key (``namespace/name``) to its queue."""
    group = group_key_of(pod)
    if group is not None:
        found = podgroup_queue(group)
        if found:
            return found
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return str(
        annotations.get(c.QUEUE_NAME_ANNOTATION_KEY) or annotations.get(c.QUEUE_NAME_KEY) or c.DEFAULT_QUEUE
    )


def holds_room(pod: Obj | None) -> bool:
    """Whether a pod holds its node's room: bound, not being deleted, not finished."""
    if pod is None or not (pod.get("spec") or {}).get("nodeName"):
        return False
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return pod_phase(pod) not in (PodPhase.SUCCEEDED, PodPhase.FAILED)
