"""rescheduling: names running pods to move off over-used nodes, for the ``shuffle`` action to evict.

Volcano's arguments: ``interval`` (a Go duration, default 5m: the strategies run at most once per
interval, the first time one interval after the scheduler starts, as Volcano's) and ``strategies``, a list of
``{name, params}`` replacing the default ``[{name: lowNodeUtilization}]``. ``lowNodeUtilization`` is the one
strategy Volcano implements, and the one accepted here (see ``lownode`` for its arithmetic); its params are
``thresholds`` and ``targetThresholds`` (percent per ``cpu``, ``memory``, ``pods``; each defaults to 100),
``numberOfNodes`` (move nothing unless more nodes than this are under their thresholds; default 0),
``nodeFit`` (default true: a pod moves only when a node under its thresholds has room for it), and
``thresholdPriority`` or ``thresholdPriorityClassName`` (default ``system-cluster-critical``): pods at or
above that priority stay. Volcano declares these last three but does not read them; here they do what their
names say.

Node utilization is what the pods on the node request (running or being bound), not measured use: Volcano's
``metricsPeriod`` picks a window of a metrics source, which this scheduler does not read, so it is refused.

The interval is kept on the session's clock: when the strategies last ran is the session's ``timers`` entry,
which the runtime carries from one session to the next.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from volcano_py.log import get_logger

from ..framework.arguments import Arguments, ConfError
from ..framework.extension import Victim
from ..framework.session import Session
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo
from .lownode import DEFAULT_PERCENT, RESOURCES, LowNodeConf, NodeUse, victims
from .numatopo import guaranteed

log = get_logger(__name__)

NAME: Final = "rescheduling"
DEFAULT_INTERVAL: Final = timedelta(minutes=5)
LOW_NODE_UTILIZATION: Final = "lowNodeUtilization"
_LNU_PARAMS: Final = frozenset(
    {
        "thresholds",
        "targetThresholds",
        "numberOfNodes",
        "nodeFit",
        "thresholdPriority",
        "thresholdPriorityClassName",
    }
)
DEFAULT_PRIORITY_CLASS: Final = "system-cluster-critical"
# Kubernetes' built-in classes, for a cluster that does not list them.
_BUILTIN_PRIORITIES: Final = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}


def _percentages(owner: str, raw: Any) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        raise ConfError(f"{owner} must be a mapping of resource to percent, such as {{cpu: 40, memory: 50}}")
    out = dict.fromkeys(RESOURCES, DEFAULT_PERCENT)
    for key, value in raw.items():
        if key not in RESOURCES:
            raise ConfError(f"{owner}: unknown resource {key!r}; accepted: {', '.join(RESOURCES)}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
            raise ConfError(f"{owner}.{key} must be a percent from 0 to 100, got {value!r}")
        out[str(key)] = float(value)
    return out


class LowNodeStrategy:
    """lowNodeUtilization's params, read and checked at conf load."""

    def __init__(self, owner: str, params: Any) -> None:
        params = params if params is not None else {}
        if not isinstance(params, Mapping):
            raise ConfError(f"{owner}.params must be a mapping")
        unknown = sorted(set(params) - _LNU_PARAMS)
        if unknown:
            raise ConfError(
                f"{owner}.params: unknown key(s) {', '.join(unknown)}; "
                f"accepted: {', '.join(sorted(_LNU_PARAMS))}"
            )
        args = Arguments(
            f"{owner}.params",
            {k: v for k, v in params.items() if k not in ("thresholds", "targetThresholds")},
        )
        self.conf = LowNodeConf(
            thresholds=_percentages(f"{owner}.params.thresholds", params.get("thresholds", {})),
            targets=_percentages(f"{owner}.params.targetThresholds", params.get("targetThresholds", {})),
            number_of_nodes=args.get_int("numberOfNodes", 0, minimum=0),
            node_fit=args.get_bool("nodeFit", True),
        )
        if "thresholdPriority" in params and "thresholdPriorityClassName" in params:
            raise ConfError(f"{owner}.params: set thresholdPriority or thresholdPriorityClassName, not both")
        self.priority: int | None = (
            args.get_int("thresholdPriority", 0) if "thresholdPriority" in params else None
        )
        self.priority_class = args.get_str("thresholdPriorityClassName", DEFAULT_PRIORITY_CLASS)

    def threshold(self, ssn: Session) -> int | None:
        """Pods at or above this priority stay (None: only the always-protected ones)."""
        if self.priority is not None:
            return self.priority
        value = ssn.snapshot.priority_classes.get(
            self.priority_class, _BUILTIN_PRIORITIES.get(self.priority_class)
        )
        if value is None:
            log.warning(
                "rescheduling: thresholdPriorityClassName names no PriorityClass", name=self.priority_class
            )
        return value


def _strategies(arguments: Arguments) -> list[LowNodeStrategy]:
    raw = arguments.values.get("strategies")
    if raw is None:
        return [LowNodeStrategy(f"{arguments.owner}: strategies[0]", None)]
    if not isinstance(raw, list) or not raw:
        raise ConfError(
            f"{arguments.owner}: argument 'strategies' must be a non-empty list of {{name, params}}"
        )
    out = []
    for i, entry in enumerate(raw):
        owner = f"{arguments.owner}: strategies[{i}]"
        if not isinstance(entry, Mapping) or set(entry) - {"name", "params"}:
            raise ConfError(f"{owner} must be a mapping with name and params")
        if entry.get("name") != LOW_NODE_UTILIZATION:
            raise ConfError(
                f"{owner}.name: {entry.get('name')!r} is not a strategy Volcano's rescheduling implements; "
                f"the one it has is {LOW_NODE_UTILIZATION}"
            )
        out.append(LowNodeStrategy(owner, entry.get("params")))
    return out


def _qos_rank(task: TaskInfo) -> int:
    """Eviction order within a priority: BestEffort, then Burstable, then Guaranteed."""
    if task.best_effort:
        return 0
    return 2 if guaranteed(task.pod) else 1


def _movable(task: TaskInfo, threshold: int | None) -> bool:
    # A pod shuffle would keep anyway (``volcano.sh/preemptable: "false"``, system-critical) is not named,
    # so the room below the targets goes to pods that can move.
    if task.status is not TaskStatus.RUNNING or not task.node_name or not task.preemptable:
        return False
    if task.system_critical:
        return False
    return threshold is None or task.priority < threshold


def _usage(ssn: Session, candidates: Sequence[TaskInfo], threshold: int | None) -> list[NodeUse[TaskInfo]]:
    """Each node's allocatable and requested amounts (pods leaving it not counted), with its movable pods."""
    table = ssn.table
    cols = [table.index.get(r) for r in RESOURCES]

    def amounts(row: npt.NDArray[np.int64]) -> dict[str, float]:
        return {r: float(row[c]) if c is not None else 0.0 for r, c in zip(RESOURCES, cols, strict=True)}

    movable: dict[str, list[TaskInfo]] = {}
    for task in candidates:
        if _movable(task, threshold):
            movable.setdefault(task.node_name, []).append(task)
    used = table.used - table.releasing
    out: list[NodeUse[TaskInfo]] = []
    for row, node in enumerate(ssn.nodes):
        pods = sorted(movable.get(node.name, ()), key=lambda t: (t.priority, _qos_rank(t)))
        out.append(
            NodeUse(
                name=node.name,
                allocatable=amounts(table.allocatable[row]),
                used=amounts(used[row]),
                schedulable=not node.unschedulable and node.ready,
                pods=[(t, amounts(ssn.task_class(t).vec)) for t in pods],
            )
        )
    return out


class ReschedulingPlugin:
    name = NAME

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({"interval", "metricsPeriod", "strategies"})
        if "metricsPeriod" in arguments.values:
            raise ConfError(
                f"{arguments.owner}: argument 'metricsPeriod' is not supported: node utilization is read "
                "from the pods' requests here, not from a metrics source; remove it"
            )
        interval = arguments.get_duration("interval", DEFAULT_INTERVAL)
        self.interval = (interval or DEFAULT_INTERVAL).total_seconds()
        self.strategies = _strategies(arguments)
        self.due = False

    def on_session_open(self, ssn: Session) -> None:
        now = ssn.now_seconds
        last = ssn.timers.get(NAME)
        if last is None:
            ssn.timers[NAME] = now  # as Volcano's: the first run comes one interval after start
            self.due = False
            return
        self.due = now - last > self.interval
        if self.due:
            ssn.timers[NAME] = now

    def victim_tasks(self, ssn: Session, candidates: Sequence[TaskInfo]) -> list[Victim]:
        if not self.due:
            return []
        out: list[Victim] = []
        named: set[str] = set()
        for strategy in self.strategies:
            nodes = _usage(ssn, [t for t in candidates if t.uid not in named], strategy.threshold(ssn))
            for task, why in victims(nodes, strategy.conf):
                named.add(task.uid)
                out.append(Victim(task, f"rescheduling {why}"))
        return out
