"""Session: one scheduling cycle's state, the plugins of the conf, and the extension points they fill.

Plugins are instantiated fresh per session from the registry. At open the session finds, per declared
extension point, the enabled plugins implementing it (by Protocol), grouped by tier, into ``ssn.points``
(one typed attribute per point); each ``Session`` method applies that point's combination rule from
``combine``. State changes go through ``Statement``.

``Session`` is one object (plugins and actions hold ``ssn``) made of parts by responsibility, each in its
own module: this one opens and closes it and holds the cluster it sees (jobs, queues, the node table);
``session_rules`` asks the plugins about jobs, tasks and queues; ``session_nodes`` about nodes (classes,
predicates, scores); ``session_outcomes`` keeps what it decides and hands binds over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from volcano_py.api import constants as k
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.log import get_logger
from volcano_py.resources import Resource

from . import combine
from . import extension as ext
from .conf import SchedulerConf
from .decisions import Explanation, HandOver
from .job import JobInfo
from .node import NodeInfo, QueueInfo
from .nodetable import NodeTable
from .registry import Plugin, Registry
from .session_nodes import NodeChecks
from .session_outcomes import HAND_OVER_BINDS, Outcomes
from .session_rules import PluginRules
from .snapshot import Snapshot
from .status import TaskStatus
from .steady import SteadyJobs
from .task import timestamp

__all__ = ["HAND_OVER_BINDS", "Session"]

log = get_logger(__name__)


class Session(PluginRules, NodeChecks, Outcomes):
    """One scheduling cycle over one snapshot (which it consumes: a session changes what it is handed)."""

    def __init__(
        self,
        snapshot: Snapshot,
        conf: SchedulerConf,
        registry: Registry,
        *,
        now: str,
        features: FeatureGates = DEFAULT_FEATURE_GATES,
        timers: Mapping[str, float] | None = None,
        hand_over: HandOver | None = None,
    ) -> None:
        if snapshot.consumed:
            raise ValueError("this snapshot was already used by a session; build a new one per session")
        if snapshot.superseded:
            raise ValueError("a newer snapshot was built from the same records; open the session on that one")
        snapshot.consumed = True
        self.snapshot = snapshot
        self.conf = conf
        self.registry = registry
        self.now = now
        # When periodic plugins last acted (seconds since the epoch, by name): handed in by the runtime from
        # the last session's result and back out in this one's, so intervals are kept without a wall clock.
        self.timers: dict[str, float] = dict(timers or {})
        # The scheduler's --feature-gates: a process setting, the same for every session.
        self.features = features
        self.nodes: list[NodeInfo] = snapshot.nodes
        self.jobs: dict[str, JobInfo] = dict(snapshot.jobs)
        self.queues: dict[str, QueueInfo] = snapshot.queues
        # The jobs nothing happened to since a session under this conf settled them (``steady.py``): passes
        # over jobs take them from its per-queue sums. None: walk every job.
        self.steady: SteadyJobs | None = snapshot.steady.for_conf(conf) if snapshot.steady else None
        # The snapshot's jobs but the steady ones, in job order: what passes over jobs walk (jobs the
        # session sets aside at open included, as the snapshot holds them).
        steady = self.steady.jobs if self.steady is not None else None
        self.unsettled: list[JobInfo] = (
            [job for uid, job in snapshot.jobs.items() if uid not in steady]
            if steady
            else list(snapshot.jobs.values())
        )
        # Jobs with a pod waiting when the session opened, in ``jobs`` order. Most passes need only these,
        # and in a busy cluster they are a few among thousands (every running plain pod is a job).
        pending = TaskStatus.PENDING
        self._waiting: list[str] = [job.uid for job in self.unsettled if job.by_status.get(pending)]
        waiting = self.waiting_jobs()
        extra = {name for job in waiting for t in job.pending_tasks for name in t.resreq}
        kept = snapshot.table
        if kept is not None and all(name in kept.index for name in extra):
            self.table = kept.copy()
        else:
            self.table = NodeTable(self.nodes, extra)
        self.total: Resource = self.table.total()
        self.plugins: list[tuple[int, Plugin]] = []
        self.points = ext.Points.none(len(conf.tiers))  # filled at open
        self.timings: dict[str, float] = {}
        self.enqueue_enabled = "enqueue" in conf.actions
        self._init_node_checks(waiting)
        self._init_outcomes(hand_over)

    def waiting_jobs(self) -> list[JobInfo]:
        """The jobs of the session that had pending tasks when it opened (a superset of those that still
        have some: a task only leaves Pending during a session, unless a discarded statement returns it)."""
        jobs = self.jobs
        return [job for uid in self._waiting if (job := jobs.get(uid)) is not None]

    @property
    def now_seconds(self) -> float:
        """The session's time (``now``) in seconds since the epoch."""
        return timestamp(self.now)

    # --- plugins --------------------------------------------------------------------------------------------

    def open(self) -> None:
        for t, tier in enumerate(self.conf.tiers):
            for option in tier:
                self.plugins.append((t, self.registry.plugin(option.name, option.arguments)))
        options = [option for tier in self.conf.tiers for option in tier]
        self.points = ext.Points.collect(
            [(t, plugin, option.enabled) for (t, plugin), option in zip(self.plugins, options, strict=True)],
            len(self.conf.tiers),
        )
        self._node_order_fns = [fn for tier in self.points.node_order for fn in tier]
        for _, plugin in self.plugins:
            if ext.implements(plugin, ext.SessionOpen):
                cast(ext.SessionOpen, plugin).on_session_open(self)
        # Not the steady jobs: valid when they settled, and the same since (``job_valid`` reads only the job).
        for job in self.unsettled:
            if self.enqueue_enabled and job.phase is PodGroupPhase.PENDING:
                continue  # its pods are created only once enqueue admits it (checked then)
            self.check_valid(job)

    def check_valid(self, job: JobInfo) -> None:
        """A job failing any ``job_valid`` leaves the session, with its reason on its PodGroup."""
        invalid = combine.first_failure(self.points.job_valid, job)
        if invalid is not None:
            self.set_condition(job, k.PODGROUP_CONDITION_UNSCHEDULABLE, invalid.reason, invalid.message)
            self.explanations[job.uid] = Explanation(job.uid, invalid.reason, invalid.message)
            self.jobs.pop(job.uid)

    def moved_steady(self) -> list[JobInfo]:
        """The steady jobs this session changed (an eviction, a phase), in the order it first touched them:
        walked at the close like the unsettled ones."""
        steady = self.steady
        if steady is None or not steady.jobs:
            return []
        touched = self.snapshot.touched
        uids = dict.fromkeys(task.job_id for task in touched.tasks if task.job_id is not None)
        uids.update(dict.fromkeys(job.uid for job in touched.jobs))
        held = steady.jobs
        return [held[uid].job for uid in uids if uid in held]

    def closing_jobs(self) -> list[JobInfo]:
        """What the close walks: the unsettled jobs, then the steady ones this session changed or told
        something (any plugin may set a condition)."""
        steady = self.steady
        if steady is None:
            return self.unsettled
        moved = self.moved_steady()
        seen = {job.uid for job in moved}
        told = [self.snapshot.jobs[uid] for uid in self.conditions if uid in steady.jobs and uid not in seen]
        return [*self.unsettled, *moved, *told]

    def close(self) -> None:
        for _, plugin in self.plugins:
            if ext.implements(plugin, ext.SessionClose):
                cast(ext.SessionClose, plugin).on_session_close(self)

    def release(self) -> None:
        """Drop the plugins and their extension points once the result is taken. Plugins keep the session
        they serve (gang does), so without this each session would be a reference cycle the size of the
        cluster, freed only by a full garbage collection; with it, the session goes when its last
        reference does."""
        self.plugins = []
        self.points = ext.Points.none(len(self.conf.tiers))
        self._node_order_fns = []
        self._statements = []

    def plugin(self, name: str) -> Plugin | None:
        return next((p for _, p in self.plugins if p.name == name), None)
