"""pdb: PodDisruptionBudgets bound preemption, reclaim and shuffle. Of the victims offered, a pod is kept
when taking it would push some budget of its namespace that selects it below ``status.disruptionsAllowed``
(counted over the pods offered in this one choice, in the order offered). Pods a budget already lists in
``status.disruptedPods`` do not count against it again; a budget with an empty selector selects nothing,
as in Volcano. Unlike Volcano, a pod without labels stays a possible victim (no budget can select it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api.objects import name_of, namespace_of, spec_of, status_of
from volcano_py.log import get_logger

from ..framework.arguments import Arguments
from ..framework.session import Session
from ..framework.task import TaskInfo
from .matching import SelectorError, label_selector_matches

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Budget:
    namespace: str
    name: str
    selector: Mapping[str, Any]
    allowed: int
    disrupted: frozenset[str]

    @classmethod
    def of(cls, pdb: Mapping[str, Any]) -> Budget | None:
        selector = spec_of(pdb).get("selector")
        if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
            return None
        status = status_of(pdb)
        allowed = status.get("disruptionsAllowed", 0)
        return cls(
            namespace=namespace_of(pdb) or "default",
            name=name_of(pdb),
            selector=selector,
            allowed=allowed if isinstance(allowed, int) else 0,
            disrupted=frozenset(status.get("disruptedPods") or {}),
        )

    def selects(self, task: TaskInfo) -> bool:
        if task.namespace != self.namespace or task.name in self.disrupted or not task.labels:
            return False
        try:
            return label_selector_matches(self.selector, task.labels)
        except SelectorError as err:
            log.warning("pdb: budget selector ignored", pdb=f"{self.namespace}/{self.name}", error=str(err))
            return False


class PdbPlugin:
    name = "pdb"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()
        self.budgets: dict[str, list[Budget]] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.budgets = {}
        for pdb in ssn.snapshot.pdbs:
            budget = Budget.of(pdb)
            if budget is not None:
                self.budgets.setdefault(budget.namespace, []).append(budget)

    def on_session_close(self, ssn: Session) -> None:
        self.budgets = {}

    def victims(self, candidates: Sequence[TaskInfo]) -> list[TaskInfo]:
        left: dict[int, int] = {}
        out = []
        for task in candidates:
            violated = False
            for budget in self.budgets.get(task.namespace, ()):
                if not budget.selects(task):
                    continue
                key = id(budget)
                left[key] = left.get(key, budget.allowed) - 1
                violated = violated or left[key] < 0
            if not violated:
                out.append(task)
        return out

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        return self.victims(preemptees)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        return self.victims(reclaimees)

    def evictable(self, candidates: Sequence[TaskInfo]) -> list[TaskInfo]:
        # Volcano registers this check as a VictimTasks function, which under its union rule would name
        # every pod the budgets allow as a shuffle victim; here it only keeps budgeted pods from shuffle.
        return self.victims(candidates)
