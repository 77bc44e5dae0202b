"""Fluent builders for the Kubernetes objects scheduler tests feed in: ``make_pod("p1").req(cpu="1",
gpu=1).group("pg1").obj()``. Every builder returns a plain dict shaped as the API server returns it."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Self

from volcano_py.api import constants as k
from volcano_py.resources import GPU

_clock = [0]


def _stamp() -> str:
    # Creation order is the default tiebreak; give each object a distinct, increasing timestamp.
    _clock[0] += 1
    minutes, seconds = divmod(_clock[0], 60)
    return f"2026-01-01T{minutes // 60:02d}:{minutes % 60:02d}:{seconds:02d}Z"


def _quantities(cpu: Any, memory: Any, gpu: Any, extra: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if cpu is not None:
        out["cpu"] = str(cpu)
    if memory is not None:
        out["memory"] = str(memory)
    if gpu is not None:
        out[GPU] = str(gpu)
    out.update({name.replace("__", "/").replace("_", "."): str(v) for name, v in extra.items()})
    return out


class _Builder:
    def __init__(self, body: dict[str, Any]) -> None:
        self._body = body

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._body)

    def labels(self, **labels: str) -> Self:
        self._body["metadata"].setdefault("labels", {}).update(labels)
        return self

    def label(self, key: str, value: str) -> Self:
        self._body["metadata"].setdefault("labels", {})[key] = value
        return self

    def annotate(self, key: str, value: str) -> Self:
        self._body["metadata"].setdefault("annotations", {})[key] = value
        return self

    def created(self, timestamp: str) -> Self:
        self._body["metadata"]["creationTimestamp"] = timestamp
        return self


class PodBuilder(_Builder):
    def req(self, cpu: Any = None, memory: Any = None, gpu: Any = None, **extra: Any) -> Self:
        container = self._body["spec"]["containers"][0]
        container["resources"] = {"requests": _quantities(cpu, memory, gpu, extra)}
        return self

    def limits(self, **quantities: Any) -> Self:
        """Limits only (as device requests are written): ``limits(**{"volcano.sh/gpu-memory": 4000})``."""
        container = self._body["spec"]["containers"][0]
        container.setdefault("resources", {})["limits"] = {n: str(v) for n, v in quantities.items()}
        return self

    def group(self, podgroup: str, task: str | None = None) -> Self:
        annotations = self._body["metadata"].setdefault("annotations", {})
        annotations[k.KUBE_GROUP_NAME_KEY] = podgroup
        if task is not None:
            annotations[k.TASK_SPEC_KEY] = task
        return self

    def ns(self, namespace: str) -> Self:
        self._body["metadata"]["namespace"] = namespace
        return self

    def node(self, name: str) -> Self:
        self._body["spec"]["nodeName"] = name
        return self

    def phase(self, phase: str) -> Self:
        self._body["status"]["phase"] = phase
        return self

    def running(self, node: str) -> Self:
        return self.node(node).phase("Running")

    def terminating(self) -> Self:
        self._body["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def priority(self, value: int, class_name: str = "") -> Self:
        self._body["spec"]["priority"] = value
        if class_name:
            self._body["spec"]["priorityClassName"] = class_name
        return self

    def scheduler(self, name: str) -> Self:
        self._body["spec"]["schedulerName"] = name
        return self

    def selector(self, **labels: str) -> Self:
        self._body["spec"]["nodeSelector"] = {
            key.replace("__", "/").replace("_", "."): v for key, v in labels.items()
        }
        return self

    def node_selector(self, selector: dict[str, str]) -> Self:
        self._body["spec"]["nodeSelector"] = dict(selector)
        return self

    def affinity(self, affinity: dict[str, Any]) -> Self:
        self._body["spec"]["affinity"] = affinity
        return self

    def toleration(
        self, key: str, value: str = "", effect: str = "NoSchedule", operator: str = "Equal"
    ) -> Self:
        tol: dict[str, Any] = {"key": key, "operator": operator, "effect": effect}
        if value:
            tol["value"] = value
        self._body["spec"].setdefault("tolerations", []).append(tol)
        return self

    def host_port(self, port: int, protocol: str = "TCP") -> Self:
        self._body["spec"]["containers"][0]["ports"] = [
            {"containerPort": port, "hostPort": port, "protocol": protocol}
        ]
        return self

    def gates(self, *names: str) -> Self:
        """``spec.schedulingGates``: the API server binds the pod only once they are all removed."""
        self._body["spec"]["schedulingGates"] = [{"name": name} for name in names]
        return self

    def queue_gate(self, *, gated: bool = True) -> Self:
        """Opted in to queue admission through Volcano's queue-allocation gate, and (``gated``) holding it."""
        self.annotate(k.QUEUE_ALLOCATION_GATE_KEY, "true")
        if gated:
            gates = self._body["spec"].setdefault("schedulingGates", [])
            gates.append({"name": k.QUEUE_ALLOCATION_GATE_KEY})
        return self

    def claim_template(self, entry: str, template: str, claim: str | None = None) -> Self:
        """A ``spec.resourceClaims`` entry from a template; ``claim``: the claim the resourceclaim controller
        made for it (in ``status.resourceClaimStatuses``), None while it has not."""
        self._body["spec"].setdefault("resourceClaims", []).append(
            {"name": entry, "resourceClaimTemplateName": template}
        )
        if claim is not None:
            statuses = self._body["status"].setdefault("resourceClaimStatuses", [])
            statuses.append({"name": entry, "resourceClaimName": claim})
        return self

    def claim(self, entry: str, claim: str) -> Self:
        """A ``spec.resourceClaims`` entry naming a (shareable) claim."""
        self._body["spec"].setdefault("resourceClaims", []).append(
            {"name": entry, "resourceClaimName": claim}
        )
        return self

    def preemptable(self, value: bool) -> Self:
        self._body["metadata"].setdefault("annotations", {})[k.PREEMPTABLE_KEY] = str(value).lower()
        return self


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-{namespace}-{name}",
                "creationTimestamp": _stamp(),
            },
            "spec": {"schedulerName": k.SCHEDULER_NAME, "containers": [{"name": "main", "image": "busybox"}]},
            "status": {"phase": "Pending"},
        }
    )


class NodeBuilder(_Builder):
    def cap(
        self, cpu: Any = None, memory: Any = None, gpu: Any = None, pods: int | None = None, **extra: Any
    ) -> Self:
        quantities = _quantities(cpu, memory, gpu, extra)
        if pods is not None:
            quantities["pods"] = str(pods)
        self._body["status"]["allocatable"] = quantities
        self._body["status"]["capacity"] = dict(quantities)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        taint: dict[str, Any] = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        self._body["spec"].setdefault("taints", []).append(taint)
        return self

    def cordon(self) -> Self:
        self._body["spec"]["unschedulable"] = True
        return self

    def not_ready(self) -> Self:
        self._body["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
        return self

    def zone(self, zone: str) -> Self:
        return self.label("topology.kubernetes.io/zone", zone)


def make_node(
    name: str, cpu: Any = "8", memory: Any = "32Gi", gpu: Any = None, pods: int = 110
) -> NodeBuilder:
    builder = NodeBuilder(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        }
    )
    return builder.cap(cpu=cpu, memory=memory, gpu=gpu, pods=pods)


class PodGroupBuilder(_Builder):
    def min(self, count: int) -> Self:
        self._body["spec"]["minMember"] = count
        return self

    def queue(self, name: str) -> Self:
        self._body["spec"]["queue"] = name
        return self

    def min_res(self, cpu: Any = None, memory: Any = None, gpu: Any = None, **extra: Any) -> Self:
        self._body["spec"]["minResources"] = _quantities(cpu, memory, gpu, extra)
        return self

    def task_min(self, **counts: int) -> Self:
        self._body["spec"]["minTaskMember"] = dict(counts)
        return self

    def phase(self, phase: str) -> Self:
        self._body["status"]["phase"] = phase
        return self

    def priority_class(self, name: str) -> Self:
        self._body["spec"]["priorityClassName"] = name
        return self

    def sub_group(
        self,
        name: str,
        keys: Sequence[str],
        *,
        size: int | None = None,
        min_groups: int | None = None,
        selector: dict[str, str] | None = None,
        topology: dict[str, Any] | None = None,
    ) -> Self:
        """One more ``spec.subGroupPolicy`` entry (unset fields left out, as a user would)."""
        policy: dict[str, Any] = {"name": name, "matchLabelKeys": list(keys)}
        if size is not None:
            policy["subGroupSize"] = size
        if min_groups is not None:
            policy["minSubGroups"] = min_groups
        if selector is not None:
            policy["labelSelector"] = {"matchLabels": selector}
        if topology is not None:
            policy["networkTopology"] = topology
        self._body["spec"].setdefault("subGroupPolicy", []).append(policy)
        return self


def make_pg(
    name: str, min_member: int = 1, namespace: str = "default", phase: str = "Inqueue"
) -> PodGroupBuilder:
    return PodGroupBuilder(
        {
            "apiVersion": k.SCHEDULING_API_VERSION,
            "kind": k.PODGROUP_KIND,
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": _stamp()},
            "spec": {"minMember": min_member, "queue": k.DEFAULT_QUEUE},
            "status": {"phase": phase},
        }
    )


class QueueBuilder(_Builder):
    def weight(self, weight: int) -> Self:
        self._body["spec"]["weight"] = weight
        return self

    def capability(self, cpu: Any = None, memory: Any = None, gpu: Any = None, **extra: Any) -> Self:
        self._body["spec"]["capability"] = _quantities(cpu, memory, gpu, extra)
        return self

    def guarantee(self, cpu: Any = None, memory: Any = None, gpu: Any = None, **extra: Any) -> Self:
        self._body["spec"]["guarantee"] = {"resource": _quantities(cpu, memory, gpu, extra)}
        return self

    def state(self, state: str) -> Self:
        self._body["status"]["state"] = state
        return self

    def dequeue(self, strategy: str) -> Self:
        self._body["spec"]["dequeueStrategy"] = strategy
        return self


def make_queue(name: str, weight: int = 1) -> QueueBuilder:
    return QueueBuilder(
        {
            "apiVersion": k.SCHEDULING_API_VERSION,
            "kind": k.QUEUE_KIND,
            "metadata": {"name": name, "creationTimestamp": _stamp()},
            "spec": {"weight": weight, "reclaimable": True},
            "status": {"state": "Open"},
        }
    )


def make_priority_class(name: str, value: int, *, default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


def make_nodeshard(
    name: str, desired: Sequence[str], in_use: Sequence[str] = (), to_add: Sequence[str] = ()
) -> dict[str, Any]:
    return {
        "apiVersion": "shard.volcano.sh/v1alpha1",
        "kind": "NodeShard",
        "metadata": {"name": name},
        "spec": {"nodesDesired": list(desired)},
        "status": {"nodesInUse": list(in_use), "nodesToAdd": list(to_add)},
    }
