"""nodegroup: a queue's ``spec.affinity`` keeps its pods on node groups (the node label
``volcano.sh/nodegroup-name``). ``nodeGroupAffinity`` required or preferred groups, and preferred
anti-affinity groups, admit a node; required anti-affinity refuses one. Scores: 100 for a required group,
plus 50 for a preferred one (with ``enablePreferredOrder``, 50 x (n - i) / n for the i-th of n preferred),
and -1 for a preferred anti-affinity group. ``strict`` (default true) also refuses nodes without the label,
and every group node for a queue without affinity; with ``strict: false`` a queue without affinity may
use unlabelled nodes. With the plugin's ``enableHierarchy``, a queue without affinity inherits its nearest
ancestor's. A queue with ``volcano.sh/nodegroup-resource-limits`` is refused: those limits are not
implemented here, and ignoring them would place pods its owner meant to keep out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from volcano_py.api import constants as k
from volcano_py.api.queue_hierarchy import queue_lineage

from ..framework.arguments import Arguments
from ..framework.classes import TaskClass
from ..framework.extension import BoolArray, FloatArray, IntArray, NodeVerdict
from ..framework.node import QueueInfo
from ..framework.session import Session

BASE_SCORE = 100.0


@dataclass(frozen=True, slots=True)
class GroupAffinity:
    required: frozenset[str]
    preferred: tuple[str, ...]
    anti_required: frozenset[str]
    anti_preferred: frozenset[str]

    @classmethod
    def of(cls, affinity: Mapping[str, Any]) -> GroupAffinity | None:
        if not affinity:
            return None
        pro = affinity.get("nodeGroupAffinity") or {}
        anti = affinity.get("nodeGroupAntiAffinity") or {}

        def groups(part: Mapping[str, Any], kind: str) -> list[str]:
            return [str(g) for g in part.get(f"{kind}DuringSchedulingIgnoredDuringExecution") or ()]

        return cls(
            required=frozenset(groups(pro, "required")),
            preferred=tuple(dict.fromkeys(groups(pro, "preferred"))),
            anti_required=frozenset(groups(anti, "required")),
            anti_preferred=frozenset(groups(anti, "preferred")),
        )

    @property
    def unset(self) -> bool:
        return not (self.required or self.preferred or self.anti_required or self.anti_preferred)

    def admits(self, group: str) -> bool:
        # Volcano's order: anti-affinity required overrides affinity; preferred anti-affinity still admits.
        ok = group in self.required or group in self.preferred
        if group in self.anti_required:
            ok = False
        return ok or group in self.anti_preferred

    def score(self, group: str, preferred_order: bool) -> float:
        if group in self.anti_preferred:
            return -1.0
        score = BASE_SCORE if group in self.required else 0.0
        if group in self.preferred:
            if preferred_order:
                n = len(self.preferred)
                score += 0.5 * BASE_SCORE * (n - self.preferred.index(group)) / n
            else:
                score += 0.5 * BASE_SCORE
        return score


class NodeGroupPlugin:
    name = "nodegroup"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({"strict", "enablePreferredOrder"})
        self.strict = arguments.get_bool("strict", True)
        self.preferred_order = arguments.get_bool("enablePreferredOrder", False)
        self.groups: list[str | None] = []
        self.affinities: dict[str, GroupAffinity | None] = {}
        self.limited: set[str] = set()
        self._verdicts: dict[str, NodeVerdict] = {}
        self._scores: dict[str, FloatArray] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.groups = [n.labels.get(k.NODE_GROUP_NAME_KEY) for n in ssn.nodes]
        option = ssn.conf.option(self.name)
        hierarchy = bool(option is not None and option.flags.get("enableHierarchy"))
        self.affinities = {name: GroupAffinity.of(q.affinity) for name, q in ssn.queues.items()}
        if hierarchy:
            self.affinities = {name: self._inherited(ssn.queues, name) for name in ssn.queues}
        self.limited = {
            name for name, q in ssn.queues.items() if q.annotations.get(k.NODE_GROUP_RESOURCE_LIMITS_KEY)
        }
        self._verdicts = {}
        self._scores = {}

    def _inherited(self, queues: Mapping[str, QueueInfo], name: str) -> GroupAffinity | None:
        for current in queue_lineage(name, lambda q: queues[q].parent if q in queues else None):
            found = GroupAffinity.of(queues[current].affinity)
            if found is not None:
                return found
        return None

    def on_session_close(self, ssn: Session) -> None:
        self._verdicts = {}
        self._scores = {}

    def predicate_dynamic(self, klass: TaskClass) -> bool:
        return False

    def predicate(self, ssn: Session, klass: TaskClass) -> NodeVerdict:
        cached = self._verdicts.get(klass.queue)
        if cached is not None:
            return cached
        n = len(self.groups)
        affinity = self.affinities.get(klass.queue)
        unset = affinity is None or affinity.unset
        unlabelled: BoolArray = np.array([g is None for g in self.groups], dtype=np.bool_)
        failures: list[tuple[str, BoolArray]] = []
        if klass.queue in self.limited:
            failures.append(
                (
                    f"are refused: queue {klass.queue} sets {k.NODE_GROUP_RESOURCE_LIMITS_KEY}, which "
                    "volcano-py does not enforce (remove the annotation, or the nodegroup plugin)",
                    np.ones(n, dtype=np.bool_),
                )
            )
        if unlabelled.any() and (self.strict or not unset):
            failures.append((f"have no {k.NODE_GROUP_NAME_KEY} label", unlabelled))
        if unset:
            if not unlabelled.all():
                failures.append(
                    (f"are in a node group, and queue {klass.queue} has no nodeGroupAffinity", ~unlabelled)
                )
        else:
            assert affinity is not None
            outside: BoolArray = np.array(
                [g is not None and not affinity.admits(g) for g in self.groups], dtype=np.bool_
            )
            if outside.any():
                failures.append((f"are in node groups outside queue {klass.queue}'s affinity", outside))
        ok: BoolArray = np.ones(n, dtype=np.bool_)
        for _, fail in failures:
            ok &= ~fail
        verdict = NodeVerdict(ok, failures)
        self._verdicts[klass.queue] = verdict
        return verdict

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        scores = self._scores.get(klass.queue)
        if scores is None:
            affinity = self.affinities.get(klass.queue)
            scores = np.array(
                [
                    affinity.score(g, self.preferred_order) if affinity is not None and g is not None else 0.0
                    for g in self.groups
                ],
                dtype=np.float64,
            )
            self._scores[klass.queue] = scores
        result: FloatArray = scores[rows]
        return result
