"""numa-aware: a CPU-pinned pod goes only to a node whose NUMA cells can give it its CPUs the way the pod's
topology policy demands, instead of being refused by the kubelet after it was bound (Volcano's
``numa-aware``).

A pod takes part when it is Guaranteed, has whole-CPU containers, and carries the policy annotation
``volcano.sh/numa-topology-policy`` (a Job task's ``topologyPolicy``) other than ``none``. The node must have
a Numatopology (``nodeinfo.volcano.sh``) reporting the static CPU manager and the same topology manager
policy. Nodes are scored by how few NUMA nodes the pod would span, times ``weight`` (default 1). Unlike
Volcano, a Guaranteed pod without the annotation is not checked against its node's policy; the kubelet
still enforces that policy. The hint math is in ``numatopo``.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from volcano_py.api import constants as k
from volcano_py.api.batch import NumaPolicy
from volcano_py.api.objects import annotation_of, name_of

from ..framework.arguments import Arguments
from ..framework.classes import TaskClass
from ..framework.extension import FloatArray, IntArray, NodeVerdict
from ..framework.session import Session
from ..framework.task import TaskInfo
from .numatopo import Assignment, NodeNuma, guaranteed, node_numa, pinned_cpus, place

_MAX_SCORE = 100.0
_POLICIES = tuple(p.value for p in NumaPolicy)

Need = tuple[str, tuple[tuple[str, int], ...]]


def need_of(task: TaskInfo) -> Need | None:
    """(policy, pinned containers) when numa-aware must place the pod, else None."""
    policy = annotation_of(task.pod, k.NUMA_POLICY_KEY)
    if policy in ("", NumaPolicy.NONE.value) or not guaranteed(task.pod):
        return None
    containers = tuple(pinned_cpus(task.pod))
    return (policy, containers) if containers else None


class NumaAwarePlugin:
    name = "numa-aware"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({"weight"})
        self.weight = arguments.get_int("weight", 1, minimum=0)
        self.ssn: Session | None = None
        self.nodes: list[NodeNuma | None] = []
        self.needs: dict[Hashable, Need | None] = {}
        self.assigned: dict[str, tuple[int, Assignment]] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        by_name = {}
        for topo in ssn.snapshot.numatopologies:
            by_name[name_of(topo)] = node_numa(topo)
        self.nodes = [by_name.get(node.name) for node in ssn.nodes]
        self.needs = {}
        self.assigned = {}
        for job in ssn.jobs.values():
            for task in job.pending_tasks:
                klass = ssn.task_class(task)
                if klass.key not in self.needs:
                    self.needs[klass.key] = need_of(task)

    def on_session_close(self, ssn: Session) -> None:
        self.ssn, self.nodes, self.needs, self.assigned = None, [], {}, {}

    def _need(self, klass: TaskClass) -> Need | None:
        return self.needs.get(klass.key)

    def predicate_dynamic(self, klass: TaskClass) -> bool:
        return self._need(klass) is not None

    def _refusal(self, numa: NodeNuma | None, need: Need) -> str | None:
        policy, containers = need
        if policy not in _POLICIES:
            return (
                f"cannot place a pod whose {k.NUMA_POLICY_KEY} is {policy!r} "
                f"(the pod must use one of {', '.join(_POLICIES)})"
            )
        if numa is None:
            return f"have no Numatopology ({k.NODEINFO_GROUP}) to place a {policy} pod"
        if numa.cpu_manager != k.CPU_MANAGER_STATIC:
            return f"run CPU manager policy {numa.cpu_manager or 'none'!r}, not static"
        if numa.topology != policy:
            return f"run topology manager policy {numa.topology or 'none'!r}, not the pod's {policy!r}"
        outcome = place(numa, policy, containers)
        return None if isinstance(outcome, Assignment) else outcome.reason

    def predicate(self, ssn: Session, klass: TaskClass) -> NodeVerdict:
        ok = np.ones(len(ssn.nodes), dtype=np.bool_)
        need = self._need(klass)
        if need is None:
            return NodeVerdict(ok)
        failing: dict[str, list[int]] = {}
        for row, numa in enumerate(self.nodes):
            reason = self._refusal(numa, need)
            if reason is not None:
                failing.setdefault(reason, []).append(row)
        failures = []
        for reason, rows in failing.items():
            mask = np.zeros(len(ssn.nodes), dtype=np.bool_)
            mask[rows] = True
            ok[rows] = False
            failures.append((reason, mask))
        return NodeVerdict(ok, failures)

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        scores: FloatArray = np.zeros(len(rows), dtype=np.float64)
        need = self._need(klass)
        if need is None or not self.weight:
            return scores
        for i, row in enumerate(rows.tolist()):
            numa = self.nodes[row]
            if numa is None:
                continue
            outcome = place(numa, need[0], need[1])
            if isinstance(outcome, Assignment) and outcome.cells:
                scores[i] = self.weight * _MAX_SCORE / len(outcome.cells)
        return scores

    def on_allocate(self, task: TaskInfo) -> None:
        ssn = self.ssn
        if ssn is None or not task.node_name or task.uid in self.assigned:
            return
        need = self._need(ssn.task_class(task))
        if need is None:
            return
        row = ssn.node_of(task)
        numa = self.nodes[row]
        if numa is None:
            return
        outcome = place(numa, need[0], need[1])
        if isinstance(outcome, Assignment):
            numa.free.difference_update(outcome.cpus)
            self.assigned[task.uid] = (row, outcome)

    def on_deallocate(self, task: TaskInfo) -> None:
        held = self.assigned.pop(task.uid, None)
        if held is not None:
            numa = self.nodes[held[0]]
            if numa is not None:
                numa.free.update(held[1].cpus)
