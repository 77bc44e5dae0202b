"""The runtime's view of the pure core: a ClusterState in, a session run, a CycleOutcome out.

Kept apart from the runner so the runner can be driven by any ``Core`` and this file is the only place that
knows the core's entry points. It also shields the process from one malformed object: the core refuses a bad
PodGroup or pod with a ValueError naming it; here that object is left out of the cycle (and reported as a
Warning Event on it) instead of stopping scheduling for everyone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from volcano_py.api import constants as c
from volcano_py.scheduler.cache import ClusterState
from volcano_py.scheduler.conf import load_conf
from volcano_py.scheduler.core import run_session
from volcano_py.scheduler.cycle import CycleOutcome, Unschedulable
from volcano_py.scheduler.framework.conf import SchedulerConf
from volcano_py.scheduler.framework.job import JobInfo
from volcano_py.scheduler.framework.node import NodeInfo, QueueInfo
from volcano_py.scheduler.framework.registry import Registry
from volcano_py.scheduler.framework.snapshot import Snapshot, priority_values
from volcano_py.scheduler.framework.task import TaskInfo
from volcano_py.scheduler.registry import default_registry

Obj = dict[str, Any]


def _keep_valid(
    objs: Iterable[Obj], check: Callable[[Obj], object], reason: str
) -> tuple[list[Obj], list[Unschedulable]]:
    good: list[Obj] = []
    bad: list[Unschedulable] = []
    for obj in objs:
        try:
            check(obj)
        except ValueError as exc:
            bad.append(Unschedulable(obj, reason, str(exc)))
            continue
        good.append(obj)
    return good, bad


def build_snapshot(
    state: ClusterState, scheduler_names: Sequence[str]
) -> tuple[Snapshot, list[Unschedulable]]:
    """The core's Snapshot; on a malformed object, the Snapshot without it and a warning naming it."""
    try:
        return _build(state, state.pods, state.podgroups, state.nodes, state.queues, state.priority_classes,
                      scheduler_names), []  # fmt: skip
    except ValueError:
        pass  # find the culprit(s) one by one: slow, and only when something is wrong
    priority_classes, bad_pc = _keep_valid(
        state.priority_classes, lambda pc: priority_values([pc]), "Invalid"
    )
    prio, _ = priority_values(priority_classes)
    nodes, bad_nodes = _keep_valid(state.nodes, NodeInfo.from_node, "Invalid")
    queues, bad_queues = _keep_valid(state.queues, QueueInfo.from_queue, "Invalid")
    podgroups, bad_pgs = _keep_valid(
        state.podgroups, lambda pg: JobInfo.from_podgroup(pg, priority_classes=prio), "Unschedulable"
    )
    pods, bad_pods = _keep_valid(
        state.pods, lambda pod: TaskInfo.from_pod(pod, priority_classes=prio), "FailedScheduling"
    )
    snapshot = _build(state, pods, podgroups, nodes, queues, priority_classes, scheduler_names)
    return snapshot, bad_pc + bad_nodes + bad_queues + bad_pgs + bad_pods


def _build(
    state: ClusterState,
    pods: list[Obj],
    podgroups: list[Obj],
    nodes: list[Obj],
    queues: list[Obj],
    priority_classes: list[Obj],
    scheduler_names: Sequence[str],
) -> Snapshot:
    return Snapshot.build(
        nodes=nodes,
        pods=pods,
        podgroups=podgroups,
        queues=queues,
        priority_classes=priority_classes,
        hypernodes=state.hypernodes,
        scheduler_names=scheduler_names,
    )


@dataclass(slots=True)
class DefaultCore:
    """Volcano's actions and plugins from the built-in registry."""

    scheduler_names: tuple[str, ...]
    registry: Registry = field(default_factory=default_registry)

    def load_conf(self, text: str | None) -> SchedulerConf:
        return load_conf(text, registry=self.registry)

    def run(self, state: ClusterState, conf: Any, now: datetime) -> CycleOutcome:
        snapshot, warnings = build_snapshot(state, self.scheduler_names)
        for orphan in snapshot.orphans:
            warnings.append(Unschedulable(orphan.task.pod, "FailedScheduling", orphan.reason))
        result = run_session(snapshot, conf, now.strftime("%Y-%m-%dT%H:%M:%SZ"), registry=self.registry)
        unscheduled: dict[str, int] = {}
        for job_id, explanation in result.explanations.items():
            job = snapshot.jobs.get(job_id)
            if job is None:
                continue
            pending = job.pending_tasks
            if not pending:
                continue
            unscheduled[job_id] = len(pending)
            text = (
                f"{explanation.reason}: {explanation.message}" if explanation.reason else explanation.message
            )
            if job.podgroup:
                warnings.append(Unschedulable(job.podgroup, c.PODGROUP_CONDITION_UNSCHEDULABLE, text))
            for task in pending:
                warnings.append(Unschedulable(task.pod, "FailedScheduling", explanation.message))
        return CycleOutcome(result=result, warnings=tuple(warnings), unscheduled_tasks=unscheduled)


def default_core(scheduler_names: Sequence[str]) -> DefaultCore:
    return DefaultCore(tuple(scheduler_names))
