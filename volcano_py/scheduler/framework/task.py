"""TaskInfo: one pod as the scheduler sees it, read from the pod's Kubernetes JSON.

Pods of one Volcano task are identical for placement, so every TaskInfo carries ``class_key``: the
scheduling-relevant part of its spec. The session evaluates predicates and scores once per class.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from volcano_py.api import constants as k
from volcano_py.api.bodies.pod import pod_start_time
from volcano_py.api.objects import metadata_of, spec_of
from volcano_py.api.revocable import revocable_zone
from volcano_py.api.scheduling import group_name_of
from volcano_py.resources import QuantityError, Resource, pod_request

from .decisions import ClaimWrite
from .status import TaskStatus, task_status_of

_DEVICE_RESOURCES = frozenset(
    {
        k.GPU_MEMORY_RESOURCE,
        k.GPU_NUMBER_RESOURCE,
        k.VGPU_NUMBER_RESOURCE,
        k.VGPU_MEMORY_RESOURCE,
        k.VGPU_MEMORY_PERCENTAGE_RESOURCE,
        k.VGPU_CORES_RESOURCE,
    }
)

# Pods whose priority class is one of these are system-critical: never victims (conformance).
SYSTEM_CRITICAL_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})


@functools.lru_cache(maxsize=65536)
def timestamp(created: str) -> float:
    """Seconds since the epoch of a creationTimestamp; 0 when absent or unreadable."""
    try:
        return datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def started_at(task: TaskInfo) -> float:
    """When the pod started (``status.startTime``, else its creation), in seconds since the epoch; 0 when
    neither is known."""
    started = pod_start_time(task.pod) or task.created
    return timestamp(str(started)) if started else 0.0


def _freeze(value: Any) -> Hashable:
    if isinstance(value, Mapping):
        return tuple(sorted((key, _freeze(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(item) for item in value)
    return value  # type: ignore[no-any-return]


@dataclass(slots=True, eq=False)
class TaskInfo:
    """One pod. ``status`` and ``node_name`` change as a session allocates; the rest is fixed."""

    uid: str
    namespace: str
    name: str
    job_id: str | None
    role: str
    resreq: Resource
    priority: int
    status: TaskStatus
    node_name: str = ""
    created: str = ""
    scheduler_name: str = k.SCHEDULER_NAME
    priority_class: str = ""
    preemptable: bool = True
    labels: Mapping[str, str] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: Mapping[str, Any] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    host_ports: tuple[tuple[str, str, int], ...] = ()
    # ``spec.schedulingGates`` is not empty: the API server refuses to bind the pod until they are removed,
    # so no action places it (a change of gates is a new pod version, read again).
    gated: bool = False
    # Leave to run on revocable nodes (tdm): ``*`` or "" (``api.revocable``); part of ``class_key``.
    revocable_zone: str = ""
    class_key: Hashable = None
    # The session's equivalence class for this task, set on first use (saves re-hashing ``class_key``).
    klass: Any = field(default=None, repr=False)
    pod: Mapping[str, Any] = field(default_factory=dict, repr=False)
    # Annotations a plugin wants written on the pod with its bind (deviceshare's chosen GPU cards).
    bind_annotations: dict[str, str] = field(default_factory=dict, repr=False)
    # The pod has ``spec.resourceClaims`` (Dynamic Resource Allocation).
    claims_used: bool = False
    # The claims to allocate and reserve for the pod before its bind (the predicates plugin's choice).
    claim_writes: tuple[ClaimWrite, ...] = field(default=(), repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def fresh(self) -> TaskInfo:
        """A twin for a new snapshot: the parsed facts shared (they are never changed), the session's own
        state (status, node, class, job of a shadow, bind annotations) as parsed. Three times cheaper than
        reading the pod again."""
        twin = _new_task(TaskInfo)
        twin.uid = self.uid
        twin.namespace = self.namespace
        twin.name = self.name
        twin.job_id = self.job_id
        twin.role = self.role
        twin.resreq = self.resreq
        twin.priority = self.priority
        twin.status = self.status
        twin.node_name = self.node_name
        twin.created = self.created
        twin.scheduler_name = self.scheduler_name
        twin.priority_class = self.priority_class
        twin.preemptable = self.preemptable
        twin.labels = self.labels
        twin.node_selector = self.node_selector
        twin.affinity = self.affinity
        twin.tolerations = self.tolerations
        twin.host_ports = self.host_ports
        twin.gated = self.gated
        twin.revocable_zone = self.revocable_zone
        twin.class_key = self.class_key
        twin.pod = self.pod
        twin.klass = None
        twin.bind_annotations = {}
        twin.claims_used = self.claims_used
        twin.claim_writes = ()
        return twin

    def revised(self, old_pod: Mapping[str, Any], pod: Mapping[str, Any]) -> TaskInfo | None:
        """This record (read from ``old_pod``) for ``pod``, a later version of the same pod, when all that
        changed is what a bind and the kubelet write: the node, the status, the resource version and the
        field managers. None otherwise; then the pod is read again. A pod is seen four or five times on its
        way to Running (created, bound, started, its conditions), and reading it was most of a snapshot."""
        old_meta, meta = metadata_of(old_pod), metadata_of(pod)
        old_spec, spec = spec_of(old_pod), spec_of(pod)
        if not _same_except(old_meta, meta, _WRITTEN_METADATA):
            return None
        if not _same_except(old_spec, spec, _BOUND_SPEC):
            return None
        twin = self.fresh()
        twin.status = task_status_of(pod)
        twin.node_name = spec.get("nodeName") or ""
        twin.pod = pod
        return twin

    @property
    def best_effort(self) -> bool:
        """A pod with no requests at all: backfill places it, gangs do not wait for it."""
        return self.resreq.is_zero()

    @property
    def system_critical(self) -> bool:
        return self.priority_class in SYSTEM_CRITICAL_CLASSES or self.namespace == "kube-system"

    @classmethod
    def from_pod(
        cls, pod: Mapping[str, Any], *, priority_classes: Mapping[str, int] | None = None
    ) -> TaskInfo:
        """Read a pod dict (camelCase, as the API returns it). Bad quantities name the pod and the field."""
        metadata = metadata_of(pod)
        spec = spec_of(pod)
        namespace = metadata.get("namespace") or "default"
        name = metadata.get("name") or ""
        annotations = metadata.get("annotations") or {}
        labels = metadata.get("labels") or {}
        try:
            resreq = pod_request(spec)
        except QuantityError as err:
            raise ValueError(f"pod {namespace}/{name}: spec.containers[].resources: {err}") from None
        group = group_name_of(pod)
        priority_class = spec.get("priorityClassName") or ""
        priority = spec.get("priority")
        if priority is None:
            priority = (priority_classes or {}).get(priority_class, 0)
        host_ports = tuple(
            (str(port.get("protocol") or "TCP"), str(port.get("hostIP") or "0.0.0.0"), int(port["hostPort"]))
            for container in spec.get("containers") or ()
            for port in container.get("ports") or ()
            if port.get("hostPort")
        )
        node_selector = dict(spec.get("nodeSelector") or {})
        affinity = dict(spec.get("affinity") or {})
        tolerations = tuple(spec.get("tolerations") or ())
        has_pod_affinity = bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))
        zone = revocable_zone(annotations)
        device_key: Hashable = None
        if any(name in _DEVICE_RESOURCES for name in resreq):
            # Shared GPUs are placed per container and may be limited to card types: pods that differ there
            # place differently. A percentage of "whichever card" is no node capacity, so not a request.
            device_key = (
                _freeze([(c.get("resources") or {}) for c in spec.get("containers") or ()]),
                annotations.get(k.VGPU_USE_TYPE_KEY),
                annotations.get(k.VGPU_NOUSE_TYPE_KEY),
            )
            if any(name in k.DEVICE_ONLY_RESOURCES for name in resreq):
                resreq = Resource({n: v for n, v in resreq.items() if n not in k.DEVICE_ONLY_RESOURCES})
        numa_policy = annotations.get(k.NUMA_POLICY_KEY)
        if numa_policy:
            # numa-aware places by whole CPUs per container and by QoS (limits), and by the policy itself.
            containers = [(c.get("resources") or {}) for c in spec.get("containers") or ()]
            device_key = (device_key, numa_policy, _freeze(containers))
        class_key = (
            resreq,
            _freeze(node_selector),
            _freeze(affinity),
            _freeze(tolerations),
            host_ports,
            # Self-(anti-)affinity depends on the pod's own labels, so they split classes only then.
            _freeze(labels) if has_pod_affinity else None,
            device_key,
            zone,
        )
        return cls(
            uid=metadata.get("uid") or f"{namespace}/{name}",
            namespace=namespace,
            name=name,
            job_id=f"{namespace}/{group}" if group else None,
            role=annotations.get(k.TASK_SPEC_KEY) or labels.get(k.TASK_SPEC_KEY) or "",
            resreq=resreq,
            priority=int(priority),
            status=task_status_of(pod),
            node_name=spec.get("nodeName") or "",
            created=metadata.get("creationTimestamp") or "",
            scheduler_name=spec.get("schedulerName") or "default-scheduler",
            priority_class=priority_class,
            preemptable=str(annotations.get(k.PREEMPTABLE_KEY, labels.get(k.PREEMPTABLE_KEY, "true"))).lower()
            != "false",
            labels=labels,
            node_selector=node_selector,
            affinity=affinity,
            tolerations=tolerations,
            host_ports=host_ports,
            gated=bool(spec.get("schedulingGates")),
            claims_used=bool(spec.get("resourceClaims")),
            revocable_zone=zone,
            class_key=class_key,
            pod=pod,
        )


_new_task = object.__new__
# What changes between two versions of a pod without changing what the task was read from, but its status.
_WRITTEN_METADATA: Final = frozenset({"resourceVersion", "managedFields"})
_BOUND_SPEC: Final = frozenset({"nodeName"})


def _same_except(old: Mapping[str, Any], new: Mapping[str, Any], skip: frozenset[str]) -> bool:
    """The two mappings are equal once the keys in ``skip`` are left out of both."""
    if len(old) - len(skip.intersection(old)) != len(new) - len(skip.intersection(new)):
        return False
    missing = _MISSING
    for key, value in old.items():  # noqa: SIM110 - a loop, not all(genexpr): once per new pod version
        if key not in skip and new.get(key, missing) != value:
            return False
    return True


_MISSING: Final = object()
