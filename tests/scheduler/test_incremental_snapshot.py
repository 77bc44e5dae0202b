"""A snapshot brought up to date from the last one equals one built from scratch, after any sequence of
changes to pods, nodes, PodGroups and queues, and after any session over it.

The cluster is a store per kind, as an informer keeps it: a changed object is a new dict in the old one's
place, a new object goes last. After every change the kept records build one snapshot and a one-off build
another; what a session reads of them (nodes, their tasks and the node table; jobs, their tasks and
counters; orphans; queues) must be the same, and so must a session's decisions over each.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduler.builders import make_node, make_pg, make_pod, make_priority_class, make_queue
from tests.scheduler.dra_builders import DRIVER, gpus, make_claim, make_class, request
from tests.scheduler.evict_harness import PREEMPT_CONF
from tests.scheduler.evict_harness import Cluster as EvictCluster
from volcano_py.kube.kinds import object_key
from volcano_py.kube.store import EventType, Listing, Store
from volcano_py.scheduler.core import EVERY_VOLCANO_NAME_CONF, SchedulerConf, load_conf, run_session
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.nodetable import NodeTable
from volcano_py.scheduler.framework.podgroup_status import podgroup_status
from volcano_py.scheduler.framework.snapshot import Records, Snapshot
from volcano_py.scheduler.runtime.shown_pods import ShownPods

NOW = "2026-01-01T01:00:00Z"
NODES, PODS, GROUPS = 4, 12, 4
KINDS = ("node", "pod", "podgroup", "queue")

Obj = dict[str, Any]


def _node(i: int, variant: int) -> Obj:
    builder = make_node(f"n{i}", cpu=str(2 + 2 * (variant % 3)), gpu=2 if variant % 4 else None)
    if variant % 5 == 1:
        builder = builder.taint("dedicated", "x")
    if variant % 7 == 2:
        builder = builder.cordon()
    node = builder.obj()
    node["metadata"].setdefault("labels", {})["rev"] = str(variant % 4)
    return node


def _pod(i: int, variant: int, groups: int = GROUPS) -> Obj:
    builder = make_pod(f"p{i}").req(cpu=str(1 + variant % 2), gpu=1 if variant % 4 == 3 else None)
    group = variant // 4 % (groups + 1)
    if group < groups:
        builder = builder.group(f"g{group}")
    where = variant // 20 % 5
    if where == 1:
        builder = builder.running(f"n{variant % NODES}")
    elif where == 2:
        builder = builder.running(f"n{variant % NODES}").terminating()
    elif where == 3:
        builder = builder.node(f"n{(variant + 1) % NODES}").phase("Succeeded")
    elif where == 4:
        builder = builder.node(f"n{variant % NODES}")  # bound, not started
    if variant // 100 % 4 == 1:
        builder = builder.scheduler("default-scheduler")
    if variant % 7 == 3:
        builder = builder.priority(1000)  # above the others: preempt may evict for it
    if variant % 9 == 4:
        term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}
        builder = builder.labels(app="a").affinity(
            {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        )
    pod = builder.obj()
    # Sometimes the pod is made again under its name: a new uid.
    pod["metadata"]["uid"] = f"uid-p{i}" + ("-again" if variant % 11 == 5 else "")
    return pod


def _podgroup(i: int, variant: int) -> Obj:
    phase = ("Pending", "Inqueue", "Running")[variant % 3]
    builder = make_pg(f"g{i}", 1 + variant // 3 % 3, phase=phase)
    if variant // 9 % 3 == 1:
        builder = builder.queue("q1")
    elif variant // 9 % 3 == 2:
        builder = builder.queue("missing")
    if variant // 27 % 2:
        builder = builder.priority_class("high")  # preempt may evict others' pods for it
    return builder.obj()


def _queue(variant: int) -> Obj:
    builder = make_queue("q1", weight=1 + variant % 3)
    if variant // 3 % 3 == 1:
        # A guarantee held back from every other queue (the schedulingaction Guarantee specs' setting):
        # the per-queue sums the kept views carry must give what a fresh build gives.
        builder = builder.guarantee(cpu=str(2 + variant % 2), memory="2Gi")
    elif variant // 3 % 3 == 2:
        builder = builder.capability(cpu="3")
    return builder.obj()


def _hidden(pod: Obj) -> Obj:
    return {**pod, "spec": {**pod.get("spec", {}), "schedulerName": ""}}


class Cluster:
    def __init__(self, pods: int = PODS, groups: int = GROUPS, *, shown: int = 0) -> None:
        """``shown``: the pods as the agent scheduler's cache lists them (``ShownPods``: kept in arrival
        order, some shown otherwise, another lot every ``shown`` listings, and each listing saying how it
        differs from the one before)."""
        # Enough PodGroups (``wide``) and one changed PodGroup is replaced in place in the views.
        self.pods, self.groups = pods, groups
        self.stores: dict[str, dict[str, Obj]] = {kind: {} for kind in KINDS}
        self.stores["queue"]["default"] = make_queue("default").obj()
        # The nodes as the scheduler's cache hands them over: an informer's store, whose listings say which
        # nodes changed since the one before, so the kept views catch up by those alone.
        self.node_store = Store()
        self.shown = ShownPods(lambda pod: pod) if shown else None
        self.shown_every = shown
        self.pod_store = Store()
        self.listings = 0
        self._patches: dict[str, tuple[Obj, Obj]] = {}

    def node_listing(self) -> Listing:
        store, held = self.node_store, {object_key(obj): obj for obj in self.stores["node"].values()}
        for key in [key for key in tuple(store.keys()) if key not in held]:
            gone = store.get(key)
            assert gone is not None
            store.apply(EventType.DELETED, gone)
        for key, obj in held.items():
            if store.get(key) is not obj:
                store.apply(EventType.MODIFIED if key in store else EventType.ADDED, obj)
        return store.shared_values()

    def pod_listing(self) -> list[Obj]:
        """The pods as ``ShownPods`` lists them, fed the deltas an informer would hand it; every third pod
        (another third every ``shown_every`` listings) shown as another scheduler's, the same view while
        its pod is the same (as the promises keep theirs). Toggled every listing, a third of the pods
        change each time: the views then number every pod afresh while moving the changed ones."""
        shown = self.shown
        assert shown is not None
        store, held = self.pod_store, {object_key(obj): obj for obj in self.stores["pod"].values()}
        for key in [key for key in tuple(store.keys()) if key not in held]:
            gone = store.get(key)
            assert gone is not None
            delta = store.apply(EventType.DELETED, gone)
            assert delta is not None
            shown.observe(delta)
        for key, obj in held.items():
            if store.get(key) is not obj:
                delta = store.apply(EventType.MODIFIED if key in store else EventType.ADDED, obj)
                if delta is not None:
                    shown.observe(delta)
        self.listings += 1
        patch: dict[str, Obj] = {}
        for i, (key, obj) in enumerate(held.items()):
            if i % 3 == self.listings // self.shown_every % 3:
                kept = self._patches.get(key)
                if kept is None or kept[0] is not obj:
                    kept = self._patches[key] = (obj, _hidden(obj))
                patch[key] = kept[1]
        return shown.listing(patch)

    def apply(self, kind: str, index: int, variant: int | None) -> None:
        if kind == "relist":
            # A relist may hand objects over in another order, the same dicts at other places.
            for name in ("pod", "podgroup"):
                held = list(self.stores[name].items())
                cut = index % (len(held) or 1)
                self.stores[name] = dict(held[cut:][::-1] + held[:cut])
            return
        if kind == "echo":
            return  # the session's PodGroup statuses come back (``echo``)
        if kind == "advance":
            self._advance(index)
            return
        if kind == "heartbeat":
            # A node's kubelet reports in: a new version that says nothing new.
            key = f"node-{index % NODES}"
            held = self.stores["node"].get(key)
            if held is not None:
                meta = {**held["metadata"], "resourceVersion": str(index)}
                ready = {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": f"2026-01-01T00:00:{index % 60:02}Z",
                }
                status = {**(held.get("status") or {}), "conditions": [ready]}
                self.stores["node"][key] = {**held, "metadata": meta, "status": status}
            return
        store = self.stores[kind]
        index %= {"node": NODES, "pod": self.pods, "podgroup": self.groups, "queue": 1}[kind]
        if variant is None:
            store.pop(f"{kind}-{index}", None)
            return
        if kind == "node":
            obj = _node(index, variant)
        elif kind == "pod":
            obj = _pod(index, variant, self.groups)
        elif kind == "podgroup":
            obj = _podgroup(index, variant)
        else:
            obj = _queue(variant)
        store[f"{kind}-{index}"] = obj

    def _advance(self, index: int) -> None:
        """The pod one step further along its life, as the watch shows it and nothing else changed: bound
        to a node, bound again (the API server's PodScheduled condition), started, then ended or
        terminating. Its task keeps its place on its node and in its job while only that moves."""
        key = f"pod-{index % self.pods}"
        held = self.stores["pod"].get(key)
        if held is None:
            return
        version = int(held["metadata"].get("resourceVersion", 0)) + 1
        meta = {**held["metadata"], "resourceVersion": str(version)}
        spec, status = held.get("spec") or {}, held.get("status") or {}
        phase, scheduled = status.get("phase"), bool(status.get("conditions"))
        if meta.get("deletionTimestamp") or phase in ("Succeeded", "Failed"):
            return
        if not spec.get("nodeName"):
            spec = {**spec, "nodeName": f"n{index % NODES}"}
        elif phase == "Pending" and not scheduled:
            status = {**status, "conditions": [{"type": "PodScheduled", "status": "True"}]}
        elif phase == "Pending":
            status = {**status, "phase": "Running"}
        else:
            status = {**status, "phase": ("Succeeded", "Failed")[index % 2]}
        self.stores["pod"][key] = {**held, "metadata": meta, "spec": spec, "status": status}

    def echo(self, result: SessionResult) -> None:
        """The PodGroup statuses a session wrote, back through the watch: jobs then settle, as in a live
        cluster, and later sessions over the kept views take the steady ones from their per-queue sums."""
        updates = {(u.namespace, u.name): u for u in result.podgroup_updates}
        store = self.stores["podgroup"]
        for key, obj in list(store.items()):
            meta = obj["metadata"]
            update = updates.get((meta.get("namespace", "default"), meta["name"]))
            if update is not None:
                store[key] = {**obj, "status": podgroup_status(update, obj.get("status"))}

    def objects(self) -> dict[str, list[Obj]]:
        return {
            "nodes": self.node_listing(),
            "pods": self.pod_listing() if self.shown is not None else list(self.stores["pod"].values()),
            "podgroups": list(self.stores["podgroup"].values()),
            "queues": list(self.stores["queue"].values()),
            "priority_classes": [make_priority_class("high", 1000)],
        }


def _task(task: Any) -> tuple[Any, ...]:
    return (task.name, task.status, task.node_name, task.job_id, task.class_key, task.klass)


def _read(snapshot: Snapshot) -> dict[str, Any]:
    """What a session reads of a snapshot, in forms that compare by value, orders included: a session's
    choice between equals (victims of one priority and age, say) goes by them."""
    nodes = [
        (
            n.name,
            n.allocatable,
            dict(n.labels),
            n.taints,
            n.unschedulable,
            n.ready,
            [_task(t) for t in n.tasks.values()],
            None if n.gpus is None else {i: dict(c.holders) for i, c in n.gpus.cards.items()},
        )
        for n in snapshot.nodes
    ]
    jobs = [
        (
            uid,
            j.queue,
            j.min_available,
            j.phase,
            j.shadow,
            j.priority,
            [_task(t) for t in j.tasks.values()],
            {s: list(b) for s, b in j.by_status.items() if b},
            j.ready_task_num,
            j.gated_task_num,
            j.allocated,
            j.podgroup is not None and id(j.podgroup),
        )
        for uid, j in snapshot.jobs.items()
    ]
    queues = {name: (q.weight, q.state, q.allocated_status) for name, q in snapshot.queues.items()}
    orphans = [(o.task.name, o.reason) for o in snapshot.orphans]
    affine = sorted(t.name for t in snapshot.affine_tasks())
    # What the builder gathered is what is on the nodes.
    assert affine == sorted(t.name for n in snapshot.nodes for t in n.tasks.values() if t.affinity)
    return {"nodes": nodes, "jobs": jobs, "queues": queues, "orphans": orphans, "affine": affine}


def _same_table(snapshot: Snapshot) -> None:
    kept = snapshot.table
    assert kept is not None
    scratch = NodeTable(snapshot.nodes)
    assert kept.names == scratch.names and kept.node_names == scratch.node_names
    for name in ("allocatable", "used", "releasing", "pipelined", "free"):
        assert np.array_equal(getattr(kept, name), getattr(scratch, name)), name


def _decisions(result: SessionResult) -> tuple[Any, ...]:
    return (
        sorted((b.name, b.node) for b in result.binds),
        sorted((e.name, e.reason) for e in result.evictions),
        sorted(map(repr, result.pipelined)),
        sorted((u.name, u.phase, u.running, u.succeeded, u.failed) for u in result.podgroup_updates),
        sorted((e.job, e.reason, e.message) for e in result.explanations.values()),
        [(q.name, q.allocated, q.deserved, q.pending_pods, q.request) for q in result.queue_updates],
    )


# Pods change most, and sessions are what could leak into the kept views: both are drawn more often.
_KIND = st.sampled_from(
    (*KINDS, "pod", "pod", "session", "echo", "echo", "relist", "heartbeat", "advance", "advance")
)
_EVENT = st.tuples(_KIND, st.integers(0, PODS - 1), st.none() | st.integers(0, 399))


def _step(
    cluster: Cluster, records: Records, event: tuple[str, int, int | None], conf: SchedulerConf | None = None
) -> int:
    """Apply one event, build both ways and compare; a session runs over both. Returns the pods it bound
    or evicted."""
    kind, index, variant = event
    if kind != "session":
        cluster.apply(kind, index, variant)
    objects = cluster.objects()
    kept = Snapshot.build(**objects, records=records)  # type: ignore[arg-type]
    fresh = Snapshot.build(**{**objects, "pods": list(objects["pods"])})  # type: ignore[arg-type]
    assert _read(kept) == _read(fresh)
    _same_table(kept)
    if kind not in ("session", "echo"):
        return 0
    steady = kept.steady
    assert steady is not None
    if steady.conf is (conf or CONF):
        STEADY_SKIPPED.append(len(steady.jobs))
    result = run_session(kept, conf or CONF, NOW)
    assert _decisions(result) == _decisions(run_session(fresh, conf or CONF, NOW))
    if kind == "echo":
        cluster.echo(result)
    return len(result.binds) + len(result.evictions)


CONF = load_conf(None)
# How many steady jobs each session over kept views took from the per-queue sums instead of walking them.
STEADY_SKIPPED: list[int] = []


@settings(max_examples=100, deadline=None)
@given(st.lists(_EVENT, min_size=1, max_size=60))
def test_kept_snapshots_equal_fresh_ones_after_any_changes(events: list[tuple[str, int, int | None]]) -> None:
    cluster, records = Cluster(), Records()
    for event in events:
        _step(cluster, records, event)


@pytest.mark.parametrize(
    ("seed", "conf_text", "wide"),
    [
        *((seed, None, False) for seed in range(4)),
        *((seed, EVERY_VOLCANO_NAME_CONF, False) for seed in range(2)),
        *((seed, None, True) for seed in (1, 2)),  # seeds whose sessions place pods
        *((seed, None, 5) for seed in (1, 2, 3)),
        *((seed, None, 1) for seed in (1, 2, 3)),
    ],
)
def test_kept_snapshots_equal_fresh_ones_through_a_long_churn(
    seed: int, conf_text: str | None, wide: bool | int
) -> None:
    """Long runs, where sessions bind pods that later change again: the leaks a short example misses.
    With every action and plugin of Volcano's registries too (preempt, reclaim, shuffle evict); ``wide``:
    with PodGroups enough that a few changed ones are replaced in place; a number: so, and the pods listed
    as the agent scheduler's cache lists them, some shown otherwise, another lot every that many listings
    (``Cluster.pod_listing``)."""
    rng = random.Random(seed)
    kinds = (*KINDS, "pod", "pod", "session", "echo", "echo", "relist", "heartbeat", "advance", "advance")
    shown = 0 if isinstance(wide, bool) else wide
    cluster = Cluster(pods=40, groups=24, shown=shown) if wide else Cluster()
    records = Records()
    conf = load_conf(conf_text)
    decided = 0
    STEADY_SKIPPED.clear()
    for _ in range(250):
        event = (rng.choice(kinds), rng.randrange(cluster.pods), rng.choice([None, *range(400)]))
        decided += _step(cluster, records, event, conf)
    assert decided > 0  # the sessions placed pods, so their undoing was exercised
    if shown != 1:  # a third of the pods changing every listing leaves no job steady
        assert sum(STEADY_SKIPPED) > 0  # and sessions took steady jobs from the sums


def test_a_session_over_a_snapshot_the_records_moved_past_is_refused() -> None:
    """The next build from the same records takes the views on; a session over the older snapshot could
    change them unseen, so it is refused with what to do instead."""
    cluster, records = Cluster(), Records()
    cluster.apply("node", 0, 0)
    older = Snapshot.build(**cluster.objects(), records=records)  # type: ignore[arg-type]
    Snapshot.build(**cluster.objects(), records=records)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a newer snapshot was built from the same records"):
        run_session(older, CONF, NOW)


def test_a_pod_bound_by_a_session_is_pending_again_in_the_next_build_until_the_watch_says_so() -> None:
    cluster, records = Cluster(), Records()
    cluster.apply("node", 0, 3)  # 2 CPUs, no taint
    cluster.apply("podgroup", 0, 1)  # Inqueue, minMember 1, default queue
    cluster.apply("pod", 0, 0)  # pending, in g0
    first = Snapshot.build(**cluster.objects(), records=records)  # type: ignore[arg-type]
    assert [(b.name, b.node) for b in run_session(first, CONF, NOW).binds] == [("p0", "n0")]
    again = Snapshot.build(**cluster.objects(), records=records)  # type: ignore[arg-type]
    (task,) = again.jobs["default/g0"].tasks.values()
    assert (task.status.value, task.node_name, again.nodes[0].tasks) == ("Pending", "", {})
    assert again.table is not None and int(again.table.used[0].sum()) == 0


def test_a_pending_pod_with_claims_is_classed_by_the_claims_as_they_are_now() -> None:
    """Its class carries its claims' state, which is not in the pod: a claim allocated since the last build
    changes the class of a pod that did not change."""
    pod = make_pod("p").req(cpu="1").group("pg").claim_template("gpu", "tpl", claim="p-gpu").obj()
    objects: dict[str, Any] = {
        "nodes": [make_node("n1").obj()],
        "pods": [pod],
        "podgroups": [make_pg("pg").obj()],
        "device_classes": [make_class()],
        "resource_slices": [gpus("n1", 2)],
    }
    unallocated = [make_claim("p-gpu", [request()], owner_pod="p")]
    allocated = [
        make_claim("p-gpu", [request()], owner_pod="p", allocated=[(DRIVER, "n1", "gpu-0")], node="n1")
    ]
    records = Records()
    keys = []
    for claims in (unallocated, allocated, unallocated):
        kept = Snapshot.build(**objects, resource_claims=claims, records=records)
        fresh = Snapshot.build(**objects, resource_claims=claims)
        assert _read(kept) == _read(fresh)
        keys.append(next(iter(kept.jobs["default/pg"].tasks.values())).class_key)
    assert keys[0] != keys[1] and keys[0] == keys[2]
    assert _decisions(run_session(kept, CONF, NOW)) == _decisions(run_session(fresh, CONF, NOW))


def test_pods_a_session_evicted_and_nominated_are_as_read_in_the_next_build() -> None:
    """Preempt marks victims releasing and pipelines the preemptor onto their room; until the watch shows
    the evictions, the next build has the victims running and the preemptor pending, as a fresh one has."""
    cluster = (
        EvictCluster()
        .nodes_named("n", 2, cpu=4)
        .job("low", priority="low", cpu="2", running_on=["n0", "n0", "n1", "n1"], min_member=1)
        .job("hi", priority="high", cpu="2", pending=2)
    )
    objects: dict[str, Any] = {
        "nodes": cluster.nodes,
        "pods": cluster.pods,
        "podgroups": cluster.podgroups,
        "queues": cluster.queues,
        "priority_classes": cluster.priority_classes,
    }
    conf, records = load_conf(PREEMPT_CONF), Records()
    for _ in range(3):
        kept = Snapshot.build(**objects, records=records)
        fresh = Snapshot.build(**objects)
        assert _read(kept) == _read(fresh)
        _same_table(kept)
        result = run_session(kept, conf, NOW)
        assert _decisions(result) == _decisions(run_session(fresh, conf, NOW))
        assert len(result.evictions) == 2 and len(result.pipelined) == 2


def test_a_pending_pod_with_claims_seen_again_and_then_gone_leaves_nothing_behind() -> None:
    """A pod with claims is re-classed every build by its claims; a new version of it (only its resource
    version moved) and then its deletion leave the kept views as a fresh build."""
    pod = make_pod("p").req(cpu="1").group("pg").claim_template("gpu", "tpl", claim="p-gpu").obj()
    again = {**pod, "metadata": {**pod["metadata"], "resourceVersion": "7"}}
    other = make_pod("q").req(cpu="1").group("pg").obj()
    base: dict[str, Any] = {
        "nodes": [make_node("n1").obj()],
        "podgroups": [make_pg("pg", 1).obj()],
        "device_classes": [make_class()],
        "resource_slices": [gpus("n1", 2)],
        "resource_claims": [make_claim("p-gpu", [request()], owner_pod="p")],
    }
    records = Records()
    for pods in ([pod, other], [again, other], [other], [other]):
        kept = Snapshot.build(**base, pods=pods, records=records)
        fresh = Snapshot.build(**base, pods=pods)
        assert _read(kept) == _read(fresh)
    assert [t.name for t in kept.jobs["default/pg"].tasks.values()] == ["q"]
