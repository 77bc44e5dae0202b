"""Where each resource the scheduler reads or writes lives in the REST API."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.api import constants as c
from volcano_py.api import dra


@dataclass(frozen=True, slots=True)
class ResourceKind:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def _prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def collection_path(self, namespace: str | None = None) -> str:
        """The list/watch/create path; all namespaces when ``namespace`` is None."""
        if self.namespaced and namespace is not None:
            return f"{self._prefix()}/namespaces/{namespace}/{self.plural}"
        return f"{self._prefix()}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None, subresource: str | None = None) -> str:
        if self.namespaced and not namespace:
            raise ValueError(f"{self.kind} {name!r} is namespaced: pass its namespace")
        path = f"{self.collection_path(namespace if self.namespaced else None)}/{name}"
        return f"{path}/{subresource}" if subresource else path


NODES: Final = ResourceKind("", "v1", "nodes", "Node", namespaced=False)
PODS: Final = ResourceKind("", "v1", "pods", "Pod", namespaced=True)
EVENTS: Final = ResourceKind("", "v1", "events", "Event", namespaced=True)
PRIORITY_CLASSES: Final = ResourceKind(
    "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False
)
LEASES: Final = ResourceKind("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
PODGROUPS: Final = ResourceKind(
    c.SCHEDULING_GROUP, c.SCHEDULING_VERSION, c.PODGROUP_PLURAL, c.PODGROUP_KIND, namespaced=True
)
QUEUES: Final = ResourceKind(
    c.SCHEDULING_GROUP, c.SCHEDULING_VERSION, c.QUEUE_PLURAL, c.QUEUE_KIND, namespaced=False
)
PODDISRUPTIONBUDGETS: Final = ResourceKind(
    "policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", namespaced=True
)
JOBS: Final = ResourceKind(c.BATCH_GROUP, c.BATCH_VERSION, c.JOB_PLURAL, c.JOB_KIND, namespaced=True)
REPLICASETS: Final = ResourceKind("apps", "v1", "replicasets", "ReplicaSet", namespaced=True)
RESOURCEQUOTAS: Final = ResourceKind("", "v1", "resourcequotas", "ResourceQuota", namespaced=True)
HYPERNODES: Final = ResourceKind(
    c.TOPOLOGY_GROUP, c.TOPOLOGY_VERSION, c.HYPERNODE_PLURAL, c.HYPERNODE_KIND, namespaced=False
)
# Written by the sharding controller; read (and its status written) by a scheduler run with
# --scheduler-sharding-mode soft or hard.
NODESHARDS: Final = ResourceKind(
    c.SHARD_GROUP, c.SHARD_VERSION, c.NODESHARD_PLURAL, c.NODESHARD_KIND, namespaced=False
)
CONFIGMAPS: Final = ResourceKind("", "v1", "configmaps", "ConfigMap", namespaced=True)
PVCS: Final = ResourceKind("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", namespaced=True)
JOBFLOWS: Final = ResourceKind(
    c.FLOW_GROUP, c.FLOW_VERSION, c.JOBFLOW_PLURAL, c.JOBFLOW_KIND, namespaced=True
)
JOBTEMPLATES: Final = ResourceKind(
    c.FLOW_GROUP, c.FLOW_VERSION, c.JOBTEMPLATE_PLURAL, c.JOBTEMPLATE_KIND, namespaced=True
)
CRONJOBS: Final = ResourceKind(
    c.BATCH_GROUP, c.BATCH_VERSION, c.CRONJOB_PLURAL, c.CRONJOB_KIND, namespaced=True
)
COMMANDS: Final = ResourceKind(c.BUS_GROUP, c.BUS_VERSION, c.COMMAND_PLURAL, c.COMMAND_KIND, namespaced=True)
NUMATOPOLOGIES: Final = ResourceKind(
    c.NODEINFO_GROUP, c.NODEINFO_VERSION, c.NUMATOPOLOGY_PLURAL, c.NUMATOPOLOGY_KIND, namespaced=False
)

DEVICE_CLASSES: Final = ResourceKind(
    dra.RESOURCE_GROUP, dra.RESOURCE_VERSION, dra.DEVICE_CLASS_PLURAL, dra.DEVICE_CLASS_KIND, namespaced=False
)
RESOURCE_SLICES: Final = ResourceKind(
    dra.RESOURCE_GROUP,
    dra.RESOURCE_VERSION,
    dra.RESOURCE_SLICE_PLURAL,
    dra.RESOURCE_SLICE_KIND,
    namespaced=False,
)
RESOURCE_CLAIMS: Final = ResourceKind(
    dra.RESOURCE_GROUP,
    dra.RESOURCE_VERSION,
    dra.RESOURCE_CLAIM_PLURAL,
    dra.RESOURCE_CLAIM_KIND,
    namespaced=True,
)


def plain(body: Mapping[str, Any]) -> dict[str, Any]:
    """A read-only body (Kopf's, an admission review's) as the plain dict the rules take."""
    return {key: body[key] for key in body}


def object_key(obj: dict[str, object]) -> str:
    """``namespace/name`` for namespaced objects, ``name`` for cluster-scoped ones (as client-go keys)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise ValueError("object has no metadata; expected a Kubernetes object with metadata.name")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("object has no metadata.name")
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else name


def object_identity(obj: Mapping[str, Any]) -> str:
    """The object's uid, or ``namespace/name`` when it has none (a body built by hand, not yet created)."""
    meta = obj.get("metadata") or {}
    return str(meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}")


# The kinds one scheduling session reads, by the name of their field in ``ClusterObjects``, and whether
# their CRD may be absent (the cluster is then read as having none). Every reader of the session's input
# (the scheduler's cache, the dashboard, ``vcctl job why``) reads this one list.
SESSION_KINDS: Final[tuple[tuple[str, ResourceKind, bool], ...]] = (
    ("nodes", NODES, False),
    ("pods", PODS, False),
    ("podgroups", PODGROUPS, False),
    ("queues", QUEUES, False),
    ("priority_classes", PRIORITY_CLASSES, False),
    ("hypernodes", HYPERNODES, True),
    ("pdbs", PODDISRUPTIONBUDGETS, False),
    ("resource_quotas", RESOURCEQUOTAS, False),
    ("numatopologies", NUMATOPOLOGIES, True),
    # Served from Kubernetes 1.34 on; an older API server is read as having no devices and no claims.
    ("device_classes", DEVICE_CLASSES, True),
    ("resource_slices", RESOURCE_SLICES, True),
    ("resource_claims", RESOURCE_CLAIMS, True),
)
