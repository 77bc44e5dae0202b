"""Queue states and hierarchy, PodGroups for plain pods, and TTL expiry."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from ctl_builders import JobBuilder

from volcano_py.api import constants as c
from volcano_py.api.bus import Action
from volcano_py.api.job_view import read_status, resolve_job
from volcano_py.controllers.job.ttl import seconds_left
from volcano_py.controllers.podgroup import rules as plainpod
from volcano_py.controllers.queue.state import (
    QueueActionError,
    QueueState,
    QueueView,
    check_action,
    hierarchy_actions,
    next_state,
    podgroup_counts,
    read_queue,
)

S = QueueState


@pytest.mark.parametrize(
    ("current", "action", "podgroups", "expected"),
    [
        ("", Action.SYNC_QUEUE, 0, S.OPEN),
        ("Open", Action.CLOSE_QUEUE, 2, S.CLOSING),
        ("Open", Action.CLOSE_QUEUE, 0, S.CLOSED),
        ("Closing", Action.SYNC_QUEUE, 1, S.CLOSING),
        ("Closing", Action.SYNC_QUEUE, 0, S.CLOSED),
        ("Closed", Action.SYNC_QUEUE, 3, S.CLOSED),
        ("Closed", Action.OPEN_QUEUE, 3, S.OPEN),
        ("Closing", Action.OPEN_QUEUE, 3, S.OPEN),
    ],
)
def test_queue_states(current: str, action: Action, podgroups: int, expected: QueueState) -> None:
    assert next_state(current, action, podgroups) is expected


def _queue(name: str, parent: str = "", state: str = "", closed_by_parent: bool = False) -> dict[str, Any]:
    ann = {"volcano.sh/closed-by-parent": "true"} if closed_by_parent else {}
    return {
        "metadata": {"name": name, "annotations": ann},
        "spec": {"parent": parent},
        "status": {"state": state},
    }


def test_children_close_with_their_parent_and_reopen_with_it() -> None:
    queues = [
        read_queue(_queue("root")),
        read_queue(_queue("team", state="Closing")),
        read_queue(_queue("a", "team", "Open")),
        read_queue(_queue("b", "team", "Closed")),
    ]
    assert hierarchy_actions(queues) == [("a", Action.CLOSE_QUEUE, True)]
    reopened = [
        read_queue(_queue("team", state="Open")),
        read_queue(_queue("a", "team", "Closed", closed_by_parent=True)),
        read_queue(_queue("b", "team", "Closed")),
    ]
    assert hierarchy_actions(reopened) == [("a", Action.OPEN_QUEUE, False)]


def test_queue_parent_defaults_to_root_and_root_cannot_close() -> None:
    assert read_queue(_queue("q")).parent == "root"
    with pytest.raises(QueueActionError, match="root queue cannot be closed"):
        check_action(read_queue(_queue("root")), Action.CLOSE_QUEUE, {})
    closed_parent = {"team": QueueView("team", "root", S.CLOSED, False)}
    with pytest.raises(QueueActionError, match="open the parent first"):
        check_action(read_queue(_queue("a", "team", "Closed")), Action.OPEN_QUEUE, closed_parent)


def test_podgroup_counts_per_phase() -> None:
    counts = podgroup_counts(["Pending", "", "Running", "Inqueue", "Completed", "Running"])
    assert counts == {"pending": 2, "running": 2, "inqueue": 1, "unknown": 0, "completed": 1}


def _plain_pod(**meta: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": "p-abc", "namespace": "ns", "uid": "pod-uid", "annotations": {}, **meta},
        "spec": {"schedulerName": "volcano", "containers": [{"resources": {"requests": {"cpu": "2"}}}]},
    }
    return body


def test_plain_pod_gets_a_podgroup_named_after_its_owner() -> None:
    pod = _plain_pod(
        ownerReferences=[
            {"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": "owner-uid", "controller": True}
        ],
        annotations={c.QUEUE_NAME_ANNOTATION_KEY: "q1"},
    )
    assert plainpod.needs_podgroup(pod, {"volcano"})
    pg = plainpod.build_podgroup(pod, {c.VOLCANO_GROUP_MIN_MEMBER_KEY: "3"})
    assert pg["metadata"]["name"] == "podgroup-owner-uid"
    assert pg["metadata"]["ownerReferences"][0]["name"] == "pi"
    assert pg["spec"] == {
        "minMember": 3,
        "minResources": {"count/pods": "3", "pods": "3", "cpu": "6", "requests.cpu": "6"},
        "queue": "q1",
    }


def test_bare_pod_owns_its_podgroup_with_min_member_one() -> None:
    pg = plainpod.build_podgroup(_plain_pod(), {})
    assert pg["metadata"]["name"] == "podgroup-pod-uid" and pg["spec"]["minMember"] == 1
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "Pod"


def test_pods_that_need_no_podgroup() -> None:
    grouped = _plain_pod(annotations={c.KUBE_GROUP_NAME_KEY: "pg"})
    vcjob = _plain_pod(
        ownerReferences=[{"apiVersion": c.BATCH_API_VERSION, "kind": "Job", "uid": "u", "controller": True}]
    )
    other = _plain_pod()
    other["spec"]["schedulerName"] = "default-scheduler"
    assert not any(plainpod.needs_podgroup(p, {"volcano"}) for p in (grouped, vcjob, other))


def test_bad_min_member_annotation_names_the_fix() -> None:
    with pytest.raises(ValueError, match="group-min-member='three' is not an integer"):
        plainpod.min_member({c.VOLCANO_GROUP_MIN_MEMBER_KEY: "three"})


def test_ttl_counts_from_the_finish_time() -> None:
    body = (
        JobBuilder()
        .task("w")
        .set(ttlSecondsAfterFinished=30)
        .status(state={"phase": "Completed", "lastTransitionTime": "2026-01-01T00:00:00Z"})
        .obj()
    )
    spec, status = resolve_job(body), read_status(body)
    assert seconds_left(spec, status, datetime(2026, 1, 1, 0, 0, 10, tzinfo=UTC)) == 20
    running = read_status(JobBuilder().status(state={"phase": "Running"}).obj())
    assert seconds_left(spec, running, datetime(2026, 1, 1, tzinfo=UTC)) is None


@pytest.mark.parametrize(
    ("spec", "deleting", "retired"),
    [
        pytest.param({"replicas": 0}, False, "podgroup-rs-uid", id="scaled-to-zero"),
        pytest.param({"replicas": 2}, False, None, id="wants-pods"),
        pytest.param({}, False, None, id="replicas-default-to-one"),
        pytest.param({"replicas": 0}, True, None, id="being-deleted-the-garbage-collector-takes-it"),
    ],
)
def test_a_replicaset_at_zero_replicas_retires_its_podgroup(
    spec: dict[str, int], deleting: bool, retired: str | None
) -> None:
    meta: dict[str, str] = {"name": "rs", "namespace": "ns", "uid": "rs-uid"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert plainpod.retired_podgroup({"metadata": meta, "spec": spec}) == retired
