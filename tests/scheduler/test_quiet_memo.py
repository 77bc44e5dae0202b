"""The core's quiet memo: a cluster where nothing waits is not re-scheduled while it means the same, and any
change that could matter gets a whole session whose answer is what a fresh core gives."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod, make_queue
from volcano_py.scheduler.core import ClusterObjects
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.podgroup_status import podgroup_status
from volcano_py.scheduler.runtime.cycle import CycleOutcome, DefaultCore, default_core
from volcano_py.scheduler.runtime.quiet import FORMING_HOLD_SECONDS

Obj = dict[str, Any]
NOW = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)


class Cluster:
    """A small steady cluster, its objects replaced (never changed in place), as the informers do."""

    def __init__(self) -> None:
        self.nodes = [make_node(f"n{i}", cpu="8").obj() for i in range(3)]
        self.podgroups = [make_pg(f"pg{j}", min_member=2, phase="Running").obj() for j in range(2)]
        self.pods = [
            make_pod(f"pg{j}-{i}").req(cpu="2").group(f"pg{j}").running(f"n{(2 * j + i) % 3}").obj()
            for j in range(2)
            for i in range(2)
        ]
        self.queues = [make_queue("root").obj(), make_queue("default").obj()]

    def state(self) -> ClusterObjects:
        return ClusterObjects(nodes=list(self.nodes), pods=list(self.pods), podgroups=list(self.podgroups),
                            queues=list(self.queues), priority_classes=[], hypernodes=[],
                            generation=0)  # fmt: skip

    def echo(self, outcome: CycleOutcome) -> None:
        """The binder's PodGroup status writes, back through the watch."""
        updates = {u.name: u for u in outcome.result.podgroup_updates}
        self.podgroups = [
            {**pg, "status": podgroup_status(updates[pg["metadata"]["name"]], pg.get("status"))}
            if pg["metadata"]["name"] in updates
            else pg
            for pg in self.podgroups
        ]

    def replace_pod(self, index: int, change: Callable[[Obj], None]) -> None:
        pod = copy.deepcopy(self.pods[index])
        change(pod)
        self.pods[index] = pod

    def replace_node(self, index: int, change: Callable[[Obj], None]) -> None:
        node = copy.deepcopy(self.nodes[index])
        change(node)
        self.nodes[index] = node


def settled(cluster: Cluster) -> tuple[DefaultCore, Any]:
    """A core that has run until the cluster stopped changing from its own writes."""
    core = default_core(("volcano",))
    conf = core.load_conf(None)
    for _ in range(3):
        outcome = core.run(cluster.state(), conf, NOW)
        if not outcome.result.podgroup_updates:
            return core, conf
        cluster.echo(outcome)
    raise AssertionError("the cluster did not settle")


def decided(result: SessionResult) -> SessionResult:
    return replace(result, timings={})


def fresh_answer(cluster: Cluster) -> SessionResult:
    core = default_core(("volcano",))
    return decided(core.run(cluster.state(), core.load_conf(None), NOW).result)


def test_a_settled_cluster_is_recalled_with_the_queue_accounting_a_session_reports() -> None:
    cluster = Cluster()
    core, conf = settled(cluster)
    outcome = core.run(cluster.state(), conf, NOW)
    assert outcome.quiet
    assert decided(outcome.result) == fresh_answer(cluster)
    [default] = [q for q in outcome.result.queue_updates if q.name == "default"]
    assert default.allocated.get("cpu") == 8000  # 4 pods of 2 CPUs, in millicores
    assert outcome.result.timings == {}  # no action ran, so no action latency is reported


def _kubelet_report(pod: Obj) -> None:
    pod["metadata"]["resourceVersion"] = "42"
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:01:00Z"}
    pod["status"]["conditions"] = [ready]
    pod["status"]["containerStatuses"] = [{"name": "main", "ready": True, "restartCount": 0}]
    pod["status"]["podIP"] = "10.0.0.7"


def _heartbeat(node: Obj) -> None:
    node["metadata"]["resourceVersion"] = "43"
    ready = {"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-01T00:02:00Z"}
    node["status"]["conditions"] = [ready]


def test_a_new_version_that_only_reports_is_recalled() -> None:
    cluster = Cluster()
    core, conf = settled(cluster)
    cluster.replace_pod(1, _kubelet_report)
    cluster.replace_node(0, _heartbeat)
    outcome = core.run(cluster.state(), conf, NOW)
    assert outcome.quiet
    assert decided(outcome.result) == fresh_answer(cluster)
    assert core.run(cluster.state(), conf, NOW).quiet  # and the new versions are the ones kept


def _finish(pod: Obj) -> None:
    pod["status"]["phase"] = "Succeeded"


def _evicted(pod: Obj) -> None:
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:03:00Z"


def _not_ready(node: Obj) -> None:
    node["status"]["conditions"] = [{"type": "Ready", "status": "False"}]


def _shrunk(node: Obj) -> None:
    node["status"]["allocatable"]["cpu"] = "2"


def _relabelled(node: Obj) -> None:
    node["metadata"]["labels"]["zone"] = "b"


CHANGES: dict[str, Callable[[Cluster], None]] = {
    "a pod succeeds": lambda c: c.replace_pod(0, _finish),
    "a pod is terminating": lambda c: c.replace_pod(2, _evicted),
    "a pod is deleted": lambda c: c.pods.pop(3),
    "a pending pod arrives": lambda c: c.pods.append(make_pod("late").req(cpu="1").group("pg0").obj()),
    "a pod of no group arrives": lambda c: c.pods.append(make_pod("solo").req(cpu="1").obj()),
    "a PodGroup arrives": lambda c: c.podgroups.append(make_pg("new", phase="Pending").obj()),
    "a node is not ready": lambda c: c.replace_node(1, _not_ready),
    "a node shrinks": lambda c: c.replace_node(0, _shrunk),
    "a node is relabelled": lambda c: c.replace_node(2, _relabelled),
    "a node goes away": lambda c: c.nodes.pop(),
    "a node joins": lambda c: c.nodes.append(make_node("n9").obj()),
    "a queue's weight changes": lambda c: c.queues.__setitem__(1, make_queue("default", weight=5).obj()),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_a_change_that_can_matter_runs_a_session_with_a_fresh_cores_answer(change: str) -> None:
    cluster = Cluster()
    core, conf = settled(cluster)
    CHANGES[change](cluster)
    outcome = core.run(cluster.state(), conf, NOW)
    assert not outcome.quiet
    assert decided(outcome.result) == fresh_answer(cluster)


def test_a_new_pending_pod_is_placed_not_recalled() -> None:
    cluster = Cluster()
    core, conf = settled(cluster)
    cluster.pods.append(make_pod("late").req(cpu="1").group("pg0").obj())
    outcome = core.run(cluster.state(), conf, NOW)
    assert [(b.name, b.job) for b in outcome.result.binds] == [("late", "default/pg0")]


def test_a_reloaded_conf_runs_a_session() -> None:
    cluster = Cluster()
    core, _conf = settled(cluster)
    assert not core.run(cluster.state(), core.load_conf(None), NOW).quiet


def test_a_pod_that_cannot_be_placed_keeps_every_cycle_a_session() -> None:
    cluster = Cluster()
    core, conf = settled(cluster)
    cluster.pods.append(make_pod("huge").req(cpu="64").group("pg1").obj())
    for _ in range(2):
        outcome = core.run(cluster.state(), conf, NOW)
        assert not outcome.quiet
        told = [w.obj["metadata"]["name"] for w in outcome.warnings if w.reason == "FailedScheduling"]
        assert told == ["huge"]


def test_a_pending_podgroup_without_pods_keeps_every_cycle_a_session() -> None:
    cluster = Cluster()
    core, conf = settled(cluster)
    cluster.podgroups.append(make_pg("waiting", min_member=4, phase="Pending").min_res(cpu="64").obj())
    assert not core.run(cluster.state(), conf, NOW).quiet
    assert not core.run(cluster.state(), conf, NOW).quiet


# --- gangs being formed ------------------------------------------------------------------------------------


def forming_cluster(min_member: int = 4, created: int = 1) -> Cluster:
    """The steady cluster plus a gang whose pods are on their way: ``created`` of ``min_member`` exist."""
    cluster = Cluster()
    cluster.podgroups.append(make_pg("train", min_member=min_member, phase="Inqueue").obj())
    cluster.pods += [make_pod(f"train-{i}").req(cpu="1").group("train").obj() for i in range(created)]
    return cluster


def arrive(cluster: Cluster, *indexes: int, group: str = "train", scheduler: str = "volcano") -> None:
    for i in indexes:
        cluster.pods.append(make_pod(f"{group}-{i}").req(cpu="1").group(group).scheduler(scheduler).obj())


def outcome_at(core: DefaultCore, cluster: Cluster, conf: Any, seconds: float = 0.0) -> CycleOutcome:
    return core.run(cluster.state(), conf, NOW + timedelta(seconds=seconds))


def test_pods_that_leave_a_forming_gang_short_are_recalled_with_their_counts() -> None:
    cluster = forming_cluster()
    core, conf = settled(cluster)
    arrive(cluster, 1, 2)
    outcome = outcome_at(core, cluster, conf, 1)
    assert outcome.quiet
    fresh = default_core(("volcano",))
    truth = fresh.run(cluster.state(), fresh.load_conf(None), NOW)
    assert outcome.unscheduled_tasks == truth.unscheduled_tasks == {"default/train": 3}
    # A queue's deserved share (a gauge) may grow with what its gangs ask for: the next session reports it.
    assert [replace(q, deserved=None) for q in outcome.result.queue_updates] == [
        replace(q, deserved=None) for q in truth.result.queue_updates
    ]
    [default] = [q for q in outcome.result.queue_updates if q.name == "default"]
    assert (default.pending_pods, default.request.get("cpu")) == (3, 8000 + 3000)
    assert outcome.warnings == ()  # nothing new to tell: the next session tells the counts


def test_the_pod_that_completes_the_gang_runs_a_session_that_binds_it() -> None:
    cluster = forming_cluster()
    core, conf = settled(cluster)
    arrive(cluster, 1, 2)
    assert outcome_at(core, cluster, conf, 1).quiet
    arrive(cluster, 3)
    outcome = outcome_at(core, cluster, conf, 2)
    assert not outcome.quiet
    assert sorted(b.name for b in outcome.result.binds) == ["train-0", "train-1", "train-2", "train-3"]


FORMING_CHANGES: dict[str, Callable[[Cluster], None]] = {
    "a pod of a PodGroup not seen": lambda c: arrive(c, 0, group="other"),
    "a pod of another scheduler": lambda c: arrive(c, 1, scheduler="default-scheduler"),
    "a pod already bound": lambda c: c.pods.append(make_pod("train-1").group("train").node("n0").obj()),
    "a pod of no group": lambda c: c.pods.append(make_pod("solo").req(cpu="1").obj()),
    "a pod of the gang goes away": lambda c: c.pods.pop(),
    "a pod arrives and one goes away": lambda c: (c.pods.pop(), arrive(c, 1)),
    "a node joins": lambda c: c.nodes.append(make_node("n9").obj()),
}


@pytest.mark.parametrize("change", FORMING_CHANGES, ids=list(FORMING_CHANGES))
def test_anything_but_a_pod_joining_a_forming_gang_runs_a_session(change: str) -> None:
    cluster = forming_cluster()
    core, conf = settled(cluster)
    FORMING_CHANGES[change](cluster)
    outcome = outcome_at(core, cluster, conf)
    assert not outcome.quiet
    assert decided(outcome.result) == fresh_answer(cluster)


def test_a_forming_gangs_outcome_is_held_only_for_a_while() -> None:
    cluster = forming_cluster()
    core, conf = settled(cluster)
    arrive(cluster, 1)
    assert outcome_at(core, cluster, conf, FORMING_HOLD_SECONDS).quiet
    outcome = outcome_at(core, cluster, conf, FORMING_HOLD_SECONDS + 1)
    assert not outcome.quiet
    told = {w.obj["metadata"]["name"] for w in outcome.warnings if w.reason == "FailedScheduling"}
    assert told == {"train-0", "train-1"}


def test_a_gang_short_of_pods_before_enqueue_keeps_every_cycle_a_session() -> None:
    cluster = Cluster()
    cluster.podgroups.append(make_pg("train", min_member=4, phase="Pending").obj())
    arrive(cluster, 0)
    core = default_core(("volcano",))
    # A Pending PodGroup is what enqueue acts on, and the memo does not reason about enqueue. Without
    # enqueue a PodGroup stays Pending, so the rule holds there too.
    for c in (core.load_conf(None), core.load_conf(_conf("allocate, backfill", gang_first=True))):
        core.run(cluster.state(), c, NOW)
        arrive(cluster, len(cluster.pods))  # a fresh name each time
        assert not core.run(cluster.state(), c, NOW).quiet


def _conf(actions: str, *, gang_first: bool) -> str:
    plugins = ["gang", "predicates"] if gang_first else ["predicates", "gang"]
    listed = "".join(f"  - name: {name}\n" for name in plugins)
    return f'actions: "{actions}"\ntiers:\n- plugins:\n{listed}  - name: proportion\n'


def test_a_conf_that_validates_jobs_before_gang_keeps_every_cycle_a_session() -> None:
    cluster = forming_cluster()
    core = default_core(("volcano",))
    first = core.load_conf(_conf("enqueue, allocate", gang_first=False))
    for _ in range(3):
        cluster.echo(core.run(cluster.state(), first, NOW))
    arrive(cluster, 1)
    assert not core.run(cluster.state(), first, NOW).quiet
    later = core.load_conf(_conf("enqueue, allocate", gang_first=True))
    cluster.echo(core.run(cluster.state(), later, NOW))
    core.run(cluster.state(), later, NOW)
    arrive(cluster, 2)
    assert core.run(cluster.state(), later, NOW).quiet


SHUFFLE_CONF = """
actions: "allocate, shuffle"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: rescheduling, arguments: {interval: 1m}}]
"""


def test_a_conf_with_shuffle_runs_a_session_every_cycle_and_carries_its_timers() -> None:
    cluster = Cluster()
    core = default_core(("volcano",))
    conf = core.load_conf(SHUFFLE_CONF)
    assert core.needs_every_period(conf) and not core.needs_every_period(core.load_conf(None))
    for minute in range(3):
        outcome = core.run(cluster.state(), conf, NOW + timedelta(minutes=minute))
        cluster.echo(outcome)
        assert not outcome.quiet  # shuffle's plugins act on their own clock, with nothing waiting
    # rescheduling's interval started at the first session and ran again once a minute had passed.
    assert core.timers["rescheduling"] == (NOW + timedelta(minutes=2)).timestamp()
