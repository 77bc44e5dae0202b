"""Records kept between snapshots: one parse per object version; no session's state leaks into the next."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod, make_priority_class
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.job import JobInfo
from volcano_py.scheduler.framework.node import NodeInfo
from volcano_py.scheduler.framework.snapshot import Records, Snapshot
from volcano_py.scheduler.framework.status import TaskStatus
from volcano_py.scheduler.framework.task import TaskInfo

NOW = "2026-01-01T01:00:00Z"


def _cluster() -> dict[str, list[dict[str, Any]]]:
    nodes = [make_node(f"n{i}", cpu="4", gpu=2).obj() for i in range(3)]
    running = [make_pod(f"r{i}").req(cpu="1").group("old").running(f"n{i}").obj() for i in range(3)]
    gang = [make_pod(f"g{i}").req(cpu="1", gpu=1).group("gang").obj() for i in range(4)]
    podgroups = [make_pg("old", 3, phase="Running").obj(), make_pg("gang", 4).obj()]
    return {"nodes": nodes, "pods": running + gang, "podgroups": podgroups}


def _decisions(result: SessionResult) -> tuple[object, ...]:
    return (
        sorted((b.name, b.node) for b in result.binds),
        sorted((e.name, e.node) for e in result.evictions),
        sorted((u.name, u.phase, u.running) for u in result.podgroup_updates),
        sorted(result.explanations),
    )


def _session(objects: dict[str, list[dict[str, Any]]], records: Records | None) -> SessionResult:
    snapshot = Snapshot.build(**objects, records=records)  # type: ignore[arg-type]
    return run_session(snapshot, load_conf(None), NOW)


def test_sessions_over_kept_records_decide_as_over_fresh_parses() -> None:
    objects = _cluster()
    fresh = _decisions(_session(objects, None))
    records = Records()
    # The same dicts three times: the first session's binds must not survive into the second snapshot
    # (the pods are still pending in the API's eyes, so the same gang is placed again the same way).
    for _ in range(3):
        assert _decisions(_session(objects, records)) == fresh
    assert len(fresh[0]) == 4


def test_an_unchanged_object_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _cluster()
    records = Records()
    Snapshot.build(**objects, records=records)  # type: ignore[arg-type]
    parsed = _counting_parses(monkeypatch)
    changed = make_pod("g0").req(cpu="2", gpu=1).group("gang").obj()  # a new version of one pod
    objects["pods"] = [changed if p["metadata"]["name"] == "g0" else p for p in objects["pods"]]
    snapshot = Snapshot.build(**objects, records=records)  # type: ignore[arg-type]
    assert parsed == ["g0"]
    cpu = {t.name: t.resreq.amount("cpu") for t in snapshot.jobs["default/gang"].tasks.values()}
    assert cpu == {"g0": 2000, "g1": 1000, "g2": 1000, "g3": 1000}


def test_a_fork_reads_nothing_again_and_shares_no_views(monkeypatch: pytest.MonkeyPatch) -> None:
    """The what-if's view of the cluster and its trials' sessions: one read of each pod for both, and a
    session over the fork's snapshot leaves the view as it was."""
    objects = _cluster()
    records = Records()
    view = Snapshot.build(**objects, records=records)  # type: ignore[arg-type]
    parsed = _counting_parses(monkeypatch)
    fork = records.fork()
    placed = run_session(Snapshot.build(**objects, records=fork), load_conf(None), NOW)  # type: ignore[arg-type]
    assert parsed == []
    assert len(placed.binds) == 4
    assert {t.status for t in view.jobs["default/gang"].tasks.values()} == {TaskStatus.PENDING}
    assert not view.superseded
    again = run_session(Snapshot.build(**objects, records=fork), load_conf(None), NOW)  # type: ignore[arg-type]
    assert _decisions(again) == _decisions(placed) == _decisions(_session(objects, None))


def test_a_fork_of_records_that_keep_nothing_keeps_nothing() -> None:
    assert Records(keep=False).fork().keep is False


def test_a_priority_class_change_reads_everything_again() -> None:
    pod = make_pod("p").req(cpu="1").group("pg").obj()
    pod["spec"]["priorityClassName"] = "high"
    objects: dict[str, Any] = {
        "nodes": [make_node("n").obj()],
        "pods": [pod],
        "podgroups": [make_pg("pg").obj()],
    }
    records = Records()
    low = Snapshot.build(**objects, priority_classes=[make_priority_class("high", 10)], records=records)
    high = Snapshot.build(**objects, priority_classes=[make_priority_class("high", 1000)], records=records)
    (low_task,) = low.jobs["default/pg"].tasks.values()
    (high_task,) = high.jobs["default/pg"].tasks.values()
    assert (low_task.priority, high_task.priority) == (10, 1000)


def test_fresh_twins_share_facts_and_start_their_own_state() -> None:
    pod = make_pod("p").req(cpu="1", gpu=1).group("pg").obj()
    task = TaskInfo.from_pod(pod)
    task.status, task.node_name, task.klass = TaskStatus.ALLOCATED, "n1", object()
    task.bind_annotations = {"volcano.sh/gpu-index": "0"}
    twin = TaskInfo.from_pod(pod).fresh()
    parsed = TaskInfo.from_pod(pod)
    for name in TaskInfo.__slots__:
        assert getattr(twin, name) == getattr(parsed, name), name
    job = JobInfo.from_podgroup(make_pg("pg", 2).obj())
    job.add_task(task)
    assert job.fresh().tasks == {} and job.fresh().ready_task_num == 0


def test_job_twins_match_a_full_construction_on_every_field() -> None:
    pg = make_pg("pg", 2).obj()
    pg["spec"].update({"minTaskMember": {"w": 2}, "minResources": {"cpu": "2"}, "queue": "q"})
    job = JobInfo.from_podgroup(pg)
    job.add_task(TaskInfo.from_pod(make_pod("a").req(cpu="1").group("pg").obj()))
    expected = dataclasses.replace(job, tasks={}, by_status={}, ready_task_num=0, _allocated=None, version=0)
    twin = job.fresh()
    for name in JobInfo.__slots__:
        assert getattr(twin, name) == getattr(expected, name), name
    task = TaskInfo.from_pod(make_pod("plain").req(cpu="1").obj())
    shadow = JobInfo.shadow_for(task)
    built = JobInfo(uid="default/plain", namespace="default", name="plain", priority=task.priority,
                    priority_class=task.priority_class, phase=PodGroupPhase.INQUEUE, created=task.created,
                    shadow=True)  # fmt: skip
    for name in JobInfo.__slots__:
        assert getattr(shadow, name) == getattr(built, name), name


def test_a_fresh_node_keeps_its_cards_but_no_holders() -> None:
    node = make_node("n", gpu=None).obj()
    node["status"]["allocatable"].update({"volcano.sh/gpu-memory": "32768", "volcano.sh/gpu-number": "2"})
    parsed = NodeInfo.from_node(node)
    assert parsed.gpus is not None
    parsed.gpus.cards[0].hold("uid-a", 1024, 0)
    parsed.tasks["uid-a"] = TaskInfo.from_pod(make_pod("a").obj())
    twin = parsed.fresh()
    assert twin.gpus is not None and twin.gpus is not parsed.gpus
    assert {i: (c.memory, c.used_memory, c.holders) for i, c in twin.gpus.cards.items()} == {
        0: (16384, 0, {}),
        1: (16384, 0, {}),
    }
    assert twin.tasks == {} and (twin.name, twin.allocatable) == (parsed.name, parsed.allocatable)


def _counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    original = TaskInfo.from_pod.__func__  # type: ignore[attr-defined]

    def counting(cls: type[TaskInfo], pod: dict[str, Any], **kwargs: Any) -> TaskInfo:
        parsed.append(pod["metadata"]["name"])
        return original(cls, pod, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(TaskInfo, "from_pod", classmethod(counting))
    return parsed


def _versions(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The versions a pod goes through on its way to Running: bound, then started by its kubelet."""
    bound = copy.deepcopy(pod)
    bound["metadata"]["resourceVersion"] = "2"
    bound["metadata"]["managedFields"] = [{"manager": "volcano", "operation": "Update"}]
    bound["spec"]["nodeName"] = "n0"
    bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    running = copy.deepcopy(bound)
    running["metadata"]["resourceVersion"] = "3"
    running["metadata"]["managedFields"].append({"manager": "kwok", "operation": "Update"})
    running["status"].update({"phase": "Running", "podIP": "10.0.0.7", "startTime": "2026-01-01T00:00:01Z"})
    return [bound, running]


def _task_in(snapshot: Snapshot, name: str) -> TaskInfo:
    return next(t for job in snapshot.jobs.values() for t in job.tasks.values() if t.name == name)


_FULL_READ = TaskInfo.from_pod  # bound before any test counts parses


def _same_as_a_full_read(task: TaskInfo, pod: dict[str, Any]) -> None:
    parsed = _FULL_READ(pod).fresh()
    for name in TaskInfo.__slots__:
        if name != "klass":  # set by the session on first use
            assert getattr(task, name) == getattr(parsed, name), name
    assert task.pod is pod


def test_a_bound_then_running_pod_is_revised_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    pod = make_pod("w0").req(cpu="1", gpu=1).group("gang").obj()
    pod["spec"]["tolerations"] = [{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}]
    pod["metadata"]["resourceVersion"] = "1"
    objects: dict[str, Any] = {
        "nodes": [make_node("n0", gpu=8).obj()],
        "podgroups": [make_pg("gang", 1).obj()],
    }
    records = Records()
    Snapshot.build(**objects, pods=[pod], records=records)
    parsed = _counting_parses(monkeypatch)
    for version, status in zip(_versions(pod), (TaskStatus.BOUND, TaskStatus.RUNNING), strict=True):
        task = _task_in(Snapshot.build(**objects, pods=[version], records=records), "w0")
        assert (task.status, task.node_name) == (status, "n0")
        _same_as_a_full_read(task, version)
    assert parsed == []


@pytest.mark.parametrize(
    "change",
    ["label", "annotation", "toleration", "request", "deletion"],
)
def test_any_other_change_reads_the_pod_again(monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    pod = make_pod("w0").req(cpu="1").group("gang").running("n0").obj()
    objects: dict[str, Any] = {"nodes": [make_node("n0").obj()], "podgroups": [make_pg("gang", 1).obj()]}
    records = Records()
    Snapshot.build(**objects, pods=[pod], records=records)
    parsed = _counting_parses(monkeypatch)
    new = copy.deepcopy(pod)
    new["metadata"]["resourceVersion"] = "9"
    if change == "label":
        new["metadata"].setdefault("labels", {})["team"] = "a"
    elif change == "annotation":
        new["metadata"]["annotations"]["volcano.sh/preemptable"] = "false"
    elif change == "toleration":
        new["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    elif change == "request":
        new["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "3"}}
    else:
        new["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:05Z"
    task = _task_in(Snapshot.build(**objects, pods=[new], records=records), "w0")
    assert parsed == ["w0"]
    _same_as_a_full_read(task, new)
    if change == "deletion":
        assert task.status is TaskStatus.RELEASING


def test_node_twins_match_a_replace_on_every_field() -> None:
    node = make_node("n", gpu=4).taint("gpu", "yes").cordon().obj()
    node["metadata"]["labels"] = {"zone": "a"}
    parsed = NodeInfo.from_node(node)
    parsed.tasks["uid-a"] = TaskInfo.from_pod(make_pod("a").obj())
    expected = dataclasses.replace(parsed, tasks={}, gpus=None)
    twin = parsed.fresh()
    for name in NodeInfo.__slots__:
        assert getattr(twin, name) == getattr(expected, name), name
