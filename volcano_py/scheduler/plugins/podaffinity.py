"""Required inter-pod affinity and anti-affinity, and host ports: the predicates whose answer changes as
pods are placed, so they are evaluated against the session's current placements."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..framework.classes import TaskClass
from ..framework.extension import BoolArray, FloatArray
from ..framework.node import NodeInfo
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo
from .matching import NodeLabels, label_selector_matches

_ON_NODE = frozenset(
    {TaskStatus.ALLOCATED, TaskStatus.PIPELINED, TaskStatus.BINDING, TaskStatus.BOUND, TaskStatus.RUNNING}
)


def _required(affinity: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    return list((affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or [])


def _placed(nodes: list[NodeInfo]) -> Iterator[tuple[TaskInfo, NodeInfo]]:
    for node in nodes:
        for task in node.tasks.values():
            if task.status in _ON_NODE:
                yield task, node


def _selector_text(term: Mapping[str, Any]) -> str:
    selector = term.get("labelSelector") or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    parts += [
        f"{e.get('key')} {e.get('operator')} {e.get('values') or ''}".strip()
        for e in selector.get("matchExpressions") or ()
    ]
    return ",".join(parts) or "any pod"


def _term_matches(term: Mapping[str, Any], owner_ns: str, task: TaskInfo) -> bool:
    namespaces = term.get("namespaces") or [owner_ns]
    return task.namespace in namespaces and label_selector_matches(term.get("labelSelector"), task.labels)


def affinity_failures(
    nodes: list[NodeInfo], labels: NodeLabels, klass: TaskClass
) -> list[tuple[str, BoolArray]]:
    """(reason, failing-node mask) for each required pod (anti-)affinity term that rules nodes out."""
    placed = list(_placed(nodes))
    failures: list[tuple[str, BoolArray]] = []
    for term in _required(klass.affinity, "podAffinity"):
        key = term.get("topologyKey") or ""
        domains = {
            n.labels[key] for t, n in placed if key in n.labels and _term_matches(term, klass.namespace, t)
        }
        if not domains and _term_matches(term, klass.namespace, _as_task(klass)):
            continue  # the first pod of a group that wants to be together may go anywhere
        fail = ~labels.values_in(key, sorted(domains))
        failures.append((f"do not satisfy pod affinity to {_selector_text(term)} on {key}", fail))
    for term in _required(klass.affinity, "podAntiAffinity"):
        key = term.get("topologyKey") or ""
        domains = {
            n.labels[key] for t, n in placed if key in n.labels and _term_matches(term, klass.namespace, t)
        }
        fail = labels.values_in(key, sorted(domains))
        failures.append((f"violate pod anti-affinity to {_selector_text(term)} on {key}", fail))
    me = _as_task(klass)
    for task, node in placed:
        for term in _required(task.affinity, "podAntiAffinity"):
            key = term.get("topologyKey") or ""
            if key in node.labels and _term_matches(term, task.namespace, me):
                fail = labels.values_in(key, [node.labels[key]])
                failures.append((f"violate the anti-affinity of pod {task.key} on {key}", fail))
    return failures


def _as_task(klass: TaskClass) -> TaskInfo:
    # Matching a term against the incoming pod needs only its namespace and labels.
    from volcano_py.resources import Resource

    return TaskInfo("", klass.namespace, "", None, "", Resource(), 0, TaskStatus.PENDING, labels=klass.labels)


def host_port_failures(nodes: list[NodeInfo], klass: TaskClass) -> list[tuple[str, BoolArray]]:
    failures: list[tuple[str, BoolArray]] = []
    for protocol, ip, port in klass.host_ports:
        fail = np.zeros(len(nodes), dtype=np.bool_)
        for row, node in enumerate(nodes):
            for task in node.tasks.values():
                if task.status not in _ON_NODE:
                    continue
                if any(
                    p == protocol and q == port and (i == ip or "0.0.0.0" in (i, ip))
                    for p, i, q in task.host_ports
                ):
                    fail[row] = True
                    break
        failures.append((f"have host port {protocol}/{port} in use", fail))
    return failures


def has_required_anti_affinity(task: TaskInfo) -> bool:
    # Asked of every pod on every node each session; most pods have no affinity at all.
    return bool(task.affinity) and bool(_required(task.affinity, "podAntiAffinity"))


def anti_affinity_terms(tasks: Iterable[TaskInfo]) -> list[tuple[str, Mapping[str, Any]]]:
    """(owner namespace, term) of every required anti-affinity term among ``tasks``, distinct."""
    seen: dict[Any, tuple[str, Mapping[str, Any]]] = {}
    for task in tasks:
        for term in _required(task.affinity, "podAntiAffinity"):
            seen.setdefault((task.namespace, repr(term)), (task.namespace, term))
    return list(seen.values())


def repelled(klass: TaskClass, terms: list[tuple[str, Mapping[str, Any]]]) -> bool:
    """Whether some pod's anti-affinity could rule nodes out for ``klass`` (its labels match a term)."""
    me = _as_task(klass)
    return any(_term_matches(term, owner, me) for owner, term in terms)


def _preferred(affinity: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    return list((affinity.get(kind) or {}).get("preferredDuringSchedulingIgnoredDuringExecution") or [])


def preferred_affinity_raw(nodes: list[NodeInfo], labels: NodeLabels, klass: TaskClass) -> FloatArray:
    """Per node, the weights of preferred pod affinity terms whose topology domain already holds a
    matching pod, minus those of preferred anti-affinity terms (kube-scheduler's InterPodAffinity score,
    before normalising)."""
    raw = np.zeros(len(nodes), dtype=np.float64)
    terms = [(1.0, t) for t in _preferred(klass.affinity, "podAffinity")]
    terms += [(-1.0, t) for t in _preferred(klass.affinity, "podAntiAffinity")]
    if not terms:
        return raw
    placed = list(_placed(nodes))
    for sign, weighted in terms:
        term = weighted.get("podAffinityTerm") or {}
        key = term.get("topologyKey") or ""
        domains = {
            n.labels[key] for t, n in placed if key in n.labels and _term_matches(term, klass.namespace, t)
        }
        if domains:
            raw += sign * float(weighted.get("weight", 0)) * labels.values_in(key, sorted(domains))
    return raw
