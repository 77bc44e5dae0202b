"""What would make a pending job run now: candidate changes, each proved by a real session.

For one pending PodGroup the search tries, on copies of the cluster's objects, the changes a person could
make, and keeps only those after which ``run_session`` really schedules the job (its gang reaches
``minAvailable``): open its closed queue; raise its queue's (or an ancestor's) capability by the shortfall;
end the fewest, lowest-priority jobs on one node, HyperNode or the cluster; or add the fewest nodes shaped
like the best existing one. The session is the whole scheduler with its conf, so a change that frees GPUs a
higher-priority job would take first is correctly not proposed.

Each trial builds a fresh snapshot and runs a session, so the search is bounded by a ``Budget`` (seconds and
sessions); it runs off the scheduling cycle (in ``vcctl job why`` or the dashboard), never inside it.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from volcano_py.api import constants as k
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import GPU, PODS, Resource, total
from volcano_py.scheduler.core import (
    ClusterObjects,
    SchedulerConf,
    SessionResult,
    Snapshot,
    build_snapshot,
    run_session,
)
from volcano_py.scheduler.framework.job import JobInfo
from volcano_py.scheduler.framework.node import NodeInfo, QueueInfo
from volcano_py.scheduler.framework.status import ALLOCATED_STATUSES, parse_podgroup_phase
from volcano_py.scheduler.solver.hypernode_tree import (
    ROOT,
    HyperNodeTree,
    TopologyError,
    build_tree,
    hypernodes_from_objects,
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

Obj = dict[str, Any]
Clock = Callable[[], float]
# Distinct victim sets proved per search before the cheapest is pruned; more rarely finds a smaller one.
_VICTIM_SETS = 3
# Victims added one by one beyond the arithmetic estimate before a domain is given up.
_EXTEND = 2
# Victim sets tried before ending jobs is given up (leaving the budget to the other kinds of change).
_END_TRIALS = 12

# A PodGroup the enqueue session admitted: Inqueue, or already placed when its pods existed.
_ADMITTED = frozenset({PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING})


class _OutOfBudget(Exception):
    pass


@dataclass(slots=True)
class _Trials:
    job: str
    conf: SchedulerConf
    now: str
    extra_pods: tuple[Obj, ...]
    scheduler_names: tuple[str, ...]
    budget: Budget
    clock: Clock
    started: float = 0.0
    sessions: int = 0
    last_pipelined: bool = False
    # The first session's decisions (the cluster as it is): its queues' deserved shares guide the search.
    baseline: SessionResult | None = None

    def runs(self, objs: ClusterObjects) -> bool:
        """Whether a session over ``objs`` brings the job to ``minAvailable``.

        A PodGroup still Pending takes two sessions, as in the cluster: the first must enqueue it (the pods
        of a Volcano Job do not exist yet, so they are left out; pods that do exist may be placed at once),
        the second, with it Inqueue and its pods made, must place it.
        """
        if self._pending(objs):
            result = self._session(objs, ())
            if not any(
                f"{u.namespace}/{u.name}" == self.job and u.phase in _ADMITTED
                for u in result.podgroup_updates
            ):
                return False
            objs = replace(objs, podgroups=tuple(self._inqueue(pg) for pg in objs.podgroups))
        snapshot = _snapshot(objs, self.extra_pods, self.scheduler_names)
        result = self._run(snapshot)
        job = snapshot.jobs.get(self.job)
        self.last_pipelined = any(p.job == self.job for p in result.pipelined)
        if self.baseline is None:
            self.baseline = result
        return job is not None and job.is_ready()

    def _session(self, objs: ClusterObjects, extra: tuple[Obj, ...]) -> SessionResult:
        return self._run(_snapshot(objs, extra, self.scheduler_names))

    def _run(self, snapshot: Snapshot) -> SessionResult:
        if self.sessions >= self.budget.sessions or self.clock() - self.started >= self.budget.seconds:
            raise _OutOfBudget
        self.sessions += 1
        return run_session(snapshot, self.conf, self.now)

    def _is_target(self, pg: Obj) -> bool:
        meta = pg.get("metadata") or {}
        return f"{meta.get('namespace') or 'default'}/{meta.get('name')}" == self.job

    def _pending(self, objs: ClusterObjects) -> bool:
        return any(
            self._is_target(pg)
            and parse_podgroup_phase((pg.get("status") or {}).get("phase")) is PodGroupPhase.PENDING
            for pg in objs.podgroups
        )

    def _inqueue(self, pg: Obj) -> Obj:
        if not self._is_target(pg):
            return pg
        return {**pg, "status": {**(pg.get("status") or {}), "phase": PodGroupPhase.INQUEUE.value}}


def _snapshot(objs: ClusterObjects, extra_pods: Sequence[Obj], names: Sequence[str]) -> Snapshot:
    # The scheduler's own builder: a malformed object is left out here as the scheduler leaves it out.
    snapshot, _dropped = build_snapshot(replace(objs, pods=(*objs.pods, *extra_pods)), names)
    return snapshot


# --- object edits (copies; the caller's objects are never changed) --------------------------------------


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _edit_queues(objs: ClusterObjects, edits: dict[str, Callable[[Obj], None]]) -> ClusterObjects:
    queues = []
    for queue in objs.queues:
        edit = edits.get(_name(queue))
        if edit is not None:
            queue = copy.deepcopy(queue)
            edit(queue)
        queues.append(queue)
    return replace(objs, queues=tuple(queues))


def _set_capability(capability: Resource | None) -> Callable[[Obj], None]:
    def edit(queue: Obj) -> None:
        spec = queue.setdefault("spec", {})
        if capability is None:
            spec.pop("capability", None)
        else:
            spec["capability"] = capability.to_quantities()

    return edit


def _open(queue: Obj) -> None:
    queue.setdefault("status", {})["state"] = "Open"


def _without_jobs(objs: ClusterObjects, view: Snapshot, victims: Iterable[str]) -> ClusterObjects:
    gone = set(victims)
    pod_uids = {t.uid for uid in gone for t in view.jobs[uid].tasks.values()}
    return replace(
        objs,
        pods=tuple(p for p in objs.pods if str((p.get("metadata") or {}).get("uid") or "") not in pod_uids),
        podgroups=tuple(
            pg
            for pg in objs.podgroups
            if f"{(pg.get('metadata') or {}).get('namespace') or 'default'}/{_name(pg)}" not in gone
        ),
    )


def _with_nodes(objs: ClusterObjects, template: Obj, count: int, has_tree: bool) -> ClusterObjects:
    base = _name(template)
    added: list[Obj] = []
    for i in range(count):
        node = copy.deepcopy(template)
        name = f"{base}-whatif-{i + 1}"
        node["metadata"] = {
            **node.get("metadata", {}),
            "name": name,
            "labels": {**(node.get("metadata", {}).get("labels") or {}), "kubernetes.io/hostname": name},
        }
        node.setdefault("spec", {}).pop("unschedulable", None)
        added.append(node)
    hypernodes = objs.hypernodes
    if has_tree and added:
        # New nodes a HyperNode's selector does not already take arrive as one new rack, so a job bound to
        # a tier-1 HyperNode can use them together.
        nodes = {_name(n): (n.get("metadata") or {}).get("labels") or {} for n in (*objs.nodes, *added)}
        try:
            covered = set(build_tree(hypernodes_from_objects(hypernodes), nodes).leaf_of_node)
        except TopologyError:
            covered = set()
        loose = [_name(n) for n in added if _name(n) not in covered]
        if loose:
            rack: Obj = {
                "apiVersion": k.TOPOLOGY_API_VERSION,
                "kind": k.HYPERNODE_KIND,
                "metadata": {"name": f"{base}-whatif-rack"},
                "spec": {
                    "tier": 1,
                    "members": [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in loose],
                },
            }
            hypernodes = (*hypernodes, rack)
    return replace(objs, nodes=(*objs.nodes, *added), hypernodes=hypernodes)


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
    chain: list[QueueInfo] = []
    seen: set[str] = set()
    current: str | None = name
    while current and current not in seen and current in view.queues:
        seen.add(current)
        queue = view.queues[current]
        chain.append(queue)
        current = queue.parent or (k.ROOT_QUEUE if current != k.ROOT_QUEUE else None)
    return chain


def _queue_allocated(view: Snapshot, queue: str) -> Resource:
    """What jobs of ``queue`` and of every queue under it hold now."""
    inside = {queue}
    grew = True
    while grew:
        grew = False
        for q in view.queues.values():
            parent = q.parent or (k.ROOT_QUEUE if q.name != k.ROOT_QUEUE else "")
            if parent in inside and q.name not in inside:
                inside.add(q.name)
                grew = True
    return total(job.allocated for job in view.jobs.values() if job.queue in inside)


def _holdings(view: Snapshot, target: str) -> dict[str, dict[str, Resource]]:
    """Job uid -> node -> what its tasks hold there; only jobs a person could end for the target."""
    out: dict[str, dict[str, Resource]] = {}
    for uid, job in view.jobs.items():
        if uid == target:
            continue
        for task in job.tasks.values():
            if task.status not in ALLOCATED_STATUSES or not task.node_name or task.system_critical:
                continue
            per_node = out.setdefault(uid, {})
            per_node[task.node_name] = per_node.get(task.node_name, Resource()) + task.resreq
    return out


@dataclass(frozen=True, slots=True)
class _Domain:
    name: str  # as shown: "node n1", "HyperNode rack-a", "the cluster"
    nodes: frozenset[str]


def _domains(view: Snapshot, tree: HyperNodeTree | None, need: Resource) -> list[_Domain]:
    domains = [_Domain("the cluster", frozenset(n.name for n in view.nodes))]
    if tree is not None:
        domains += [
            _Domain(f"HyperNode {name}", tree.nodes(name)) for name in sorted(tree.tiers) if tree.nodes(name)
        ]
    domains += [_Domain(f"node {n.name}", frozenset({n.name})) for n in view.nodes if need <= n.allocatable]
    return domains


def _pick_victims(
    domain: _Domain,
    nodes: dict[str, NodeInfo],
    holdings: dict[str, dict[str, Resource]],
    view: Snapshot,
    need: Resource,
    main: str,
    priority: int,
    queue: str,
) -> list[str]:
    """Victims for ``domain`` in the order to try: lower priority first; the smallest job that covers the
    remaining shortfall of ``main``, else the largest."""
    free = total(nodes[n].idle for n in domain.nodes if n in nodes)
    deficit = max(0, need.amount(main) - free.amount(main))
    held = {
        uid: total(r for node, r in per_node.items() if node in domain.nodes).amount(main)
        for uid, per_node in holdings.items()
    }
    pool = {uid: amount for uid, amount in held.items() if amount > 0}
    order: list[str] = []
    # Lower-priority jobs first; within those, jobs of the target's own queue (ending them also frees the
    # queue's share and capability).
    for lower, same in ((True, True), (True, False), (False, True), (False, False)):
        tier = {
            uid: a
            for uid, a in pool.items()
            if (view.jobs[uid].priority < priority) == lower and (view.jobs[uid].queue == queue) == same
        }
        while tier:
            covering = [uid for uid, a in tier.items() if a >= deficit]
            pick = (
                min(covering, key=lambda u: (tier[u], u))
                if covering
                else max(tier, key=lambda u: (tier[u], u))
            )
            order.append(pick)
            deficit = max(0, deficit - tier.pop(pick))
    return order


def _covering_prefix(
    order: list[str],
    domain: _Domain,
    holdings: dict[str, dict[str, Resource]],
    nodes: dict[str, NodeInfo],
    need: Resource,
    main: str,
    share: tuple[set[str], int],
) -> int:
    """How many of ``order`` to end so the domain has room for the job and, when its queue is over its
    deserved share by ``share[1]``, the queue's own jobs among them (``share[0]``) give back that much."""
    free = total(nodes[n].idle for n in domain.nodes if n in nodes).amount(main)
    same, over = share
    count = 0
    for uid in order:
        if free >= need.amount(main) and over <= 0:
            break
        free += sum(r.amount(main) for node, r in holdings[uid].items() if node in domain.nodes)
        if uid in same:
            over -= sum(r.amount(main) for r in holdings[uid].values())
        count += 1
    return max(count, 1)


def _share_over(view: Snapshot, target: JobInfo, need: Resource, main: str, trials: _Trials) -> int:
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
) -> WhatIf:
    """The smallest changes, each proved by a session, that let PodGroup ``job`` (``namespace/name``) run now.

    ``extra_pods`` are the job's pods when they do not exist yet (a Volcano Job's pods are created only once
    its PodGroup is Inqueue); the caller builds them from the Job's templates.
    """
    budget = budget or Budget()
    names = tuple(scheduler_names)
    trials = _Trials(job, conf, now, tuple(extra_pods), names, budget, clock, started=clock())
    view = _snapshot(objects, extra_pods, names)
    target = view.jobs.get(job)
    if target is None:
        return WhatIf(job, found=False)
    if target.is_ready():
        return WhatIf(job, pending=False)
    if not target.pending_tasks:
        return WhatIf(job, notes=("Its pods do not exist yet, so no session can place it.",))
    found: list[Suggestion] = []
    notes: list[str] = []
    exhausted = False
    try:
        if trials.runs(objects):
            return WhatIf(job, runs_now=True, sessions=trials.sessions, seconds=clock() - trials.started)
        if trials.last_pipelined:
            notes.append("It is nominated to nodes that free up once terminating pods are gone.")
        _search(objects, view, target, trials, found, notes)
    except _OutOfBudget:
        exhausted = True
    return WhatIf(
        job,
        suggestions=tuple(found),
        notes=tuple(notes),
        sessions=trials.sessions,
        seconds=clock() - trials.started,
        exhausted=exhausted,
    )


def _search(
    objects: ClusterObjects,
    view: Snapshot,
    target: JobInfo,
    trials: _Trials,
    found: list[Suggestion],
    notes: list[str],
) -> None:
    need = _need(target)
    main = _main(need)
    chain = _queue_chain(view, target.queue)
    pre: list[Change] = [OpenQueue(q.name) for q in chain if not q.open]
    base = _edit_queues(objects, {q.name: _open for q in chain if not q.open})
    if pre and trials.runs(base):
        found.append(Suggestion(tuple(pre)))
        return
    capped = [q for q in chain if q.capability is not None]
    relaxed = _edit_queues(base, {q.name: _set_capability(None) for q in capped})
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


def _set_weight(weight: int) -> Callable[[Obj], None]:
    def edit(queue: Obj) -> None:
        queue.setdefault("spec", {})["weight"] = weight

    return edit


# Weights tried go up to this multiple of the queue's own before the search gives up on the weight.
_WEIGHT_FACTOR = 64


def _raise_weight(objs: ClusterObjects, view: Snapshot, queue: str, trials: _Trials) -> RaiseWeight | None:
    """The smallest weight that lets the job run when its queue is held to its share (proportion):
    one session at the largest weight tried, then a bisection."""
    info = view.queues.get(queue)
    if info is None:
        return None
    low, high = info.weight, info.weight * _WEIGHT_FACTOR
    if not trials.runs(_edit_queues(objs, {queue: _set_weight(high)})):
        return None
    while high - low > 1:
        mid = (low + high) // 2
        try:
            works = trials.runs(_edit_queues(objs, {queue: _set_weight(mid)}))
        except _OutOfBudget:
            break
        low, high = (low, mid) if works else (mid, high)
    return RaiseWeight(queue, info.weight, high)


def _apply(objs: ClusterObjects, view: Snapshot, change: Change, has_tree: bool) -> ClusterObjects:
    if isinstance(change, RaiseWeight):
        return _edit_queues(objs, {change.queue: _set_weight(change.to)})
    if isinstance(change, EndJobs):
        return _without_jobs(objs, view, change.jobs)
    if isinstance(change, AddNodes):
        template = next(n for n in objs.nodes if _name(n) == change.like)
        return _with_nodes(objs, template, change.count, has_tree)
    return objs


def _queue_changes(
    base: ClusterObjects,
    view: Snapshot,
    capped: list[QueueInfo],
    need: Resource,
    trials: _Trials,
    with_change: Change | None,
) -> list[Change]:
    """The capability raises needed next to ``with_change`` (none when the limits already allow it)."""
    if not capped:
        return []
    applied = base
    if with_change is not None:
        applied = _apply(base, view, with_change, _tree(view) is not None)
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
        edits = {r.queue: _set_capability(r.to) for r in raises}
        if trials.runs(_edit_queues(applied, edits)):
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
    trials: _Trials,
) -> EndJobs | None:
    holdings = _holdings(view, target.uid)
    if not holdings:
        return None
    plans: list[tuple[int, int, list[str], _Domain]] = []
    share = (
        {uid for uid in holdings if view.jobs[uid].queue == target.queue},
        _share_over(view, target, need, main, trials),
    )
    for domain in _domains(view, tree, need):
        order = _pick_victims(domain, nodes, holdings, view, need, main, target.priority, target.queue)
        if not order:
            continue
        count = _covering_prefix(order, domain, holdings, nodes, need, main, share)
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
            if trials.runs(_without_jobs(objs, view, chosen)):
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
            if trials.runs(_without_jobs(objs, view, rest)):
                best = rest
        except _OutOfBudget:
            break
    freed = total(r for uid in best for r in holdings[uid].values())
    where = sorted({node for uid in best for node in holdings[uid]})
    best.sort()
    shown = tuple(_shown(view, uid) for uid in best)
    return EndJobs(tuple(best), freed, _where(where, tree), (main,), shown)


def _shown(view: Snapshot, uid: str) -> str:
    """A job as a person names it: the Volcano Job owning the PodGroup, else the PodGroup."""
    job = view.jobs[uid]
    for ref in (job.podgroup.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("kind") == k.JOB_KIND and ref.get("name"):
            return f"{job.namespace}/{ref['name']}"
    return uid


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
    trials: _Trials,
    notes: list[str],
) -> AddNodes | None:
    biggest = max(target.pending_tasks, key=lambda t: (t.resreq.amount(GPU), sum(t.resreq.values())))
    main = _main(biggest.resreq)
    shapes = [n for n in view.nodes if n.ready and not n.unschedulable and biggest.resreq <= n.allocatable]
    if not shapes:
        notes.append(f"No node in the cluster is large enough for one of its pods ({biggest.resreq}).")
        return None
    like = max(shapes, key=lambda n: (n.allocatable.amount(main), n.name)).name
    template = next(n for n in objs.nodes if _name(n) == like)
    # One node per pending pod is enough unless other pending jobs take new nodes first: double until it
    # runs, up to one node per pending pod in the cluster plus the cluster's size again.
    low, high = 0, len(target.pending_tasks)  # low: known not to work (the baseline did not run it)
    limit = sum(len(j.pending_tasks) for j in view.jobs.values()) + len(view.nodes)
    while not trials.runs(_with_nodes(objs, template, high, has_tree)):
        if high >= limit:
            notes.append(
                f"Even {high} more nodes like {like} do not let it run: capacity is not what stops it."
            )
            return None
        low, high = high, min(limit, high * 2)
    while high - low > 1:
        mid = (low + high) // 2
        try:
            works = trials.runs(_with_nodes(objs, template, mid, has_tree))
        except _OutOfBudget:
            break
        if works:
            high = mid
        else:
            low = mid
    return AddNodes(high, like)
