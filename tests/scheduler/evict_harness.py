"""Scenario harness for the preempt / reclaim / capacity tests: a cluster described as data, one session run.

Objects are the plain Kubernetes JSON the scheduler reads. ``Cluster`` collects them with a fluent API;
``run`` parses a conf, runs one session, and returns what a user would see: which pods were evicted, which
were bound, and which were nominated to which node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from volcano_py.api import constants as k
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.snapshot import Snapshot

Obj = dict[str, Any]
NOW = "2026-01-01T12:00:00Z"

PREEMPT_CONF = """
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: capacity
  - name: nodeorder
"""

RECLAIM_CONF = """
actions: "enqueue, allocate, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: capacity
  - name: nodeorder
"""


def _minute(n: int) -> str:
    return f"2026-01-01T{10 + n // 60:02d}:{n % 60:02d}:00Z"


@dataclass
class Outcome:
    result: SessionResult

    @property
    def evicted(self) -> set[str]:
        return {e.name for e in self.result.evictions}

    @property
    def bound(self) -> set[str]:
        return {b.name for b in self.result.binds}

    @property
    def nominated(self) -> dict[str, str]:
        return {p.name: p.node for p in self.result.pipelined}

    def evictions_for(self, preemptor_prefix: str) -> set[str]:
        return {
            e.name
            for e in self.result.evictions
            if (e.preemptor or "").split("/")[-1].startswith(preemptor_prefix)
        }


@dataclass
class Cluster:
    """A cluster under construction. Times are minutes after 10:00; later means younger."""

    nodes: list[Obj] = field(default_factory=list)
    pods: list[Obj] = field(default_factory=list)
    podgroups: list[Obj] = field(default_factory=list)
    queues: list[Obj] = field(default_factory=list)
    pdbs: list[Obj] = field(default_factory=list)
    resource_quotas: list[Obj] = field(default_factory=list)
    hypernodes: list[Obj] = field(default_factory=list)
    priority_classes: list[Obj] = field(
        default_factory=lambda: [
            {"metadata": {"name": "low"}, "value": 10},
            {"metadata": {"name": "mid"}, "value": 50},
            {"metadata": {"name": "high"}, "value": 100},
            {"metadata": {"name": "system-cluster-critical"}, "value": 2000000000},
        ]
    )

    def node(self, name: str, *, cpu: int = 8, memory: str = "32Gi", gpu: int = 0) -> Cluster:
        allocatable: dict[str, Any] = {"cpu": str(cpu), "memory": memory, "pods": "110"}
        if gpu:
            allocatable["nvidia.com/gpu"] = str(gpu)
        self.nodes.append(
            {
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": allocatable, "conditions": [{"type": "Ready", "status": "True"}]},
            }
        )
        return self

    def nodes_named(self, prefix: str, count: int, **kw: Any) -> Cluster:
        for i in range(count):
            self.node(f"{prefix}{i}", **kw)
        return self

    def queue(
        self,
        name: str,
        *,
        parent: str | None = None,
        deserved: dict[str, Any] | None = None,
        guarantee: dict[str, Any] | None = None,
        capability: dict[str, Any] | None = None,
        reclaimable: bool | None = None,
        priority: int = 0,
        state: str = "Open",
        dequeue_strategy: str | None = None,
        annotations: dict[str, str] | None = None,
        weight: int = 1,
    ) -> Cluster:
        spec: dict[str, Any] = {"weight": weight, "priority": priority}
        if dequeue_strategy:
            spec["dequeueStrategy"] = dequeue_strategy
        if parent:
            spec["parent"] = parent
        if deserved:
            spec["deserved"] = deserved
        if guarantee:
            spec["guarantee"] = {"resource": guarantee}
        if capability:
            spec["capability"] = capability
        if reclaimable is not None:
            spec["reclaimable"] = reclaimable
        metadata: dict[str, Any] = {"name": name, "annotations": dict(annotations or {})}
        self.queues.append({"metadata": metadata, "spec": spec, "status": {"state": state}})
        return self

    def job(
        self,
        name: str,
        *,
        queue: str = "default",
        priority: str = "",
        cpu: str = "1",
        memory: str = "1Gi",
        gpu: int = 0,
        running_on: list[str] | tuple[str, ...] = (),
        pending: int = 0,
        min_member: int | None = None,
        created: int = 0,
        namespace: str = "default",
        pod_annotations: dict[str, str] | None = None,
        pod_labels: dict[str, str] | None = None,
        preemption_policy: str | None = None,
        min_resources: bool = False,
        pod_priority: str | None = None,
        pending_priority: str | None = None,
        phase: str | None = None,
        affinity: dict[str, Any] | None = None,
        owned: bool = False,
        roles: tuple[tuple[str, int, int], ...] = (),
    ) -> Cluster:
        """A PodGroup with one running pod per entry of ``running_on`` and ``pending`` pending pods.

        ``priority`` is the PodGroup's (and by default its pods') PriorityClass; ``pod_priority`` and
        ``pending_priority`` give the pods, or only the pending ones, another. ``owned``: a Volcano Job
        controls the pods (it recreates an evicted one). ``roles``: (task name, pods, minAvailable) of a
        Volcano Job's tasks, its pods in that order, each labelled with its task and the minimums in the
        PodGroup's ``minTaskMember``, as the Job controller writes them."""
        total = len(running_on) + pending
        members = total if min_member is None else min_member
        role_of = [name for name, count, _ in roles for _ in range(count)]
        assert not roles or len(role_of) == total, "roles must name every pod"
        request: dict[str, Any] = {"cpu": cpu, "memory": memory}
        if gpu:
            request["nvidia.com/gpu"] = str(gpu)
        phase = phase or ("Running" if running_on and len(running_on) >= members else "Inqueue")
        spec: dict[str, Any] = {"minMember": members, "queue": queue}
        if priority:
            spec["priorityClassName"] = priority
        if min_resources:
            spec["minResources"] = {n: _scaled(v, members) for n, v in request.items()}
        if roles:
            spec["minTaskMember"] = {name: minimum for name, _, minimum in roles}
        self.podgroups.append(
            {
                "metadata": {"name": name, "namespace": namespace, "creationTimestamp": _minute(created)},
                "spec": spec,
                "status": {"phase": phase},
            }
        )
        for i in range(total):
            on = running_on[i] if i < len(running_on) else None
            klass = (pod_priority or priority) if on or not pending_priority else pending_priority
            pod_spec: dict[str, Any] = {
                "schedulerName": k.SCHEDULER_NAME,
                "priority": self._value(klass),
                "containers": [{"name": "c", "resources": {"requests": request}}],
            }
            if klass:
                pod_spec["priorityClassName"] = klass
            if preemption_policy:
                pod_spec["preemptionPolicy"] = preemption_policy
            if affinity:
                pod_spec["affinity"] = affinity
            if on:
                pod_spec["nodeName"] = on
            annotations = {k.KUBE_GROUP_NAME_KEY: name, **(pod_annotations or {})}
            metadata: Obj = {
                "name": f"{name}-{i}",
                "namespace": namespace,
                "uid": f"{namespace}-{name}-{i}",
                "annotations": annotations,
                "labels": {**(pod_labels or {}), **({k.TASK_SPEC_KEY: role_of[i]} if roles else {})},
                "creationTimestamp": _minute(created),
            }
            if owned:
                metadata["ownerReferences"] = [
                    {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": name,
                     "uid": f"job-{namespace}-{name}", "controller": True}
                ]  # fmt: skip
            self.pods.append(
                {
                    "metadata": metadata,
                    "spec": pod_spec,
                    "status": {"phase": "Running" if on else "Pending"},
                }
            )
        return self

    def _value(self, klass: str) -> int:
        return next((pc["value"] for pc in self.priority_classes if pc["metadata"]["name"] == klass), 0)

    def snapshot(self) -> Snapshot:
        return Snapshot.build(
            nodes=self.nodes,
            pods=self.pods,
            podgroups=self.podgroups,
            queues=self.queues,
            priority_classes=self.priority_classes,
            pdbs=self.pdbs,
            resource_quotas=self.resource_quotas,
            hypernodes=self.hypernodes,
        )

    def run(self, conf: str = PREEMPT_CONF) -> Outcome:
        """One session through the core's ``run_session`` with the built-in registry."""
        return Outcome(run_session(self.snapshot(), load_conf(conf), NOW))


def _scaled(value: str, count: int) -> str:
    if value.endswith("Gi"):
        return f"{int(value[:-2]) * count}Gi"
    return str(int(value) * count)
