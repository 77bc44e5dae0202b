"""Which warnings a cycle hands the runtime, and how long each must have held before it is told."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.scheduler.builders import make_node, make_pg, make_pod, make_queue
from volcano_py.scheduler.core import ClusterObjects
from volcano_py.scheduler.framework.retell import FORMING_GANG_SECONDS
from volcano_py.scheduler.runtime.cycle import CycleOutcome, default_core

NOW = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)


def cycle(pods: list[dict], podgroups: list[dict]) -> CycleOutcome:
    core = default_core(("volcano",))
    state = ClusterObjects(
        nodes=[make_node("n0", cpu="8").obj()], pods=pods, podgroups=podgroups,
        queues=[make_queue("root").obj(), make_queue("default").obj()], priority_classes=[], hypernodes=[],
        generation=0,
    )  # fmt: skip
    return core.run(state, core.load_conf(None), NOW)


def told(pods: list[dict], podgroups: list[dict]) -> dict[tuple[str, str], float]:
    return {(w.obj["metadata"]["name"], w.reason): w.after for w in cycle(pods, podgroups).warnings}


def test_a_gang_short_of_pods_is_told_on_its_podgroup_and_its_pods_only_if_it_stays_short() -> None:
    pods = [make_pod(f"forming-{i}").req(cpu="1").group("forming").obj() for i in range(2)]
    warnings = told(pods, [make_pg("forming", min_member=4, phase="Inqueue").obj()])
    assert warnings == {
        ("forming", "Unschedulable"): FORMING_GANG_SECONDS,
        ("forming-0", "FailedScheduling"): FORMING_GANG_SECONDS,
        ("forming-1", "FailedScheduling"): FORMING_GANG_SECONDS,
    }


def test_a_pod_that_does_not_fit_is_told_at_once() -> None:
    pods = [make_pod("huge").req(cpu="64").group("big").obj()]
    warnings = told(pods, [make_pg("big", min_member=1, phase="Inqueue").obj()])
    assert warnings[("huge", "FailedScheduling")] == 0.0


def test_a_gang_waiting_for_its_gated_pods_is_told_on_its_podgroup_and_its_free_pods_only() -> None:
    # The gated pod carries the API server's SchedulingGated condition; Volcano writes nothing on it.
    pods = [
        make_pod("free").req(cpu="1").group("gated").obj(),
        make_pod("held").req(cpu="1").group("gated").gates("example.com/g1").obj(),
    ]
    warnings = told(pods, [make_pg("gated", min_member=2, phase="Inqueue").obj()])
    assert warnings == {("gated", "Unschedulable"): 0.0, ("free", "FailedScheduling"): 0.0}


def test_a_gang_of_gated_pods_only_is_told_on_its_podgroup() -> None:
    pods = [make_pod(f"held-{i}").req(cpu="1").group("gated").gates("example.com/g1").obj() for i in range(2)]
    warnings = told(pods, [make_pg("gated", min_member=2, phase="Inqueue").obj()])
    assert warnings == {("gated", "Unschedulable"): 0.0}


def test_a_podgroup_enqueue_refuses_is_told_at_once_though_it_has_no_pods() -> None:
    # Volcano's e2e (WaitJobUnschedulable) looks for this Event on the PodGroup of a Job left Pending.
    big = make_pg("big", min_member=2, phase="Pending").min_res(cpu="64").obj()
    assert told([], [big]) == {("big", "Unschedulable"): 0.0}


def test_a_finished_podgroup_whose_pods_are_gone_is_not_told() -> None:
    done = make_pg("done", min_member=2, phase="Completed").obj()
    assert told([], [done]) == {}


def test_a_cycle_says_whether_it_left_anything_waiting() -> None:
    # What holds the next cycle back while a backlog's binds go out (``Pacing``): only a cycle after which
    # nothing of ours waits.
    placed = cycle([make_pod("a").req(cpu="1").group("a").obj()], [make_pg("a", min_member=1).obj()])
    assert len(placed.result.binds) == 1 and not placed.waiting
    admitted_and_placed = [make_pg("p", min_member=1, phase="Pending").obj()]
    assert not cycle([make_pod("p").req(cpu="1").group("p").obj()], admitted_and_placed).waiting
    too_big = make_pod("huge").req(cpu="64").group("big").obj()
    assert cycle([too_big], [make_pg("big", min_member=1).obj()]).waiting
    refused = make_pg("big", min_member=2, phase="Pending").min_res(cpu="64").obj()
    assert cycle([], [refused]).waiting  # enqueue left it Pending
    assert cycle([make_pod("lost").req(cpu="1").group("missing").obj()], []).waiting  # no PodGroup yet
    forming = [make_pod(f"f-{i}").req(cpu="1").group("f").obj() for i in range(2)]
    assert cycle(forming, [make_pg("f", min_member=4).obj()]).waiting
