"""The chaos suite's invariants on hand-made API readings: each one fires on the breach it names, and only."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from benchmarks.chaoslib import invariants as inv
from benchmarks.chaoslib.final import caught_up
from benchmarks.chaoslib.invariants import ApiState

NS = "w"


def pod(
    name: str,
    *,
    group: str | None = None,
    node: str | None = None,
    phase: str = "Pending",
    gpus: int = 1,
    job: tuple[str, str] | None = None,
    terminating: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": NS,
        "uid": f"u-{name}",
        "annotations": {},
        "labels": {},
    }
    if group:
        meta["annotations"]["scheduling.k8s.io/group-name"] = group
    if job:
        meta["labels"]["volcano.sh/job-name"] = job[0]
        meta["ownerReferences"] = [
            {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job[0], "uid": job[1]}
        ]
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}]
    }
    if node:
        spec["nodeName"] = node
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def podgroup(name: str, min_member: int, **status: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {"minMember": min_member, "queue": "default"},
        "status": status,
    }


def job(name: str, phase: str, min_available: int = 1) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": NS, "uid": f"j-{name}"},
        "spec": {"minAvailable": min_available},
        "status": {"state": {"phase": phase}},
    }


def node(name: str, gpus: int) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"allocatable": {"nvidia.com/gpu": str(gpus)}}}


def scheduled(pod_name: str, node_name: str) -> dict[str, Any]:
    return {
        "reason": "Scheduled",
        "message": f"Successfully assigned {NS}/{pod_name} to {node_name}",
        "involvedObject": {"kind": "Pod", "name": pod_name, "uid": f"u-{pod_name}"},
    }


@pytest.mark.parametrize(
    ("events", "pods", "found"),
    [
        pytest.param([scheduled("a", "n1")], [pod("a", node="n1")], [], id="once"),
        pytest.param(
            [scheduled("a", "n1"), scheduled("a", "n1")], [pod("a", node="n1")], [], id="same-twice"
        ),
        pytest.param(
            [scheduled("a", "n1"), scheduled("a", "n2")], [pod("a", node="n1")], ["w/a"], id="two-nodes"
        ),
        pytest.param([scheduled("a", "n1")], [pod("a", node="n2")], ["w/a"], id="runs-elsewhere"),
    ],
)
def test_double_binds(events: list[Any], pods: list[Any], found: list[str]) -> None:
    assert [v.subject for v in inv.double_binds(ApiState(pods=pods, events=events))] == found


def test_a_node_holding_more_gpus_than_it_has_counts_terminating_pods_but_not_finished_ones() -> None:
    nodes = [node("n1", 2)]
    fits = [pod("a", node="n1"), pod("b", node="n1", phase="Succeeded"), pod("c", node="n1", phase="Running")]
    assert inv.overcommitted_nodes(ApiState(pods=fits, nodes=nodes)) == []
    over = [*fits, pod("d", node="n1", terminating=True)]
    (violation,) = inv.overcommitted_nodes(ApiState(pods=over, nodes=nodes))
    assert str(violation) == "node over-committed: n1: nvidia.com/gpu 3 > 2"


def test_a_live_pod_whose_job_is_gone_is_reported_a_terminating_one_is_not() -> None:
    jobs = [job("kept", "Running")]
    pods = [
        pod("a", job=("kept", "j-kept")),
        pod("b", job=("gone", "j-gone")),
        pod("c", job=("gone", "j-gone"), terminating=True),
    ]
    assert [v.subject for v in inv.pods_without_job(ApiState(pods=pods, jobs=jobs))] == ["w/b"]


def test_a_gang_partly_placed_in_two_readings_is_stuck_one_that_moved_is_not() -> None:
    groups = [podgroup("g", 3)]
    first = ApiState(
        pods=[pod("a", group="g", node="n"), pod("b", group="g"), pod("c", group="g")], podgroups=groups
    )
    moved = ApiState(
        pods=[pod("a", group="g", node="n"), pod("b", group="g", node="n"), pod("c", group="g")],
        podgroups=groups,
    )
    whole = ApiState(pods=[pod(x, group="g", node="n") for x in "abc"], podgroups=groups)
    assert [str(v) for v in inv.stuck(first, first)] == [
        "gang partly bound: w/g: 1 pods placed, below minMember"
    ]
    assert inv.stuck(first, moved) == []
    assert inv.stuck(first, whole) == []


def test_a_running_job_without_pods_in_two_readings_is_stuck() -> None:
    state = ApiState(jobs=[job("j", "Running")], pods=[pod("old", job=("j", "j-j"), terminating=True)])
    assert [v.invariant for v in inv.stuck(state, state)] == ["job without pods"]
    with_pod = ApiState(jobs=[job("j", "Running")], pods=[pod("p", job=("j", "j-j"))])
    assert inv.stuck(with_pod, with_pod) == []


def test_podgroup_counts_must_match_its_pods() -> None:
    pods = [pod("a", group="g", node="n", phase="Running"), pod("b", group="g", node="n", phase="Succeeded")]
    good = ApiState(pods=pods, podgroups=[podgroup("g", 2, running=1, succeeded=1)])
    assert inv.podgroup_status(good) == []
    bad = ApiState(pods=pods, podgroups=[podgroup("g", 2, running=2, succeeded=1)])
    assert [str(v) for v in inv.podgroup_status(bad)] == ["PodGroup status: w/g: status.running 2, pods 1"]


def readings(*states: ApiState) -> Callable[[], Awaitable[ApiState]]:
    """The API read again and again: ``states`` in turn, then the last one for good."""
    left = list(states)

    async def read() -> ApiState:
        return left.pop(0) if len(left) > 1 else left[0]

    return read


def cron_run(*, running: int, succeeded: int) -> ApiState:
    """A CronJob run whose one pod has Succeeded, its PodGroup saying ``running``/``succeeded``."""
    pods = [pod("a", group="g", node="n", phase="Succeeded")]
    return ApiState(pods=pods, podgroups=[podgroup("g", 1, running=running, succeeded=succeeded)])


async def test_the_final_check_waits_for_statuses_written_late() -> None:
    stale = cron_run(running=1, succeeded=0)
    state, seconds = await caught_up(readings(stale, stale, cron_run(running=0, succeeded=1)), 5.0, 0.01)
    assert inv.quiet(state, {}) == []
    assert seconds is not None and seconds < 5.0


async def test_the_final_check_reports_a_status_never_written() -> None:
    state, seconds = await caught_up(readings(cron_run(running=1, succeeded=0)), 0.05, 0.01)
    assert seconds is None
    assert [str(v) for v in inv.quiet(state, {})] == [
        "PodGroup status: w/g: status.running 1, pods 0",
        "PodGroup status: w/g: status.succeeded 0, pods 1",
    ]


def test_queue_allocated_must_be_what_its_placed_unfinished_pods_request() -> None:
    pods = [
        pod("a", group="g", node="n", phase="Running", gpus=2),
        pod("b", group="g", node="n", phase="Succeeded", gpus=4),
        pod("c", group="g", gpus=8),
    ]
    queue = {"metadata": {"name": "default"}, "status": {"allocated": {"nvidia.com/gpu": "2"}}}
    assert inv.queue_allocated(ApiState(pods=pods, podgroups=[podgroup("g", 1)], queues=[queue])) == []
    queue["status"]["allocated"] = {"nvidia.com/gpu": "6"}
    assert [
        v.invariant
        for v in inv.queue_allocated(ApiState(pods=pods, podgroups=[podgroup("g", 1)], queues=[queue]))
    ] == ["Queue status"]


def test_final_phases_and_lost_work() -> None:
    jobs = [job("done", "Completed", 2), job("bad", "Failed"), job("stuck", "Running")]
    pods = [
        pod("d0", job=("done", "j-done"), phase="Succeeded"),
        pod("d1", job=("done", "j-done"), phase="Failed"),
    ]
    expected = {"done": "Completed", "bad": "Failed", "stuck": "Completed", "vanished": "Completed"}
    state = ApiState(jobs=jobs, pods=pods)
    assert [str(v) for v in inv.final_phases(state, expected)] == [
        "wrong final phase: stuck: Running (not final); expected Completed",
        "job lost: vanished: gone; expected Completed",
    ]
    assert [str(v) for v in inv.completed_work(state)] == [
        "work lost: w/done: Completed with 1 of 2 pods Succeeded"
    ]


def lease(holder: str, acquired: str, renewed: str = "") -> dict[str, Any]:
    return {"spec": {"holderIdentity": holder, "acquireTime": acquired, "renewTime": renewed or acquired}}


T = inv.micro_time("2026-01-01T00:00:10.000000Z")  # a took the lease
TERMS = [
    inv.term_of(lease("a", "2026-01-01T00:00:10.000000Z")),
    inv.term_of(lease("b", "2026-01-01T00:00:25.500000Z")),  # b took over: a froze at 14
    inv.term_of(lease("", "2026-01-01T00:00:25.500000Z", "2026-01-01T00:00:40.000000Z")),  # b released
]


@pytest.mark.parametrize(
    ("write", "found"),
    [
        pytest.param(inv.Write("a", T + 4.0, "bind w/p0"), [], id="leader-in-its-term"),
        pytest.param(inv.Write("b", T + 15.6, "bind w/p1"), [], id="successor-in-its-term"),
        pytest.param(inv.Write("a", T - 3.0, "bind w/p2"), [], id="before-any-term-seen"),
        pytest.param(
            inv.Write("a", T + 21.0, "bind w/p3"),
            ["write by a non-leader: a: bind w/p3 at 00:00:31.000; b held the lease since 00:00:25.500"],
            id="woke-from-a-freeze",
        ),
        pytest.param(
            inv.Write("b", T + 31.0, "evict w/p4"),
            [
                "write by a non-leader: b: evict w/p4 at 00:00:41.000; "
                "the lease was released since 00:00:40.000"
            ],
            id="after-its-release",
        ),
    ],
)
def test_a_write_must_fall_in_a_term_of_its_writer(write: inv.Write, found: list[str]) -> None:
    terms = [t for t in TERMS if t is not None]
    assert [str(v) for v in inv.writes_by_non_leaders([write], terms)] == found


def test_writes_are_read_from_a_process_log_with_the_time_they_went_through_the_fence() -> None:
    lines = [
        {"event": "bound", "pod": "w/p0", "node": "n1", "checked": 1.5, "sent": 1.5},
        {"event": "evicted", "pod": "w/p1", "checked": 2.5, "sent": 2.5},
        {"event": "pod created", "pod": "w/j-w-0", "checked": 3.5, "sent": 9.5},  # frozen in between
        {"event": "pod deleted", "pod": "w/j-w-1", "sent": 4.5},  # no check time: judged by the send
        {"event": "job created", "job": "w/cron-123", "owner": "CronJob", "checked": 5.5, "sent": 5.5},
        {"event": "cycle", "binds": 3},
        {"event": "bound", "pod": "w/old"},  # an older build's line, without the times: not judged
    ]
    writes = inv.writes_in_log(lines, "a")
    assert writes == [
        inv.Write("a", 1.5, "bind w/p0", 1.5),
        inv.Write("a", 2.5, "evict w/p1", 2.5),
        inv.Write("a", 3.5, "create pod w/j-w-0", 9.5),
        inv.Write("a", 4.5, "delete pod w/j-w-1", 4.5),
        inv.Write("a", 5.5, "create job w/cron-123", 5.5),
    ]
    assert [w.what for w in writes if w.late()] == ["create pod w/j-w-0"]


def evict(pod_name: str, uid: str, preemptor: str | None = None) -> dict[str, Any]:
    why = f"preempt (preempted for {NS}/{preemptor})" if preemptor else "reclaim"
    return {
        "reason": "Evict",
        "message": f"Pod {NS}/{pod_name} evicted: {why}: detail",
        "involvedObject": {"kind": "Pod", "name": pod_name, "uid": uid},
    }


def test_evictions_are_read_from_the_binders_events() -> None:
    events = [evict("v0", "u-v0", "hi-w-0"), evict("v1", "u-v1"), scheduled("a", "n1")]
    assert inv.evictions(ApiState(events=events)) == [
        inv.Eviction("u-v0", "w/v0", "w/hi-w-0"),
        inv.Eviction("u-v1", "w/v1", None),
    ]


def test_an_evicted_pod_must_be_gone_deleting_or_finished_a_recreated_one_is_another() -> None:
    events = [evict(x, f"u-{x}", "hi-w-0") for x in ("gone", "deleting", "done", "running")]
    pods = [
        pod("deleting", node="n1", terminating=True),
        pod("done", node="n1", phase="Succeeded"),
        pod("running", node="n1", phase="Running"),
        {**pod("gone", node="n2"), "metadata": {**pod("gone")["metadata"], "uid": "u-gone-again"}},
    ]
    assert [str(v) for v in inv.evicted_pods_still_running(ApiState(pods=pods, events=events))] == [
        "evicted pod still running: w/running: uid u-running has an Evict Event and no deletion"
    ]


def test_a_gang_left_below_its_minimum_by_evictions_in_two_readings_is_half_evicted() -> None:
    groups = [podgroup("g", 3), podgroup("e", 1)]
    events = [evict("g1", "u-g1-old"), evict("e1", "u-e1-old")]
    half = ApiState(
        pods=[pod("g0", group="g", node="n"), pod("g1", group="g"), pod("g2", group="g", node="n"),
              pod("e0", group="e", node="n"), pod("e1", group="e")],
        podgroups=groups,
        events=events,
    )  # fmt: skip
    assert [str(v) for v in inv.half_evicted(half, half)] == [
        "gang half-evicted: w/g: 2 pods placed after evictions, below minMember"
    ]
    # Placed whole again by the second reading, or never evicted from: not half-evicted.
    healed = ApiState(
        pods=[pod(x, group="g", node="n") for x in ("g0", "g1", "g2")], podgroups=groups, events=events
    )
    assert inv.half_evicted(half, healed) == []
    assert (
        inv.half_evicted(
            ApiState(pods=half.pods, podgroups=groups), ApiState(pods=half.pods, podgroups=groups)
        )
        == []
    )


def test_victims_evicted_for_a_preemptor_that_never_ran_are_lost_for_nothing() -> None:
    events = [evict("v0", "u-v0", "hi-w-0"), evict("v1", "u-v1", "hi-w-0"), evict("v2", "u-v2", "ok-w-0")]
    events.append(evict("v3", "u-v3", "done-w-0"))
    pods = [pod("hi-w-0"), pod("ok-w-0", node="n1", phase="Running"), pod("done-w-0", phase="Succeeded")]
    assert [str(v) for v in inv.preemptors_never_placed(ApiState(pods=pods, events=events))] == [
        "evicted for nothing: w/hi-w-0: 2 victims; preemptor Pending, not placed"
    ]
