"""The runtime's view of the pure core: a ``ClusterObjects`` in, one session run, a ``CycleOutcome`` out.

``Core`` is what the runner needs from the pure core (parse a conf; turn a ``ClusterObjects`` into a
``CycleOutcome``; before that, what to ask the conf's HTTP extender, whose answers ``run`` takes in);
``DefaultCore`` implements it over ``core.run_session``, and this module is the only place in the runtime
that knows the core's entry points. ``ConfSource`` holds the conf in force and re-reads its
file when it changes.

``DefaultCore`` hands each session what a ``spec.dequeueStrategy: fifo`` queue's backfill needs: the head's
shadow, from a ``HeadShadow`` (the forecast's ``head_shadow``, passed in by whoever starts the process: the
forecast sits above the scheduler), asked only when a fifo head is blocked and kept while the cluster is
unchanged.

``DefaultCore`` also shields the process from one malformed object: the core's ``build_snapshot`` leaves it
out of the cycle and names it, and here that becomes a Warning Event on it, instead of stopping scheduling
for everyone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeAlias

from volcano_py.api import constants as c
from volcano_py.api.common import format_time
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.api.objects import name_of
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.log import get_logger
from volcano_py.scheduler.builtin import default_registry
from volcano_py.scheduler.core import (
    NO_SHARDING,
    ClusterObjects,
    Consultation,
    ExtenderAnswers,
    ExtenderConf,
    HandOver,
    MetricsConf,
    Shadow,
    ShadowSource,
    Sharding,
    Snapshot,
    Unschedulable,
    acts_on_running,
    build_snapshot,
    consultation,
    extender_conf,
    load_conf,
    run_session,
)
from volcano_py.scheduler.framework import extension as ext
from volcano_py.scheduler.framework.conf import SchedulerConf
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.registry import Registry
from volcano_py.scheduler.framework.retell import FORMING_GANG_SECONDS, PODS_MISSING
from volcano_py.scheduler.framework.snapshot import Records
from volcano_py.scheduler.framework.status import TaskStatus
from volcano_py.scheduler.runtime.quiet import QuietMemo

_log = get_logger(__name__)

_NOT_STARTED = frozenset({PodGroupPhase.PENDING, PodGroupPhase.INQUEUE})

# (cluster, conf, now, the head's PodGroup key, our scheduler names) -> the head's shadow (pure).
HeadShadow: TypeAlias = Callable[[ClusterObjects, SchedulerConf, datetime, str, tuple[str, ...]], Shadow]


class Core(Protocol):
    """The pure scheduling core as the runtime uses it (``DefaultCore`` below)."""

    def load_conf(self, text: str | None) -> Any:
        """Parse and validate a conf (None: Volcano's default); raise ValueError naming the bad entry."""
        ...

    def extender(self, conf: Any) -> ExtenderConf | None:
        """The HTTP extender ``conf`` names, if it calls any verb (cheap: asked every cycle)."""
        ...

    def consult(self, state: ClusterObjects, conf: Any, now: datetime) -> Consultation | None:
        """What to ask the conf's HTTP extender before the session ``run`` will hold for ``state`` (None:
        no extender, or no session to hold)."""
        ...

    def run(
        self,
        state: ClusterObjects,
        conf: Any,
        now: datetime,
        extender: ExtenderAnswers | None = None,
        hand_over: HandOver | None = None,
    ) -> CycleOutcome:
        """One cycle over ``state``; ``hand_over`` takes committed binds while the session runs (on the
        thread that calls ``run``), before the outcome lists them (``SessionResult.handed_over``)."""
        ...

    def needs_every_period(self, conf: Any) -> bool:
        """Whether ``conf`` may decide something with nothing new in the cluster (a session every period)."""
        ...

    def warm(self, state: ClusterObjects) -> None:
        """Read ``state`` ahead of the first cycle, which then reads only what changed since (no session)."""
        ...


@dataclass(frozen=True, slots=True)
class CycleOutcome:
    result: SessionResult
    # Warnings that belong on objects (missing PodGroup/queue, unschedulable pods and PodGroups).
    warnings: tuple[Unschedulable, ...] = ()
    # Per unschedulable job: how many of its tasks are still pending (Volcano's unschedule_task_count).
    unscheduled_tasks: Mapping[str, int] = field(default_factory=dict)
    # True when no session ran: the cluster meant what it meant after the last one, in which nothing waited
    # but gangs short of pods, apart from new pods that leave them short (``runtime/quiet.py``); so there is
    # nothing new to tell.
    quiet: bool = False
    # Whether anything was left waiting for a later cycle: a pending task or PodGroup of ours, or a pod whose
    # PodGroup is missing. True unless the core says otherwise (see ``Pacing``'s hold behind binds).
    waiting: bool = True


def left_waiting(snapshot: Snapshot) -> bool:
    """Whether a session over ``snapshot`` (whose jobs it changed as it decided) left anything for a later
    one: a PodGroup enqueue did not admit, a task not placed, a pod without its PodGroup."""
    if snapshot.orphans:
        return True
    steady = snapshot.steady.jobs if snapshot.steady is not None else {}
    pending, pipelined = TaskStatus.PENDING, TaskStatus.PIPELINED
    for uid, job in snapshot.jobs.items():
        if uid in steady:
            continue  # Running or Completed, every pod bound, running or done
        if job.phase is PodGroupPhase.PENDING or job.count(pending, pipelined):
            return True
    return False


class ConfLoader(Protocol):
    def load_conf(self, text: str | None) -> Any:
        """Parse a conf (None: the default), raising ``ValueError`` naming what is wrong."""
        ...


class ConfSource:
    """The conf file, re-read when its content changes; a bad edit is refused and the last good conf kept."""

    def __init__(self, path: str | None, core: ConfLoader) -> None:
        self.path = Path(path) if path else None
        self.core = core
        self._text = self._read()
        self.conf = core.load_conf(self._text)  # a bad conf at start-up is fatal, with the reason

    def _read(self) -> str | None:
        if self.path is None:
            return None
        try:
            return self.path.read_text()
        except OSError as exc:
            raise ValueError(f"--scheduler-conf {self.path}: cannot read it ({exc.strerror})") from None

    def reload(self) -> bool:
        """Re-read the file; True if a new conf took effect."""
        if self.path is None:
            return False
        try:
            text = self._read()
        except ValueError as exc:
            _log.warning("scheduler conf unreadable; keeping the previous one", error=str(exc))
            return False
        if text == self._text:
            return False
        self._text = text
        try:
            self.conf = self.core.load_conf(text)
        except ValueError as exc:
            _log.error(
                "scheduler conf rejected; keeping the previous one", path=str(self.path), error=str(exc)
            )
            return False
        _log.info("scheduler conf reloaded", path=str(self.path))
        return True

    async def watch(self, interval: float = 1.0) -> None:
        while True:
            await asyncio.sleep(interval)
            self.reload()


@dataclass(slots=True)
class DefaultCore:
    """Volcano's actions and plugins from the built-in registry."""

    scheduler_names: tuple[str, ...]
    registry: Registry = field(default_factory=default_registry)
    features: FeatureGates = DEFAULT_FEATURE_GATES
    # Parsed pods, nodes and PodGroups from the last cycle (``run`` is never called twice at once).
    records: Records = field(default_factory=Records)
    # The last outcome when nothing waited, handed back while the cluster means the same.
    quiet: QuietMemo = field(default_factory=QuietMemo)
    # When periodic plugins last acted, from the last session to the next (``SessionResult.timers``).
    timers: dict[str, float] = field(default_factory=dict)
    # A blocked fifo head's shadow (None: fifo queues are held strictly, with no backfill).
    head_shadow: HeadShadow | None = None
    # --scheduler-sharding-mode and --scheduler-sharding-name: the snapshot carries the shard's nodes.
    sharding: Sharding = NO_SHARDING
    # The shadows found for the last cluster and conf seen (cache generation, conf) -> head -> shadow.
    _shadows: tuple[tuple[int, int], dict[str, Shadow]] | None = field(default=None, init=False, repr=False)
    # Per conf (the last one asked about): whether gang's ``job_valid`` is asked before any other's.
    _gang_first: tuple[object, bool] | None = field(default=None, init=False, repr=False)
    # Per conf (the last one asked about): its extender.
    _extender: tuple[object, ExtenderConf | None] | None = field(default=None, init=False, repr=False)
    # The snapshot ``consult`` built, for the ``run`` of the same state that follows it.
    _built: tuple[ClusterObjects, Snapshot, list[Unschedulable]] | None = field(
        default=None, init=False, repr=False
    )

    def load_conf(self, text: str | None) -> SchedulerConf:
        conf = load_conf(text, registry=self.registry)
        if conf.option("usage") is not None and conf.metrics is None:
            # Volcano loads such a conf too, and its usage plugin then passes every node: say so once.
            _log.warning(
                "plugin usage has no node load to read: the conf has no metrics section, so every node "
                "passes its thresholds; add metrics: {type: prometheus, address: <Prometheus URL>}"
            )
        return conf

    def warm(self, state: ClusterObjects) -> None:
        self._snapshot(state)  # kept in ``records``, not run

    def _snapshot(self, state: ClusterObjects) -> tuple[Snapshot, list[Unschedulable]]:
        return build_snapshot(state, self.scheduler_names, self.records, sharding=self.sharding)

    def needs_every_period(self, conf: SchedulerConf) -> bool:
        return acts_on_running(conf)

    def gang_validates_first(self, conf: SchedulerConf) -> bool:
        """Whether the first plugin of ``conf`` with a ``job_valid`` is gang, which reads only counts."""
        if self._gang_first is None or self._gang_first[0] is not conf:
            first = next(
                (
                    option.name
                    for tier in conf.tiers
                    for option in tier
                    if isinstance(self.registry.plugin(option.name, option.arguments), ext.JobValid)
                ),
                None,
            )
            self._gang_first = (conf, first == "gang")
        return self._gang_first[1]

    def extender(self, conf: Any) -> ExtenderConf | None:
        if self._extender is None or self._extender[0] is not conf:
            self._extender = (conf, extender_conf(conf))
        return self._extender[1]

    def consult(self, state: ClusterObjects, conf: Any, now: datetime) -> Consultation | None:
        found = self.extender(conf)
        if found is None or self.quiet.recall(state, conf, now) is not None:
            return None
        snapshot, warnings = self._snapshot(state)
        self._built = (state, snapshot, warnings)
        option = conf.option("extender")
        return consultation(
            found,
            snapshot,
            raw_nodes={name_of(n): n for n in state.nodes},
            raw_queues={name_of(q): q for q in state.queues},
            flags=option.flags if option is not None else {},
            enqueue="enqueue" in conf.actions,
        )

    def run(
        self,
        state: ClusterObjects,
        conf: Any,
        now: datetime,
        extender: ExtenderAnswers | None = None,
        hand_over: HandOver | None = None,
    ) -> CycleOutcome:
        recalled = self.quiet.recall(state, conf, now)
        built, self._built = self._built, None
        if recalled is not None:
            return CycleOutcome(
                result=recalled.result,
                unscheduled_tasks=recalled.unscheduled_tasks,
                quiet=True,
                waiting=bool(recalled.unscheduled_tasks),
            )
        if built is not None and built[0] is state:
            _, snapshot, warnings = built
        else:
            snapshot, warnings = self._snapshot(state)
        snapshot.extender = extender
        snapshot.shadows = self._shadow_source(state, conf, now)
        for orphan in snapshot.orphans:
            warnings.append(Unschedulable(orphan.task.pod, "FailedScheduling", orphan.reason))
        result = run_session(
            snapshot,
            conf,
            format_time(now),
            registry=self.registry,
            features=self.features,
            timers=self.timers,
            hand_over=hand_over,
        )
        self.timers = dict(result.timers)
        if warnings or acts_on_running(conf):
            self.quiet.forget()
        else:
            self.quiet.remember(
                state,
                conf,
                snapshot,
                result,
                now=now,
                ours=self.scheduler_names,
                gang_validates_first=self.gang_validates_first(conf),
            )
        unscheduled: dict[str, int] = {}
        for job_id, explanation in result.explanations.items():
            job = snapshot.jobs.get(job_id)
            if job is None:
                continue
            waiting = job.count(TaskStatus.PENDING)
            if waiting:
                unscheduled[job_id] = waiting
            # As in Volcano, a PodGroup not started is told why even without pods: one that enqueue refuses
            # has none (the Job controller creates them once it is Inqueue).
            elif job.phase not in _NOT_STARTED:
                continue
            text = (
                f"{explanation.reason}: {explanation.message}" if explanation.reason else explanation.message
            )
            # A gang whose pods are still being created is told only if it stays short of them (see retell).
            after = FORMING_GANG_SECONDS if explanation.reason in PODS_MISSING else 0.0
            if job.podgroup:
                warnings.append(Unschedulable(job.podgroup, c.PODGROUP_CONDITION_UNSCHEDULABLE, text, after))
            # Pods held by scheduling gates carry the API server's SchedulingGated condition: left as is.
            for task in job.pending_tasks:
                warnings.append(Unschedulable(task.pod, "FailedScheduling", explanation.message, after))
        return CycleOutcome(
            result=result,
            warnings=tuple(warnings),
            unscheduled_tasks=unscheduled,
            waiting=bool(unscheduled) or left_waiting(snapshot),
        )

    def _shadow_source(
        self, state: ClusterObjects, conf: SchedulerConf, now: datetime
    ) -> ShadowSource | None:
        """The session's way to a blocked head's shadow. A cluster read once (generation 0) is never taken
        for another; a shadow found is reused while the cache's generation (bumped by every change,
        every bind sent included) and the conf stay the same."""
        find = self.head_shadow
        if find is None:
            return None
        key = (state.generation or -id(state), id(conf))
        if self._shadows is None or self._shadows[0] != key:
            self._shadows = (key, {})
        found = self._shadows[1]
        names = self.scheduler_names

        def source(head: str) -> Shadow:
            if head not in found:
                try:
                    found[head] = find(state, conf, now, head, names)
                except Exception as err:
                    # A fault in the forecast must cost only the backfill: the queue is then held strictly.
                    _log.exception("fifo head's shadow not found; its queue is held strictly", head=head)
                    found[head] = Shadow(head, None, why_unknown=f"the forecast failed: {err}")
            return found[head]

        return source


def metrics_source(conf: object) -> MetricsConf | None:
    """Where ``conf`` (the one in force) says node load is read from; None for none (or a conf of another
    core)."""
    return conf.metrics if isinstance(conf, SchedulerConf) else None


def default_core(
    scheduler_names: Sequence[str],
    features: FeatureGates = DEFAULT_FEATURE_GATES,
    *,
    head_shadow: HeadShadow | None = None,
    sharding: Sharding = NO_SHARDING,
) -> DefaultCore:
    return DefaultCore(tuple(scheduler_names), features=features, head_shadow=head_shadow, sharding=sharding)
