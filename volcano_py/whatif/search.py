"""What would make a pending job run now: candidate changes, each proved by a real session.

For one pending PodGroup the search tries, on copies of the cluster's objects, the changes a person could
make, and keeps only those after which ``run_session`` really schedules the job (its gang reaches
``minAvailable``): open its closed queue; raise its queue's (or an ancestor's) capability by the shortfall;
end the fewest, lowest-priority jobs on one node, HyperNode or the cluster; or add the fewest nodes shaped
like the best existing one. The session is the whole scheduler with its conf, so a change that frees GPUs a
higher-priority job would take first is correctly not proposed.

Each trial builds a snapshot (over records kept through the search, so it reads again only what the trial
changed) and runs a session, so the search is bounded by a ``Budget`` (seconds and sessions); it runs off
the scheduling cycle (in ``vcctl job why`` or the dashboard), never inside it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any

from volcano_py.api import constants as k
from volcano_py.api.objects import name_of, spec_of
from volcano_py.api.queue_hierarchy import queue_lineage
from volcano_py.resources import GPU, PODS, Resource, total
from volcano_py.scheduler.core import (
    ROOT,
    ClusterObjects,
    HyperNodeTree,
    JobInfo,
    NodeInfo,
    QueueInfo,
    Records,
    SchedulerConf,
    Snapshot,
    TopologyError,
    build_tree,
    hypernodes_from_objects,
)

from .edits import (
    apply_change,
    edit_queues,
    open_queue,
    set_capability,
    set_weight,
    shown_name,
    with_nodes,
    without_jobs,
)
from .model import (
    AddNodes,
    Budget,
    Change,
    EndJobs,
    OpenQueue,
    RaiseCapability,
    RaiseWeight,
    Suggestion,
    WhatIf,
)
from .trials import OutOfBudget, Trials, snapshot_with
from .victims import Domain, by_node, covering_prefix, domains, holdings_of, pick_victims

Obj = dict[str, Any]
Clock = Callable[[], float]
# Distinct victim sets proved per search before the cheapest is pruned; more rarely finds a smaller one.
_VICTIM_SETS = 3
# Victims added one by one beyond the arithmetic estimate before a domain is given up.
_EXTEND = 2
# Victim sets tried before ending jobs is given up (leaving the budget to the other kinds of change).
_END_TRIALS = 12


# --- arithmetic that picks what to try ------------------------------------------------------------------


def _need(job: JobInfo) -> Resource:
    """What the job must still place to reach minAvailable: its largest pending tasks, that many."""
    short = max(1, job.min_available - job.ready_task_num)
    tasks = sorted(job.pending_tasks, key=lambda t: (-t.resreq.amount(GPU), -sum(t.resreq.values())))
    return total(t.resreq for t in tasks[:short]) - {PODS: 0}


def _main(need: Resource) -> str:
    if need.amount(GPU):
        return GPU
    candidates = [n for n in need if n != PODS]
    return candidates[0] if candidates else PODS


def _queue_chain(view: Snapshot, name: str) -> list[QueueInfo]:
    lineage = queue_lineage(name, lambda q: view.queues[q].parent if q in view.queues else None)
    return [view.queues[q] for q in lineage]


def _queue_allocated(view: Snapshot, queue: str) -> Resource:
    """What jobs of ``queue`` and of every queue under it hold now."""

    def parent(q: str) -> str | None:
        return view.queues[q].parent if q in view.queues else None

    inside = {q for q in view.queues if queue in queue_lineage(q, parent)}
    return total(job.allocated for job in view.jobs.values() if job.queue in inside)


def _share_over(view: Snapshot, target: JobInfo, need: Resource, main: str, trials: Trials) -> int:
    """By how much of ``main`` the job's queue would exceed its deserved share with the job placed."""
    baseline = trials.baseline
    update = next((u for u in baseline.queue_updates if u.name == target.queue), None) if baseline else None
    if update is None or update.deserved is None:
        return 0
    allocated = _queue_allocated(view, target.queue).amount(main)
    return max(0, allocated + need.amount(main) - update.deserved.amount(main))


# --- the search ------------------------------------------------------------------------------------------


def what_would_make_it_run(
    objects: ClusterObjects,
    job: str,
    conf: SchedulerConf,
    *,
    now: str,
    extra_pods: Sequence[Obj] = (),
    scheduler_names: Sequence[str] = (k.SCHEDULER_NAME,),
    budget: Budget | None = None,
    clock: Clock = time.monotonic,
    keep_records: bool = True,
) -> WhatIf:
    """The smallest changes, each proved by a session, that let PodGroup ``job`` (``namespace/name``) run now.

    ``extra_pods`` are the job's pods when they do not exist yet (a Volcano Job's pods are created only once
    its PodGroup is Inqueue); the caller builds them from the Job's templates. ``keep_records`` False builds
    every snapshot from scratch (the same answer, slower: what the tests compare the kept records against).
    """
    budget = budget or Budget()
    names = tuple(scheduler_names)
    began = clock()
    # The view is only read (no session runs over it); the trials' sessions run over snapshots of a fork of
    # its records, which reads each object once for both and never changes the view.
    read = Records(keep=keep_records)
    view = snapshot_with(objects, extra_pods, names, read)
    trials = Trials(job, conf, now, tuple(extra_pods), names, budget, clock, read.fork(), started=began)
    target = view.jobs.get(job)
    if target is None:
        return WhatIf(job, found=False)
    if target.is_ready():
        return WhatIf(job, pending=False)
    if not target.pending_tasks:
        return WhatIf(job, notes=("Its pods do not exist yet, so no session can place it.",))
    found: list[Suggestion] = []
    notes: list[str] = []
    with contextlib.suppress(OutOfBudget):  # trials.ran_out says so, in the answer
        if trials.runs(objects):
            return WhatIf(job, runs_now=True, sessions=trials.sessions, seconds=clock() - trials.started)
        if trials.last_pipelined:
            notes.append("It is nominated to nodes that free up once terminating pods are gone.")
        _search(objects, view, target, trials, found, notes)
    return WhatIf(
        job,
        suggestions=tuple(found),
        notes=tuple(notes),
        sessions=trials.sessions,
        seconds=clock() - trials.started,
        exhausted=trials.ran_out,
    )


def _search(
    objects: ClusterObjects,
    view: Snapshot,
    target: JobInfo,
    trials: Trials,
    found: list[Suggestion],
    notes: list[str],
) -> None:
    need = _need(target)
    main = _main(need)
    chain = _queue_chain(view, target.queue)
    pre: list[Change] = [OpenQueue(q.name) for q in chain if not q.open]
    base = edit_queues(objects, {q.name: open_queue for q in chain if not q.open})
    if pre and trials.runs(base):
        found.append(Suggestion(tuple(pre)))
        return
    capped = [q for q in chain if q.capability is not None]
    relaxed = edit_queues(base, {q.name: set_capability(None) for q in capped})
    queue_only = bool(capped) and trials.runs(relaxed)
    if queue_only:
        found.append(Suggestion((*pre, *_queue_changes(base, view, capped, need, trials, None))))
    if not queue_only:
        weight = _raise_weight(relaxed, view, target.queue, trials)
        if weight is not None:
            caps = _queue_changes(base, view, capped, need, trials, weight)
            found.append(Suggestion((*pre, *caps, weight)))
    nodes = {n.name: n for n in view.nodes}
    tree = _tree(view)
    end = _end_jobs(relaxed, view, target, tree, nodes, need, main, trials)
    if end is not None:
        found.append(Suggestion((*pre, *_queue_changes(base, view, capped, need, trials, end), end)))
    if queue_only:
        return  # the cluster has room: more nodes would only be a detour around the queue's limit
    more = _add_nodes(relaxed, view, target, tree is not None, trials, notes)
    if more is not None:
        found.append(Suggestion((*pre, *_queue_changes(base, view, capped, need, trials, more), more)))


def _tree(view: Snapshot) -> HyperNodeTree | None:
    try:
        specs = hypernodes_from_objects(view.hypernodes)
        return build_tree(specs, {n.name: n.labels for n in view.nodes}) if specs else None
    except TopologyError:
        return None


# Weights tried go up to this multiple of the queue's own before the search gives up on the weight.
_WEIGHT_FACTOR = 64


def _raise_weight(objs: ClusterObjects, view: Snapshot, queue: str, trials: Trials) -> RaiseWeight | None:
    """The smallest weight that lets the job run when its queue is held to its share (proportion):
    one session at the largest weight tried, then a bisection."""
    info = view.queues.get(queue)
    if info is None:
        return None
    low, high = info.weight, info.weight * _WEIGHT_FACTOR
    if not trials.runs(edit_queues(objs, {queue: set_weight(high)})):
        return None
    while high - low > 1:
        mid = (low + high) // 2
        try:
            works = trials.runs(edit_queues(objs, {queue: set_weight(mid)}))
        except OutOfBudget:
            # ``high`` is proved; say how far below it the answer may lie rather than call it the least.
            return RaiseWeight(queue, info.weight, high, low_untried=low + 1)
        low, high = (low, mid) if works else (mid, high)
    return RaiseWeight(queue, info.weight, high)


def _queue_changes(
    base: ClusterObjects,
    view: Snapshot,
    capped: list[QueueInfo],
    need: Resource,
    trials: Trials,
    with_change: Change | None,
) -> list[Change]:
    """The capability raises needed next to ``with_change`` (none when the limits already allow it)."""
    if not capped:
        return []
    applied = base
    if with_change is not None:
        applied = apply_change(base, view, with_change, _tree(view) is not None)
        if trials.runs(applied):
            return []
    freed = with_change.freed if isinstance(with_change, EndJobs) else Resource()
    raises: list[RaiseCapability] = []
    for queue in capped:
        assert queue.capability is not None
        allocated = _queue_allocated(view, queue.name) - freed
        short = Resource(
            {n: allocated.amount(n) + need.amount(n) - queue.capability.amount(n) for n in need if n != PODS}
        ).clamp_min_zero()
        if not short.is_zero():
            raises.append(RaiseCapability(queue.name, short, queue.capability + short))
    if raises:
        edits = {r.queue: set_capability(r.to) for r in raises}
        if trials.runs(edit_queues(applied, edits)):
            return list(raises)
    return [RaiseCapability(q.name, Resource(), None) for q in capped]


def _end_jobs(
    objs: ClusterObjects,
    view: Snapshot,
    target: JobInfo,
    tree: HyperNodeTree | None,
    nodes: dict[str, NodeInfo],
    need: Resource,
    main: str,
    trials: Trials,
) -> EndJobs | None:
    holdings = holdings_of(view, target.uid)
    if not holdings:
        return None
    plans: list[tuple[int, int, list[str], Domain]] = []
    share = (
        {uid for uid in holdings if view.jobs[uid].queue == target.queue},
        _share_over(view, target, need, main, trials),
    )
    holders = by_node(holdings, main)
    for domain in domains(view, tree, need):
        order = pick_victims(domain, nodes, holders, view, need, main, target.priority, target.queue)
        if not order:
            continue
        count = covering_prefix(order, domain, holdings, nodes, need, main, share)
        chosen = order[:count]
        estimate = sum(r.amount(main) for uid in chosen for r in holdings[uid].values())
        plans.append((estimate, len(chosen), order, domain))
    plans.sort(key=lambda p: (p[0], p[1], len(p[3].nodes), p[3].name))
    proved: list[list[str]] = []
    tried: set[frozenset[str]] = set()
    for _freed, count, order, _domain in plans:
        if len(proved) >= _VICTIM_SETS or (len(tried) >= _END_TRIALS and not proved):
            break
        for extra in range(_EXTEND + 1):
            chosen = order[: count + extra]
            key = frozenset(chosen)
            if len(chosen) < count + extra:
                break
            if key in tried:
                continue
            tried.add(key)
            if trials.runs(without_jobs(objs, view, chosen)):
                proved.append(chosen)
                break
    if not proved:
        return None

    def cost(victims: list[str]) -> tuple[int, int]:
        return (sum(r.amount(main) for uid in victims for r in holdings[uid].values()), len(victims))

    best = min(proved, key=cost)
    # Prune: drop each victim (largest first) whose ending turns out not to be needed.
    for uid in sorted(best, key=lambda u: -cost([u])[0]):
        if len(best) == 1:
            break
        rest = [v for v in best if v != uid]
        try:
            if trials.runs(without_jobs(objs, view, rest)):
                best = rest
        except OutOfBudget:
            break
    freed = total(r for uid in best for r in holdings[uid].values())
    where = sorted({node for uid in best for node in holdings[uid]})
    best.sort()
    shown = tuple(_shown(view, uid) for uid in best)
    return EndJobs(tuple(best), freed, _where(where, tree), (main,), shown)


def _shown(view: Snapshot, uid: str) -> str:
    podgroup = view.jobs[uid].podgroup
    return shown_name(podgroup) if podgroup else uid


def _where(nodes: list[str], tree: HyperNodeTree | None) -> str:
    if len(nodes) == 1:
        return f"node {nodes[0]}"
    if tree is not None:
        enclosing = tree.enclosing(nodes)
        if enclosing != ROOT and nodes and set(nodes) <= tree.nodes(enclosing):
            return f"HyperNode {enclosing}"
    return "the cluster" if len(nodes) > 1 else "no node"


def _add_nodes(
    objs: ClusterObjects,
    view: Snapshot,
    target: JobInfo,
    has_tree: bool,
    trials: Trials,
    notes: list[str],
) -> AddNodes | None:
    biggest = max(target.pending_tasks, key=lambda t: (t.resreq.amount(GPU), sum(t.resreq.values())))
    main = _main(biggest.resreq)
    shapes = [n for n in view.nodes if n.ready and not n.unschedulable and biggest.resreq <= n.allocatable]
    if any(t.claims_used for t in target.pending_tasks):
        # Pods claiming DRA devices need nodes that have devices: shaped like one whose driver publishes some.
        with_devices = {spec_of(s).get("nodeName") for s in view.resource_slices}
        shapes = [n for n in shapes if n.name in with_devices] or shapes
    if not shapes:
        notes.append(f"No node in the cluster is large enough for one of its pods ({biggest.resreq}).")
        return None
    like = max(shapes, key=lambda n: (n.allocatable.amount(main), n.name)).name
    template = next(n for n in objs.nodes if name_of(n) == like)
    # One node per pending pod is enough unless other pending jobs take new nodes first: double until it
    # runs, up to one node per pending pod in the cluster plus the cluster's size again.
    low, high = 0, len(target.pending_tasks)  # low: known not to work (the baseline did not run it)
    limit = sum(len(j.pending_tasks) for j in view.jobs.values()) + len(view.nodes)
    while not trials.runs(with_nodes(objs, template, high, has_tree)):
        if high >= limit:
            notes.append(
                f"Even {high} more nodes like {like} do not let it run: capacity is not what stops it."
            )
            return None
        low, high = high, min(limit, high * 2)
    while high - low > 1:
        mid = (low + high) // 2
        try:
            works = trials.runs(with_nodes(objs, template, mid, has_tree))
        except OutOfBudget:
            # ``high`` is proved; say how far below it the answer may lie rather than call it the fewest.
            return AddNodes(high, like, fewest_untried=low + 1)
        if works:
            high = mid
        else:
            low = mid
    return AddNodes(high, like)
