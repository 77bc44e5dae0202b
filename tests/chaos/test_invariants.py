"""The chaos suite's invariants on hand-made API readings: each one fires on the breach it names, and only."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.chaoslib import invariants as inv
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
            ["write by a non-leader: a: bind w/p3 sent at 00:00:31.000; b held the lease since 00:00:25.500"],
            id="woke-from-a-freeze",
        ),
        pytest.param(
            inv.Write("b", T + 31.0, "evict w/p4"),
            [
                "write by a non-leader: b: evict w/p4 sent at 00:00:41.000; "
                "the lease was released since 00:00:40.000"
            ],
            id="after-its-release",
        ),
    ],
)
def test_a_write_must_fall_in_a_term_of_its_writer(write: inv.Write, found: list[str]) -> None:
    terms = [t for t in TERMS if t is not None]
    assert [str(v) for v in inv.writes_by_non_leaders([write], terms)] == found


def test_writes_are_read_from_a_process_log_with_the_time_they_were_sent() -> None:
    lines = [
        {"event": "bound", "pod": "w/p0", "node": "n1", "sent": 1.5},
        {"event": "evicted", "pod": "w/p1", "sent": 2.5},
        {"event": "pod created", "pod": "w/j-w-0", "sent": 3.5},
        {"event": "pod deleted", "pod": "w/j-w-1", "sent": 4.5},
        {"event": "cycle", "binds": 3},
        {"event": "bound", "pod": "w/old"},  # an older build's line, without the time sent: not judged
    ]
    assert inv.writes_in_log(lines, "a") == [
        inv.Write("a", 1.5, "bind w/p0"),
        inv.Write("a", 2.5, "evict w/p1"),
        inv.Write("a", 3.5, "create pod w/j-w-0"),
        inv.Write("a", 4.5, "delete pod w/j-w-1"),
    ]
