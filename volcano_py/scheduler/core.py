"""The pure core's entry points, the one door its readers (runtime, dashboard, what-if, simulator) use:
``load_conf`` (a ``volcano-scheduler.conf`` checked against the built-in registry of ``builtin``),
``build_snapshot`` (a ``ClusterObjects`` in, a ``Snapshot`` without any malformed object out),
``run_session`` (one scheduling cycle, snapshot in, decisions out) and ``queue_order`` (each queue's waiting
jobs in the order a session takes them). It also hands out what those readers
read besides running one (the snapshot's views, the conf's helpers, the GPU and HyperNode arithmetic): no
module outside ``scheduler`` imports ``framework``, ``solver``, ``actions`` or ``plugins`` itself (an import
contract holds it).

Phases: (1) open the session, instantiating the conf's plugins; (2) run the conf's actions in order;
(3) turn what stopped each job into an explanation (nodes, queues, pods held by scheduling gates); (4) let
plugins close (gang writes conditions); (5) collect PodGroup/queue status and decisions into a
``SessionResult``. The clock value ``now`` is passed in and only stamps condition transition times: no
decision reads the wall clock.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from volcano_py.api import constants as k
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.api.queue_gate import opted_in
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.log import get_logger

from .actions.queue_gate import awaiting_admission
from .actions.shuffle import SHUFFLE
from .builtin import default_registry
from .framework.arguments import ConfError
from .framework.closing import finish
from .framework.conf import (
    DEFAULT_CONF,
    EVERY_VOLCANO_NAME_CONF,
    VOLCANO_SHIPPED_CONF,
    SchedulerConf,
    parse_conf,
    with_actions,
    with_cpsat,
)
from .framework.decisions import Explanation, HandOver, PodGroupUpdate, SessionResult
from .framework.explain import plural
from .framework.extenders import CallFailed, ExtenderAnswers, Refusal
from .framework.gang_safety import gangs_left_partly_evicted
from .framework.job import JobInfo
from .framework.metrics_conf import MetricsConf
from .framework.node import NodeInfo, NodeUsage, QueueInfo
from .framework.objects import ClusterObjects, Unschedulable, build_snapshot
from .framework.pacing import BURST_QUIET_SECONDS
from .framework.registry import Registry
from .framework.session import Session
from .framework.shadow import Shadow, ShadowSource
from .framework.sharding import NO_SHARDING, Sharding, ShardScope, shard_scope
from .framework.snapshot import Records, Snapshot
from .framework.status import ALLOCATED_STATUSES, TaskStatus, parse_podgroup_phase
from .plugins.extender_wire import (
    Consultation,
    ExtenderConf,
    consultation,
    extender_conf,
    passed_nodes,
    predicate_body,
    prioritize_body,
    read_enqueueable,
    read_overused,
    read_predicate,
    read_prioritize,
)
from .solver.fragmentation import StrandedGpus, stranded_cards, vector_of
from .solver.hypernode_tree import ROOT, HyperNodeTree, TopologyError, build_tree, hypernodes_from_objects

__all__ = [
    "ALLOCATED_STATUSES",
    "BURST_QUIET_SECONDS",
    "DEFAULT_CONF",
    "EVERY_VOLCANO_NAME_CONF",
    "NO_SHARDING",
    "ROOT",
    "VOLCANO_SHIPPED_CONF",
    "CallFailed",
    "ClusterObjects",
    "ConfError",
    "Consultation",
    "ExtenderAnswers",
    "ExtenderConf",
    "HandOver",
    "HyperNodeTree",
    "JobInfo",
    "MetricsConf",
    "NodeInfo",
    "NodeUsage",
    "PodGroupUpdate",
    "QueueInfo",
    "Records",
    "Refusal",
    "SchedulerConf",
    "SessionResult",
    "Shadow",
    "ShadowSource",
    "ShardScope",
    "Sharding",
    "Snapshot",
    "StrandedGpus",
    "TaskStatus",
    "TopologyError",
    "Unschedulable",
    "acts_on_running",
    "build_snapshot",
    "build_tree",
    "consultation",
    "default_registry",
    "extender_conf",
    "gangs_left_partly_evicted",
    "hypernodes_from_objects",
    "load_conf",
    "load_conf_file",
    "parse_conf",
    "parse_podgroup_phase",
    "passed_nodes",
    "predicate_body",
    "prioritize_body",
    "queue_order",
    "read_enqueueable",
    "read_overused",
    "read_predicate",
    "read_prioritize",
    "run_session",
    "shard_scope",
    "stranded_cards",
    "vector_of",
    "with_actions",
    "with_cpsat",
]

log = get_logger(__name__)


def load_conf(text: str | None = None, *, registry: Registry | None = None) -> SchedulerConf:
    """Parse conf text (None: Volcano's default plus cpsat); raises ``ConfError`` naming the bad entry."""
    return parse_conf(text, registry or default_registry())


def load_conf_file(path: str | Path, *, registry: Registry | None = None) -> SchedulerConf:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfError(f"cannot read scheduler conf {path}: {err.strerror}") from None
    return load_conf(text, registry=registry)


def run_session(
    snapshot: Snapshot,
    conf: SchedulerConf,
    now: str,
    *,
    registry: Registry | None = None,
    features: FeatureGates = DEFAULT_FEATURE_GATES,
    timers: Mapping[str, float] | None = None,
    hand_over: HandOver | None = None,
) -> SessionResult:
    """Run every action of ``conf`` over ``snapshot`` (which this consumes) and return the decisions.

    ``now`` is an RFC 3339 timestamp, e.g. ``"2026-01-01T00:00:00Z"``; ``features``: the scheduler's
    ``--feature-gates``; ``timers``: the last result's ``timers`` (when periodic plugins last acted);
    ``hand_over``: takes committed binds while the session still runs, in chunks of at least
    ``HAND_OVER_BINDS`` and at the end of each action (the result still lists them all, and says how many
    went that way in ``handed_over``).
    """
    ssn = Session(
        snapshot,
        conf,
        registry or default_registry(),
        now=now,
        features=features,
        timers=timers,
        hand_over=hand_over,
    )
    try:
        return _run(ssn, conf)
    finally:
        ssn.release()


def queue_order(
    snapshot: Snapshot,
    conf: SchedulerConf,
    now: str,
    *,
    registry: Registry | None = None,
    features: FeatureGates = DEFAULT_FEATURE_GATES,
) -> dict[str, tuple[str, ...]]:
    """Each queue's waiting jobs (PodGroup keys, ``namespace/name``), first to be taken first.

    A job waits while its gang is short of ``minAvailable``, whether enqueue has admitted it yet or not. The
    order is the session's job order (the conf's job-order plugins, then creation time): the one enqueue
    admits and allocate places jobs in, as a session opened over ``snapshot`` (which this consumes) computes
    it.
    """
    ssn = Session(snapshot, conf, registry or default_registry(), now=now, features=features)
    try:
        ssn.open()
        # From the snapshot, not the session: a gang whose pods are still being created is left out of a
        # session's jobs, yet it waits in its queue all the same.
        waiting = [job for job in snapshot.jobs.values() if _waits(job)]
        order: dict[str, list[str]] = {}
        for job in ssn.sorted_jobs(waiting):
            order.setdefault(job.queue, []).append(job.uid)
        return {queue: tuple(uids) for queue, uids in order.items()}
    finally:
        ssn.release()


def _waits(job: JobInfo) -> bool:
    """Short of its gang and either waiting for admission or placement, or with pods to place (a Completed
    PodGroup whose pods are gone waits for nothing)."""
    if job.shadow or job.is_ready():
        return False
    return job.phase in (PodGroupPhase.PENDING, PodGroupPhase.INQUEUE) or bool(job.pending_tasks)


def acts_on_running(conf: SchedulerConf) -> bool:
    """Whether a session under ``conf`` can decide something while nothing waits: ``shuffle`` evicts
    running pods when its plugins' clocks say so, so such a conf needs a session every period."""
    return SHUFFLE in conf.actions


def _run(ssn: Session, conf: SchedulerConf) -> SessionResult:
    started = time.perf_counter()
    ssn.open()
    ssn.timings["open"] = time.perf_counter() - started
    for name in conf.actions:
        action = ssn.registry.action(name, conf.configurations.get(name))
        began = time.perf_counter()
        action.execute(ssn)
        ssn.timings[name] = time.perf_counter() - began
        ssn.hand_over()  # what the next actions decide cannot take these back
    for job_uid, failures in ssn.fit_failures.items():
        job = ssn.jobs.get(job_uid)
        if job is not None and failures.unplaced and job.pending_tasks:
            ssn.explanations[job_uid] = Explanation(
                job_uid, k.REASON_NOT_ENOUGH_RESOURCES, failures.message()
            )
    _explain_gates(ssn)
    began = time.perf_counter()
    ssn.close()
    result = finish(ssn)
    ssn.timings["close"] = time.perf_counter() - began
    log.debug(
        "session done",
        binds=len(result.binds),
        pipelined=len(result.pipelined),
        unschedulable=len(result.explanations),
        seconds=round(time.perf_counter() - started, 4),
    )
    return result


def _explain_gates(ssn: Session) -> None:
    """A gang short of its minimum while some of its pods are held by scheduling gates waits for them: as in
    Volcano, that is NotEnoughResources (gated pods count as members, they are only not placed), and the
    message names the gates, which only whoever set them can remove."""
    for job in ssn.waiting_jobs():
        gated = job.gated_task_num
        if not gated or ssn.job_ready(job):
            continue
        gates = f"{plural(gated, 'pod')} held by spec.schedulingGates, placed once the gates are removed"
        if waiting := _queue_gate_wait(ssn, job):
            gates = f"{gates}; {waiting}"
        said = ssn.explanations.get(job.uid)
        if said is not None:
            ssn.explanations[job.uid] = Explanation(job.uid, said.reason, f"{said.message}; {gates}")
            continue
        unready = job.min_available - job.ready_task_num
        message = f"{unready}/{len(job.tasks)} tasks in gang unschedulable: {gates}"
        ssn.explanations[job.uid] = Explanation(job.uid, k.REASON_NOT_ENOUGH_RESOURCES, message)


def _queue_gate_wait(ssn: Session, job: JobInfo) -> str:
    """Of the job's gated pods, those that keep Volcano's queue-allocation gate because their queue has no
    room for them yet, and why (the queue's own words); empty when there are none."""
    queue = ssn.queues.get(job.queue)
    if not ssn.features.queue_admission_gates or queue is None:
        return ""
    waiting = [t for t in awaiting_admission(job) if t.uid not in ssn.ungates and opted_in(t.pod)]
    if not waiting:
        return ""
    why = ssn.explain_allocatable(queue, waiting[0]) or "it has no room for them"
    verb = "keeps" if len(waiting) == 1 else "keep"
    pods = plural(len(waiting), "pod")
    return f"{pods} {verb} the queue-allocation gate until queue {queue.name} has room: {why}"
