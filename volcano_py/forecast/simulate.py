"""Position and estimated start of every waiting job: the cluster as it is, run forward (pure: no I/O).

Each waiting job's position comes from ``queue_order`` (the session's own job order). The estimate comes from
real scheduling sessions (``run_session``, the scheduler's conf, every action and plugin) at the moments
something is expected to change: now, then each time running pods are expected to end (``runtimes``). After
each session its decisions are applied as the cluster would apply them: a PodGroup enqueue admits becomes
Inqueue, and a Volcano Job's pods appear then, built by the controller's own pod builder (``whatif.jobpods``);
bound pods start, with an expected end of their own; evicted pods wait again. A job's estimated start is the
moment a session brings its gang to ``minAvailable``. The loop stops when every waiting job has started, when
nothing more is expected to end, or at a bound (simulated horizon, sessions, wall seconds).

The scheduler's FIFO backfill asks the same simulation for one blocked head (``head_shadow``): it stops once
the head has started, and reports when and what each node still has idle then.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.bodies.pod import pod_node_name, with_node_name
from volcano_py.api.bodies.podgroup import podgroup_phase
from volcano_py.api.common import format_time, human_duration
from volcano_py.api.objects import (
    annotation_of,
    is_deleting,
    name_of,
    namespace_of,
    owner_references_of,
    spec_of,
    status_of,
    uid_of,
)
from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import PODS, Resource
from volcano_py.scheduler.core import (
    ClusterObjects,
    Records,
    SchedulerConf,
    SessionResult,
    Shadow,
    parse_podgroup_phase,
    queue_order,
    run_session,
)
from volcano_py.whatif.edits import shown_name, with_phase
from volcano_py.whatif.jobpods import missing_pods
from volcano_py.whatif.trials import snapshot_with

from .model import BACKFILL_BOUNDS, Basis, Bounds, Eta, Forecast, at
from .runtimes import Expected, RuntimeModel, expected_end, started_at

Obj = dict[str, Any]
Clock = Callable[[], float]
# Sessions run at one moment while each admits or places something (enqueue, then allocate, as the next
# cycles would); more would only repeat the last.
_PASSES = 3
# Ends this close together (seconds, or this share of how far ahead they are) are taken as one moment: a
# few seconds off a day-ahead estimate, far fewer sessions when many pods are modelled alike.
_RESOLUTION = 1.0
_RESOLUTION_SHARE = 0.01


def _key(obj: Obj) -> str:
    return f"{namespace_of(obj) or 'default'}/{name_of(obj)}"


def _group_of(pod: Obj) -> str | None:
    group = annotation_of(pod, c.KUBE_GROUP_NAME_KEY)
    return f"{namespace_of(pod) or 'default'}/{group}" if group else None


def _uid(pod: Obj) -> str:
    return uid_of(pod) or _key(pod)


def _holds_room(pod: Obj) -> bool:
    return bool(pod_node_name(pod)) and pod_phase(pod) in (PodPhase.PENDING, PodPhase.RUNNING)


@dataclass(slots=True)
class _World:
    """The cluster as the forecast moves it forward: a changed object is a new dict, never one changed in
    place, so the caller's objects stay as they are and the kept records may take a dict's identity for its
    version."""

    objects: ClusterObjects
    pods: dict[str, Obj]
    podgroups: dict[str, Obj]
    jobs_of: dict[str, Obj]  # PodGroup key -> the Volcano Job owning it
    model: RuntimeModel
    names: tuple[str, ...]
    ends: dict[str, Expected] = field(default_factory=dict)  # pod uid -> expected end
    problems: list[str] = field(default_factory=list)

    def cluster(self) -> ClusterObjects:
        return replace(self.objects, pods=tuple(self.pods.values()), podgroups=tuple(self.podgroups.values()))

    def expect(self, pod: Obj, started: float, now: float) -> None:
        group = _group_of(pod)
        podgroup = self.podgroups.get(group) if group else None
        self.ends[_uid(pod)] = expected_end(
            pod,
            podgroup,
            started=started,
            now=now,
            model=self.model,
            scheduler_names=self.names,
            problems=self.problems,
        )

    def add_missing_pods(self, key: str, stamp: str) -> None:
        for pod in missing_pods(self.jobs_of.get(key), key, list(self.pods.values()), created=stamp):
            self.pods[_uid(pod)] = pod

    def apply(self, result: SessionResult, now: float) -> bool:
        """Apply a session's decisions; whether any admits or places something (another pass may follow)."""
        stamp = format_time(at(now))
        changed = False
        for update in result.podgroup_updates:
            key = f"{update.namespace}/{update.name}"
            pg = self.podgroups.get(key)
            if pg is None:
                continue
            was = parse_podgroup_phase(podgroup_phase(pg))
            if update.phase is was:
                continue
            self.podgroups[key] = with_phase(pg, update.phase)
            if was is PodGroupPhase.PENDING:
                changed = True
                if update.phase is PodGroupPhase.INQUEUE:
                    self.add_missing_pods(key, stamp)
        for bind in result.binds:
            pod = self.pods.get(bind.uid)
            if pod is None:
                continue
            pod = {
                **with_node_name(pod, bind.node),
                "status": {"phase": PodPhase.RUNNING.value, "startTime": stamp},
            }
            self.pods[bind.uid] = pod
            self.expect(pod, now, now)
            changed = True
        for evict in result.evictions:
            pod = self.pods.get(evict.uid)
            if pod is None:
                continue
            spec = {k: v for k, v in spec_of(pod).items() if k != "nodeName"}
            self.pods[evict.uid] = {**pod, "spec": spec, "status": {"phase": PodPhase.PENDING.value}}
            self.ends.pop(evict.uid, None)
            changed = True
        return changed

    def next_end(self, after: float) -> float | None:
        """The first expected end not before ``after`` (those at ``after`` itself are not finished yet)."""
        ends = [e.end for e in self.ends.values() if e.end is not None and e.end >= after]
        return min(ends) if ends else None

    def finish(self, until: float) -> tuple[float, bool]:
        """Pods expected to end by ``until`` succeed; the latest such end, and whether any was modelled."""
        latest, modelled = 0.0, False
        for uid, expected in list(self.ends.items()):
            if expected.end is None or expected.end > until:
                continue
            pod = self.pods[uid]
            self.pods[uid] = {
                **pod,
                "status": {**status_of(pod), "phase": PodPhase.SUCCEEDED.value},
            }
            del self.ends[uid]
            latest = max(latest, expected.end)
            modelled = modelled or not expected.declared
        return latest, modelled


def _world(
    objects: ClusterObjects,
    jobs: Iterable[Obj],
    now: float,
    model: RuntimeModel,
    names: tuple[str, ...],
) -> _World:
    by_uid = {uid_of(j): j for j in jobs}
    jobs_of: dict[str, Obj] = {}
    for pg in objects.podgroups:
        for ref in owner_references_of(pg):
            job = by_uid.get(str(ref.get("uid")))
            if ref.get("kind") == c.JOB_KIND and job is not None:
                jobs_of[_key(pg)] = job
    world = _World(
        objects,
        pods={_uid(p): p for p in objects.pods},
        podgroups={_key(pg): pg for pg in objects.podgroups},
        jobs_of=jobs_of,
        model=model,
        names=names,
    )
    stamp = format_time(at(now))
    for key, pg in world.podgroups.items():
        # Admitted, so the controller is creating its pods: they are as good as there. (A Running or
        # Completed one without pods has had them, and gets no new ones.)
        if parse_podgroup_phase(podgroup_phase(pg)) is PodGroupPhase.INQUEUE:
            world.add_missing_pods(key, stamp)
    for pod in list(world.pods.values()):
        if is_deleting(pod):
            world.ends[_uid(pod)] = Expected(now, declared=True)  # deleted: its room frees as it goes
        elif _holds_room(pod):
            world.expect(pod, started_at(pod, now), now)
    return world


@dataclass(slots=True)
class _Run:
    """What one simulation found: each waiting job's start, and the watched head's spare (if watched)."""

    order: dict[str, tuple[str, ...]]
    world: _World
    started: dict[str, tuple[float, Basis]]
    sessions: int
    moment: float
    exhausted: bool
    spare: dict[str, Resource] | None = None


def _spare(
    world: _World,
    result: SessionResult,
    head: str,
    queue: str,
    names: tuple[str, ...],
    records: Records,
) -> dict[str, Resource]:
    """Per node, what is idle once the session that started ``head`` has been applied, plus what it gave
    the queue's later jobs: those are the jobs that might backfill instead, so that room is not the head's."""
    after = snapshot_with(world.cluster(), (), names, records)
    spare = {node.name: node.idle for node in after.nodes}
    for bind in result.binds:
        job = after.jobs.get(bind.job)
        if bind.job == head or job is None or job.queue != queue or bind.node not in spare:
            continue
        task = job.tasks.get(bind.uid)
        if task is not None:
            spare[bind.node] = spare[bind.node] + task.resreq + {PODS: 1}
    return spare


def _simulate(
    objects: ClusterObjects,
    conf: SchedulerConf,
    now: datetime,
    *,
    jobs: Sequence[Obj],
    names: tuple[str, ...],
    bounds: Bounds,
    model: RuntimeModel,
    clock: Clock,
    head: str | None = None,
    keep_records: bool = True,
) -> _Run:
    """The cluster run forward until every waiting job has started (or only ``head``, when given), nothing
    more is expected to end, or a bound is reached."""
    began = clock()
    start = now.timestamp()
    # One set of records for the whole run: each snapshot after the first reads again only what changed
    # (the world replaces the dict of an object it changes and never edits one a snapshot has read), so at
    # 30,000 pods a session costs the session, not a parse of every pod. queue_order's snapshot is the
    # first; the first session's, of the same objects, costs what queue_order's session changed.
    records = Records(keep=keep_records)
    order = queue_order(snapshot_with(objects, (), names, records), conf, format_time(now))
    world = _world(objects, jobs, start, model, names)
    waiting = {uid for uids in order.values() for uid in uids}
    head_queue = next((q for q, uids in order.items() if head in uids), "")
    run = _Run(order, world, {}, 0, start, False)
    started = run.started
    timers: dict[str, float] = {}
    moment = start
    ended, modelled = False, False  # whether any pod was expected to end yet, and any of those modelled

    def done() -> bool:
        return head in started if head is not None else waiting <= started.keys()

    while True:
        for _ in range(_PASSES):
            if run.sessions >= bounds.sessions or clock() - began >= bounds.seconds:
                run.exhausted = True
                break
            snapshot = snapshot_with(world.cluster(), (), names, records)
            result = run_session(snapshot, conf, format_time(at(moment)), timers=timers)
            timers = dict(result.timers)  # periodic plugins (shuffle's) act on the forecast's clock
            run.sessions += 1
            changed = world.apply(result, moment)
            basis = Basis.MODELLED if modelled else (Basis.DECLARED if ended else Basis.NOW)
            # Read before the next snapshot is built from the records (``_spare`` builds one).
            for uid in waiting - started.keys():
                job = snapshot.jobs.get(uid)
                if job is not None and job.is_ready():
                    started[uid] = (moment, basis)
            if head is not None and head in started and run.spare is None:
                run.spare = _spare(world, result, head, head_queue, names, records)
            if not changed or done():
                break
        if run.exhausted or done():
            break
        upcoming = world.next_end(moment)
        if upcoming is None or upcoming - start > bounds.horizon:
            break
        window = max(_RESOLUTION, _RESOLUTION_SHARE * (upcoming - start))
        latest, finished_modelled = world.finish(min(upcoming + window, start + bounds.horizon))
        moment, ended, modelled = max(latest, upcoming), True, modelled or finished_modelled
    run.moment = moment
    return run


def _stopped(run: _Run, start: float, bounds: Bounds, seconds: float | None) -> str:
    if run.exhausted:
        spent = f"{run.sessions} sessions" + (f", {seconds:.1f}s" if seconds is not None else "")
        return (
            f"no estimate: the forecast stopped at its bound ({spent}) "
            f"{human_duration(run.moment - start)} ahead"
        )
    return f"no start within the horizon ({human_duration(bounds.horizon)} ahead), from the runtimes known"


def forecast(
    objects: ClusterObjects,
    conf: SchedulerConf,
    now: datetime,
    *,
    jobs: Sequence[Obj] = (),
    scheduler_names: Sequence[str] = (c.SCHEDULER_NAME,),
    bounds: Bounds | None = None,
    model: RuntimeModel | None = None,
    clock: Clock = time.monotonic,
    keep_records: bool = True,
) -> Forecast:
    """Position and estimated start of every waiting job in ``objects`` (PodGroup keys).

    ``jobs``: the Volcano Jobs, whose pods a forecast builds when their PodGroups are admitted (the controller
    creates them only then); ``clock`` measures the wall-seconds bound; ``keep_records`` False builds every
    snapshot from scratch (the same answer, slower: what the tests compare the kept records against).
    """
    bounds = bounds or Bounds()
    began = clock()
    run = _simulate(
        objects,
        conf,
        now,
        jobs=jobs,
        names=tuple(scheduler_names),
        bounds=bounds,
        model=model or RuntimeModel(),
        clock=clock,
        keep_records=keep_records,
    )
    seconds = clock() - began
    stopped = _stopped(run, now.timestamp(), bounds, seconds)
    etas: dict[str, Eta] = {}
    for queue, uids in run.order.items():
        for position, uid in enumerate(uids, start=1):
            when = run.started.get(uid)
            etas[uid] = Eta(
                job=uid,
                queue=queue,
                position=position,
                waiting=len(uids),
                start=at(when[0]) if when else None,
                basis=when[1] if when else Basis.UNKNOWN,
                why_unknown="" if when else stopped,
                shown=shown_name(run.world.podgroups[uid]) if uid in run.world.podgroups else uid,
            )
    return Forecast(
        now=now,
        etas=etas,
        sessions=run.sessions,
        seconds=seconds,
        simulated=run.moment - now.timestamp(),
        exhausted=run.exhausted,
        problems=tuple(dict.fromkeys(run.world.problems)),
    )


def head_shadow(
    objects: ClusterObjects,
    conf: SchedulerConf,
    now: datetime,
    head: str,
    *,
    jobs: Sequence[Obj] = (),
    scheduler_names: Sequence[str] = (c.SCHEDULER_NAME,),
    bounds: Bounds,
    model: RuntimeModel | None = None,
) -> Shadow:
    """The blocked FIFO head's shadow, from the same simulation as ``forecast``, stopped once the head has
    started. No wall clock: ``bounds.sessions`` and ``bounds.horizon`` stop it, so the same cluster always
    gives the same shadow."""
    run = _simulate(
        objects,
        conf,
        now,
        jobs=jobs,
        names=tuple(scheduler_names),
        bounds=bounds,
        model=model or RuntimeModel(),
        clock=_no_wall_clock,
        head=head,
    )
    when = run.started.get(head)
    if when is None or run.spare is None:
        return Shadow(head, None, why_unknown=_stopped(run, now.timestamp(), bounds, None))
    return Shadow(head, when[0], dict(run.spare))


def _no_wall_clock() -> float:
    return 0.0


def backfill_shadow(
    objects: ClusterObjects, conf: SchedulerConf, now: datetime, head: str, scheduler_names: tuple[str, ...]
) -> Shadow:
    """``head_shadow`` as the scheduler asks it in a cycle where a fifo head is blocked, within
    ``BACKFILL_BOUNDS``. The scheduler reads no Volcano Jobs, so Pending PodGroups get no pods in this
    simulation; allocate's head is admitted, so its own pods exist."""
    return head_shadow(objects, conf, now, head, scheduler_names=scheduler_names, bounds=BACKFILL_BOUNDS)
