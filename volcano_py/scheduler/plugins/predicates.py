"""predicates: which nodes may take a pod. Cordoned and not-ready nodes, nodeSelector, required node
affinity and NoSchedule/NoExecute taints are fixed for the session and computed once per class, over all
nodes at once; host ports and required pod (anti-)affinity change as pods land and are re-evaluated.
Resource fit (including extended resources and the node's pod limit) is checked by the placement itself.
A pod's ResourceClaims (Dynamic Resource Allocation) must be satisfiable on the node by devices no other claim
holds; they change as pods land, and are re-evaluated (``dra``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..framework.arguments import Arguments, ConfError
from ..framework.classes import TaskClass
from ..framework.extension import BoolArray, IntArray, Invalid, NodeVerdict
from ..framework.job import JobInfo
from ..framework.node import NodeInfo
from ..framework.session import Session
from ..framework.task import TaskInfo
from .dra import DraSession
from .matching import NodeLabels, SelectorError, taint_text, tolerates, untolerated
from .podaffinity import (
    affinity_failures,
    anti_affinity_terms,
    has_required_anti_affinity,
    host_port_failures,
    repelled,
)

_HARD = frozenset({"NoSchedule", "NoExecute"})
_CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
# Volcano's predicate switches (all default true there) that turn off a check this plugin makes.
_SWITCHES = {
    "predicate.NodeAffinityEnable": "node_affinity",
    "predicate.NodePortsEnable": "node_ports",
    "predicate.TaintTolerationEnable": "taints",
    "predicate.PodAffinityEnable": "pod_affinity",
}
# Volcano's checks this scheduler does not make; false (or unset) is what happens here, true is refused.
_NO_VOLUMES = "volumes are not modelled (no PVCs, StorageClasses or CSINodes are read)"
_NOT_MODELLED = {
    "predicate.NodeVolumeLimitsEnable": _NO_VOLUMES,
    "predicate.VolumeZoneEnable": _NO_VOLUMES,
    "predicate.VolumeBindingEnable": _NO_VOLUMES,
    "predicate.PodTopologySpreadEnable": "pod topology spread constraints are not checked",
    "predicate.ProportionalEnable": "proportional cpu/memory reservation per GPU is not implemented",
    "predicate.GPUSharingEnable": (
        "GPU sharing belongs to the deviceshare plugin (set deviceshare.GPUSharingEnable there)"
    ),
    "predicate.VGPUEnable": (
        "GPU sharing belongs to the deviceshare plugin (set deviceshare.VGPUEnable there)"
    ),
    "predicate.GPUNumberEnable": (
        "GPU sharing belongs to the deviceshare plugin (set deviceshare.GPUNumberEnable there)"
    ),
}
DRA_FLAG = "predicate.DynamicResourceAllocationEnable"
DRA_REASON = "DynamicResourceAllocation"


_NodeFacts = tuple[
    NodeLabels, list[tuple[tuple[Mapping[str, Any], ...], "np.ndarray[Any, Any]"]], BoolArray, BoolArray
]


def _node_facts(nodes: Sequence[NodeInfo]) -> _NodeFacts:
    """What the predicates read of the nodes alone (labels, taints grouped, cordoned, not Ready): kept by the
    snapshot builder for the next session while the nodes stay the same, and never changed once made."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for row, node in enumerate(nodes):
        key = tuple(
            sorted((str(t.get("key")), str(t.get("value")), str(t.get("effect"))) for t in node.taints)
        )
        groups.setdefault(key, []).append(row)
    return (
        NodeLabels([n.labels for n in nodes], [n.name for n in nodes]),
        [(nodes[rows[0]].taints, np.array(rows)) for rows in groups.values()],
        np.array([n.unschedulable for n in nodes], dtype=np.bool_),
        np.array([not n.ready for n in nodes], dtype=np.bool_),
    )


class PredicatesPlugin:
    """Arguments: the ``_SWITCHES`` above (default true); ``predicate.CacheEnable`` (a cache of Volcano's,
    nothing to switch here); ``predicate.DynamicResourceAllocationEnable`` (default true, as Volcano's
    follows Kubernetes' ``DynamicResourceAllocation`` feature gate, on from 1.34): a pod's ResourceClaims
    must be satisfiable on its node, and are allocated and reserved for it at bind (``dra``). Set false, a
    job with a pod that claims devices is refused with reason ``DynamicResourceAllocation`` rather than
    placed as if it claimed nothing."""

    name = "predicates"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known(
            {*_SWITCHES, *_NOT_MODELLED, DRA_FLAG, "predicate.CacheEnable"}, prefixes=("predicate.resources",)
        )
        for flag, why in _NOT_MODELLED.items():
            if arguments.get_bool(flag, False):
                raise ConfError(f"plugin predicates: {flag}: true is not supported: {why}; remove it")
        if any(key.startswith("predicate.resources") for key in arguments.values):
            raise ConfError(
                "plugin predicates: predicate.resources* (proportional reservation) is not supported; "
                "remove it"
            )
        arguments.get_bool("predicate.CacheEnable", False)
        self.enabled = {attr: arguments.get_bool(flag, True) for flag, attr in _SWITCHES.items()}
        self.dra = arguments.get_bool(DRA_FLAG, True)
        self.devices = DraSession()
        self.labels = NodeLabels([], [])
        self.anti_terms: list[tuple[str, Mapping[str, Any]]] = []
        self.taint_groups: list[tuple[tuple[Mapping[str, Any], ...], np.ndarray[Any, Any]]] = []
        self.cordoned: BoolArray = np.zeros(0, dtype=np.bool_)
        self.not_ready: BoolArray = np.zeros(0, dtype=np.bool_)
        self.ssn: Session | None = None

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        facts = ssn.snapshot.node_facts.get(self.name)
        if facts is None:
            facts = ssn.snapshot.node_facts[self.name] = _node_facts(ssn.nodes)
        self.labels, self.taint_groups, self.cordoned, self.not_ready = facts
        # Pods placed this session may carry anti-affinity too, so pending ones count as well.
        self.anti_terms = anti_affinity_terms(
            [t for t in ssn.snapshot.affine_tasks() if has_required_anti_affinity(t)]
            + [t for j in ssn.waiting_jobs() for t in j.pending_tasks if has_required_anti_affinity(t)]
        )
        if self.dra:
            self.devices.open(ssn, self.labels)

    def on_session_close(self, ssn: Session) -> None:
        self.ssn = None
        self.devices.close()

    def predicate_dynamic(self, klass: TaskClass) -> bool:
        return self.devices.asks(klass) or self.predicate_dynamic_besides_devices(klass)

    def predicate_dynamic_besides_devices(self, klass: TaskClass) -> bool:
        return (self.enabled["node_ports"] and bool(klass.host_ports)) or (
            self.enabled["pod_affinity"] and (klass.has_pod_affinity or repelled(klass, self.anti_terms))
        )

    def device_slots(self, ssn: Session, klass: TaskClass, cap: int) -> IntArray | None:
        return self.devices.slots(klass, cap)

    def on_allocate(self, task: TaskInfo) -> None:
        self.devices.on_allocate(task)

    def on_deallocate(self, task: TaskInfo) -> None:
        self.devices.on_deallocate(task)

    def job_valid(self, job: JobInfo) -> Invalid | None:
        if self.dra:
            return None
        for task in job.pending_tasks:
            if task.claims_used:
                return Invalid(
                    DRA_REASON,
                    f"pod {task.name} claims devices through spec.resourceClaims, and this scheduler's "
                    f"predicates plugin has {DRA_FLAG}: false; set it true (the default) to allocate them",
                )
        return None

    def predicate(self, ssn: Session, klass: TaskClass) -> NodeVerdict:
        n = len(ssn.nodes)
        failures: list[tuple[str, BoolArray]] = []
        if self.cordoned.any() and not any(tolerates(t, _CORDON_TAINT) for t in klass.tolerations):
            failures.append(("are cordoned (spec.unschedulable)", self.cordoned))
        if self.not_ready.any():
            failures.append(("are not Ready", self.not_ready))
        try:
            if klass.node_selector and self.enabled["node_affinity"]:
                text = ",".join(f"{k}={v}" for k, v in sorted(klass.node_selector.items()))
                failures.append(
                    (f"do not match nodeSelector {text}", ~self.labels.equals(klass.node_selector))
                )
            required = (klass.affinity.get("nodeAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            )
            if required is not None and self.enabled["node_affinity"]:
                terms = required.get("nodeSelectorTerms") or []
                failures.append(("do not match required node affinity", ~self.labels.terms(terms)))
        except SelectorError as err:
            failures.append((f"cannot be matched: {err}", np.ones(n, dtype=np.bool_)))
        for taints, rows in self.taint_groups if self.enabled["taints"] else ():
            bad = untolerated(taints, klass.tolerations, _HARD)
            if bad:
                fail = np.zeros(n, dtype=np.bool_)
                fail[rows] = True
                failures.append((f"have untolerated taint {taint_text(bad[0])}", fail))
        if klass.host_ports and self.enabled["node_ports"]:
            failures.extend(host_port_failures(ssn.nodes, klass))
        if self.enabled["pod_affinity"] and (klass.has_pod_affinity or repelled(klass, self.anti_terms)):
            failures.extend(affinity_failures(ssn.nodes, self.labels, klass))
        if self.devices.asks(klass):
            failures.extend(self.devices.predicate(klass).failures)
        ok = np.ones(n, dtype=np.bool_)
        for _, fail in failures:
            ok &= ~fail
        return NodeVerdict(ok, failures)
