"""The agent scheduler's queue, binding versions, pod reading and conf: table-driven, no server."""

from __future__ import annotations

import pytest

from volcano_py.scheduler.agent import pods
from volcano_py.scheduler.agent.conf import AGENT_DEFAULT_CONF, load_agent_conf
from volcano_py.scheduler.agent.queue import Place, SchedulingQueue
from volcano_py.scheduler.agent.races import BindVersions
from volcano_py.scheduler.framework.arguments import ConfError


def test_higher_priority_first_then_first_come() -> None:
    queue = SchedulingQueue()
    for key, priority in (("a", 0), ("b", 10), ("c", 0), ("d", 10)):
        queue.add(key, priority)
    assert queue.pop(10, now=0.0) == ["b", "d", "a", "c"]
    assert all(queue.place_of(k) is Place.TAKEN for k in "abcd")


def test_pop_takes_at_most_the_limit_and_leaves_the_rest_active() -> None:
    queue = SchedulingQueue()
    for key in "abc":
        queue.add(key)
    assert queue.pop(2, now=0.0) == ["a", "b"]
    assert queue.has_active()
    assert queue.pop(2, now=0.0) == ["c"]
    assert not queue.has_active()


def test_a_pod_that_lost_a_race_goes_ahead_of_everyone() -> None:
    queue = SchedulingQueue()
    queue.add("old", 100)
    queue.add("loser", 0)
    assert queue.pop(1, now=0.0) == ["old"]
    assert queue.pop(1, now=0.0) == ["loser"]
    queue.add("new", 1000)
    queue.conflicted("loser")
    assert queue.pop(1, now=0.0) == ["loser"]
    assert queue.pop(1, now=0.0) == ["new"]


def test_unschedulable_waits_for_an_event_then_its_backoff() -> None:
    queue = SchedulingQueue(initial_backoff=1.0, max_backoff=10.0)
    queue.add("p")
    queue.pop(1, now=0.0)
    queue.unschedulable("p", now=0.0)
    assert queue.pop(1, now=100.0) == []  # nothing woke it
    queue.unschedulable("p", now=100.0)  # two failed attempts: 2 s backoff
    assert queue.wake(now=100.5) == 1
    assert queue.place_of("p") is Place.BACKOFF
    assert queue.pop(1, now=101.0) == []
    assert queue.next_ready() == pytest.approx(102.0)
    assert queue.pop(1, now=102.0) == ["p"]


def test_an_event_after_the_backoff_makes_it_active_at_once() -> None:
    queue = SchedulingQueue(initial_backoff=1.0)
    queue.add("p")
    queue.pop(1, now=0.0)
    queue.unschedulable("p", now=0.0)
    queue.wake(now=5.0)
    assert queue.place_of("p") is Place.ACTIVE
    assert queue.pop(1, now=5.0) == ["p"]


def test_backoff_doubles_up_to_its_cap() -> None:
    queue = SchedulingQueue(initial_backoff=1.0, max_backoff=10.0)
    assert [queue.backoff_of(n) for n in range(7)] == [0.0, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_one_no_event_wakes_is_tried_again_after_the_limit() -> None:
    queue = SchedulingQueue(initial_backoff=1.0, max_unschedulable=300.0)
    queue.add("p")
    queue.pop(1, now=0.0)
    queue.unschedulable("p", now=0.0)
    assert queue.expire(now=299.0) == 0
    assert queue.expire(now=300.0) == 1
    assert queue.pop(1, now=301.0) == ["p"]


def test_removed_and_scheduled_pods_leave_no_trace() -> None:
    queue = SchedulingQueue()
    queue.add("a")
    queue.add("b")
    queue.remove("a")
    [b] = queue.pop(5, now=0.0)
    queue.scheduled(b)
    assert len(queue) == 0
    assert queue.pop(5, now=0.0) == []
    queue.unschedulable("gone", now=0.0)  # an answer for a pod deleted meanwhile is ignored
    queue.conflicted("gone")
    assert len(queue) == 0


def test_a_failed_bind_backs_off_before_the_next_try() -> None:
    queue = SchedulingQueue(initial_backoff=1.0)
    queue.add("p")
    queue.pop(1, now=0.0)
    queue.scheduled("p")
    queue.add("p")  # its bind was refused: the pod waits again
    queue.retry("p", now=10.0)
    assert queue.pop(1, now=10.5) == []
    assert queue.pop(1, now=11.0) == ["p"]


def test_a_placement_on_a_node_a_pod_landed_on_since_the_view_is_refused() -> None:
    versions = BindVersions()
    versions.landed("n1")
    view = versions.mark()
    assert not versions.raced("n1", view)  # landed before the view: the view has it
    versions.landed("n2")
    assert versions.raced("n2", view)
    assert not versions.raced("n3", view)
    versions.forget("n2")
    assert not versions.raced("n2", view)


def _pod(**spec: object) -> dict[str, object]:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"schedulerName": "agent-scheduler", **spec},
        "status": {"phase": "Pending"},
    }


@pytest.mark.parametrize(
    ("pod", "waits"),
    [
        (_pod(), True),
        (_pod(schedulerName="volcano"), False),
        (_pod(nodeName="n1"), False),
        (_pod(schedulingGates=[{"name": "g"}]), False),
        ({**_pod(), "metadata": {"name": "p", "deletionTimestamp": "2026-01-01T00:00:00Z"}}, False),
        ({**_pod(), "status": {"phase": "Failed"}}, False),
        (None, False),
    ],
)
def test_which_pods_wait_for_the_agent_scheduler(pod: dict[str, object] | None, waits: bool) -> None:
    assert pods.waits(pod, "agent-scheduler") is waits


def test_landing_freeing_and_node_changes() -> None:
    pending, bound = _pod(), _pod(nodeName="n1")
    assert pods.landed(pending, bound) == "n1"
    assert pods.landed(bound, bound) == ""
    assert pods.frees_room(bound, None)
    assert pods.frees_room(bound, {**bound, "status": {"phase": "Succeeded"}})
    assert not pods.frees_room(pending, None)
    node = {"metadata": {"name": "n1", "labels": {"a": "1"}}, "status": {"allocatable": {"cpu": "4"}}}
    heartbeat = {**node, "status": {**node["status"], "conditions": []}}
    assert not pods.node_changed(node, heartbeat)
    assert pods.node_changed(node, {**node, "metadata": {"name": "n1", "labels": {"a": "2"}}})
    assert pods.node_changed(None, node)
    hidden = pods.hidden(pending)
    assert not pods.waits(hidden, "agent-scheduler") and pods.waits(pending, "agent-scheduler")


def test_the_agent_conf_is_volcanos_agent_conf_with_queue_accounting() -> None:
    conf = load_agent_conf(None)
    assert conf.actions == ("allocate",)
    assert conf.plugin_names() == ["predicates", "nodeorder", "capacity"]
    assert load_agent_conf(AGENT_DEFAULT_CONF) == conf
    sampled = load_agent_conf(None, percentage_of_nodes=20, min_nodes=10)
    assert sampled.configurations["allocate"] == {"percentageOfNodesToFind": 20, "minNodesToFind": 10}


def test_the_agent_conf_refuses_what_the_agent_scheduler_cannot_run() -> None:
    with pytest.raises(ConfError, match=r"failed to find Action  backfill.*known: allocate"):
        load_agent_conf('actions: "allocate, backfill"\ntiers:\n- plugins:\n  - name: predicates\n')
    with pytest.raises(ConfError, match=r"unknown plugin 'gang'"):
        load_agent_conf('actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n')
    with pytest.raises(ConfError, match="minNodesToFind"):
        load_agent_conf(None, min_nodes=0)
