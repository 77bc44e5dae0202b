"""Position and estimated start of waiting jobs: the scheduler's order, and a forward simulation of the
cluster with the runtimes running pods declare (or the model's, for those that declare none)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod, make_priority_class, make_queue
from tests.scheduler.records_probe import counting_parses, watching_reads
from volcano_py.api import constants as k
from volcano_py.forecast import Basis, Bounds, RuntimeModel, forecast
from volcano_py.scheduler.core import ClusterObjects, build_snapshot, load_conf, queue_order

NOW = datetime(2026, 1, 1, 1, 0, 0, tzinfo=UTC)
Obj = dict[str, Any]
MODEL = RuntimeModel((100.0, 200.0, 300.0))
GPU_TEMPLATE: Obj = {
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "x",
                "resources": {
                    "requests": {"cpu": "1", "nvidia.com/gpu": "8"},
                    "limits": {"nvidia.com/gpu": "8"},
                },
            }
        ]
    }
}


def stamp(seconds_from_now: float) -> str:
    return (NOW + timedelta(seconds=seconds_from_now)).strftime("%Y-%m-%dT%H:%M:%SZ")


def job(
    name: str,
    gpus: int,
    *,
    size: int = 1,
    on: str = "",
    started: float = 0.0,
    runtime: str = "",
    deadline: int = 0,
    pg_runtime: str = "",
    queue: str = "default",
    priority: str = "",
    phase: str = "Inqueue",
) -> list[Obj]:
    """A PodGroup of ``size`` pods of ``gpus`` GPUs: running on node ``on`` since ``started`` seconds from
    now (negative: before), or waiting; declaring ``runtime`` on its pods, ``deadline`` as their
    activeDeadlineSeconds or ``pg_runtime`` on the PodGroup."""
    pg = make_pg(name, min_member=size, phase="Running" if on else phase).queue(queue)
    if priority:
        pg = pg.priority_class(priority)
    if pg_runtime:
        pg = pg.annotate(k.EXPECTED_RUNTIME_KEY, pg_runtime)
    out = [pg.obj()]
    for i in range(size):
        pod = make_pod(f"{name}-{i}").req(cpu="1", gpu=gpus).group(name)
        if priority:
            pod = pod.priority(100 if priority == "high" else 1, priority)
        if runtime:
            pod = pod.annotate(k.EXPECTED_RUNTIME_KEY, runtime)
        if on:
            pod = pod.running(on)
        body = pod.obj()
        if on:
            body["status"]["startTime"] = stamp(started)
        if deadline:
            body["spec"]["activeDeadlineSeconds"] = deadline
        out.append(body)
    return out


def cluster(nodes: int, *jobs: list[Obj], queues: Sequence[Obj] = ()) -> ClusterObjects:
    flat = [o for j in jobs for o in j]
    return ClusterObjects(
        nodes=tuple(make_node(f"n{i}", cpu="64", memory="256Gi", gpu=8).obj() for i in range(nodes)),
        pods=tuple(o for o in flat if o["kind"] == "Pod"),
        podgroups=tuple(o for o in flat if o["kind"] == "PodGroup"),
        queues=(make_queue("root").obj(), make_queue("default").obj(), *queues),
        priority_classes=(make_priority_class("high", 100), make_priority_class("low", 1)),
    )


# --- positions ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conf", "jobs", "expected"),
    [
        pytest.param(
            None,
            [job("a", 8, priority="low"), job("b", 8, priority="high"), job("c", 8, priority="low")],
            ["default/b", "default/a", "default/c"],
            id="priority-first-then-creation",
        ),
        pytest.param(
            "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: gang\n",
            [job("a", 8, priority="low"), job("b", 8, priority="high"), job("c", 8, priority="low")],
            ["default/a", "default/b", "default/c"],
            id="without-priority-plugin-creation-order",
        ),
        pytest.param(
            None,
            [job("a", 8, priority="low"), job("b", 8, priority="high", phase="Pending")],
            ["default/b", "default/a"],
            id="admitted-or-not-one-order",
        ),
        pytest.param(
            None,
            [job("r", 8, on="n0", priority="low"), job("w", 8, priority="low")],
            ["default/w"],
            id="running-jobs-do-not-wait",
        ),
        pytest.param(
            None,
            [[job("done", 8, phase="Completed")[0]], job("w", 8, priority="low")],
            ["default/w"],
            id="a-completed-job-whose-pods-are-gone-does-not-wait",
        ),
    ],
)
def test_positions_follow_the_sessions_job_order(
    conf: str | None, jobs: list[list[Obj]], expected: list[str]
) -> None:
    objs = cluster(1, *jobs)
    snapshot, _ = build_snapshot(objs, (k.SCHEDULER_NAME,))
    order = queue_order(snapshot, load_conf(conf), stamp(0))
    assert order == {"default": tuple(expected)}
    answer = forecast(objs, load_conf(conf), NOW, model=MODEL)
    assert [e.job for e in answer.queue("default")] == expected
    assert [e.position for e in answer.queue("default")] == list(range(1, len(expected) + 1))


def test_a_waiting_high_priority_job_is_also_placed_first_by_the_scheduler() -> None:
    """The order the forecast reports is the order sessions take jobs in: with room for one, position 1
    is the one a session places."""
    objs = cluster(1, job("a", 8, priority="low"), job("b", 8, priority="high"))
    answer = forecast(objs, load_conf(), NOW, model=MODEL)
    first = answer.queue("default")[0]
    assert (first.job, first.basis, first.start) == ("default/b", Basis.NOW, NOW)


# --- estimated starts -----------------------------------------------------------------------------------


@dataclass
class Case:
    objs: ClusterObjects
    want: str = "default/want"
    start: float | None = None  # seconds from now
    basis: Basis = Basis.DECLARED
    note: Sequence[str] = ()
    bounds: Bounds = field(default_factory=Bounds)


CASES = [
    pytest.param(Case(cluster(1, job("want", 8)), start=0, basis=Basis.NOW), id="room-now"),
    pytest.param(
        Case(cluster(1, job("r", 8, on="n0", started=-60, runtime="10m"), job("want", 8)), start=540),
        id="behind-declared-annotation",
    ),
    pytest.param(
        Case(cluster(1, job("r", 8, on="n0", started=-100, deadline=400), job("want", 8)), start=300),
        id="behind-activeDeadlineSeconds",
    ),
    pytest.param(
        Case(cluster(1, job("r", 8, on="n0", started=-30, pg_runtime="90s"), job("want", 8)), start=60),
        id="behind-podgroup-annotation",
    ),
    pytest.param(
        Case(cluster(1, job("r", 8, on="n0", started=-900, runtime="10m"), job("want", 8)), start=0),
        id="overdue-declared-ends-at-once",
    ),
    pytest.param(
        Case(
            cluster(
                1, job("r", 8, on="n0", started=-60, runtime="10m"), job("a", 8, runtime="1h"), job("want", 8)
            ),
            start=540 + 3600,
        ),
        id="behind-a-waiting-job-that-declares-its-runtime",
    ),
    pytest.param(
        Case(cluster(1, job("r", 8, on="n0", started=0), job("want", 8)), start=200, basis=Basis.MODELLED),
        id="modelled-median-at-start",
    ),
    pytest.param(
        Case(cluster(1, job("r", 8, on="n0", started=-150), job("want", 8)), start=100, basis=Basis.MODELLED),
        id="modelled-given-elapsed",
    ),
    pytest.param(
        Case(cluster(1, job("r", 8, on="n0", started=-500), job("want", 8)), start=500, basis=Basis.MODELLED),
        id="modelled-past-the-longest-runs-as-long-again",
    ),
    pytest.param(
        Case(
            cluster(
                2, job("r", 8, on="n0", started=-60, runtime="10m"), job("m", 8, on="n1"), job("want", 16)
            ),
            start=None,
            basis=Basis.UNKNOWN,
            note=("no start within the horizon",),
            bounds=Bounds(horizon=3600),
        ),
        id="unknown-when-what-holds-the-room-does-not-end-in-the-horizon",
    ),
    pytest.param(
        Case(
            cluster(1, job("want", 8, size=2)),
            start=None,
            basis=Basis.UNKNOWN,
            note=("no start within the horizon",),
        ),
        id="unknown-when-it-can-never-fit",
    ),
    pytest.param(
        Case(
            cluster(1, job("r", 8, on="n0", started=-60, runtime="10m"), job("want", 8)),
            start=None,
            basis=Basis.UNKNOWN,
            note=("stopped at its bound (1 sessions",),
            bounds=Bounds(sessions=1),
        ),
        id="unknown-when-the-bound-stops-it",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_estimated_start(case: Case) -> None:
    answer = forecast(case.objs, load_conf(), NOW, model=MODEL, bounds=case.bounds)
    eta = answer.etas[case.want]
    assert eta.basis is case.basis
    if case.start is None:
        assert eta.start is None
    else:
        assert eta.start == NOW + timedelta(seconds=case.start)
    for words in case.note:
        assert words in eta.in_text(NOW)


def test_an_unreadable_declared_runtime_is_reported_and_modelled() -> None:
    objs = cluster(1, job("r", 8, on="n0", started=0, runtime="ten minutes"), job("want", 8))
    answer = forecast(objs, load_conf(), NOW, model=MODEL)
    assert answer.etas["default/want"].basis is Basis.MODELLED
    assert answer.problems == (
        f"pod default/r-0: annotation {k.EXPECTED_RUNTIME_KEY}: 'ten minutes' is not a duration "
        "(write it like '30s', '10m' or '1h30m'); its runtime is modelled",
    )


def test_pods_of_serving_owners_and_other_schedulers_hold_their_room() -> None:
    served = job("svc", 8, on="n0", started=0)
    served[1]["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "web", "uid": "rs1"}]
    answer = forecast(cluster(1, served, job("want", 8)), load_conf(), NOW, model=MODEL)
    assert answer.etas["default/want"].basis is Basis.UNKNOWN


def test_a_completed_volcano_job_whose_pods_are_gone_gets_none_back() -> None:
    done = job("done-u1", 8, phase="Completed")[0]
    done["metadata"]["ownerReferences"] = [{"kind": "Job", "name": "done", "uid": "u1", "controller": True}]
    vjob = {
        "apiVersion": k.BATCH_API_VERSION,
        "kind": "Job",
        "metadata": {"name": "done", "namespace": "default", "uid": "u1"},
        "spec": {"tasks": [{"name": "worker", "replicas": 1, "template": GPU_TEMPLATE}]},
    }
    answer = forecast(cluster(1, [done], job("want", 8)), load_conf(), NOW, jobs=[vjob], model=MODEL)
    assert list(answer.etas) == ["default/want"]
    assert (answer.etas["default/want"].basis, answer.etas["default/want"].start) == (Basis.NOW, NOW)


def test_a_volcano_job_waiting_for_enqueue_starts_once_admitted_with_its_own_pods() -> None:
    template = {"metadata": {"annotations": {k.EXPECTED_RUNTIME_KEY: "20m"}}, **GPU_TEMPLATE}
    vjob = {
        "apiVersion": k.BATCH_API_VERSION,
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "default", "uid": "u1"},
        "spec": {"minAvailable": 1, "tasks": [{"name": "worker", "replicas": 1, "template": template}]},
    }
    pg = job("train-u1", 8, phase="Pending")[0]
    pg["metadata"]["ownerReferences"] = [{"kind": "Job", "name": "train", "uid": "u1", "controller": True}]
    objs = cluster(
        1,
        job("r", 8, on="n0", started=0, runtime="5m"),
        [pg],
        job("after", 8),
        job("last", 8, phase="Pending"),
    )
    answer = forecast(objs, load_conf(), NOW, jobs=[vjob], model=MODEL)
    after, train, last = (answer.etas[f"default/{name}"] for name in ("after", "train-u1", "last"))
    # The Job is older than "after": first in the session's order, admitted once there is room, and its
    # pods, built from its template, declare 20 minutes; "after" declares nothing (the model's 200 s).
    assert [(e.position, e.basis, e.start) for e in (train, after, last)] == [
        (1, Basis.DECLARED, NOW + timedelta(minutes=5)),
        (2, Basis.DECLARED, NOW + timedelta(minutes=25)),
        (3, Basis.MODELLED, NOW + timedelta(minutes=25, seconds=200)),
    ]


def test_the_text_names_position_estimate_and_basis() -> None:
    objs = cluster(1, job("r", 8, on="n0", started=-60, runtime="10m"), job("want", 8))
    eta = forecast(objs, load_conf(), NOW, model=MODEL).etas["default/want"]
    assert eta.lines(NOW) == [
        "Position: 1 of 1 waiting in queue default",
        "Estimated start: in 9m (2026-01-01T01:09:00Z)",
        "Basis: runtimes the running pods declare (expected-runtime annotation, activeDeadlineSeconds)",
    ]


# --- records kept from one session's snapshot to the next -----------------------------------------------


def volcano_job(name: str, uid: str, runtime: str) -> tuple[Obj, Obj]:
    """A Volcano Job of one 8-GPU pod declaring ``runtime``, and its PodGroup waiting for enqueue (the
    forecast builds its pod once a session admits it)."""
    template = {"metadata": {"annotations": {k.EXPECTED_RUNTIME_KEY: runtime}}, **GPU_TEMPLATE}
    vjob = {
        "apiVersion": k.BATCH_API_VERSION,
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "spec": {"minAvailable": 1, "tasks": [{"name": "worker", "replicas": 1, "template": template}]},
    }
    pg = job(f"{name}-{uid}", 8, phase="Pending")[0]
    pg["metadata"]["ownerReferences"] = [{"kind": "Job", "name": name, "uid": uid, "controller": True}]
    return vjob, pg


def several_moments() -> tuple[ClusterObjects, list[Obj]]:
    """Two nodes, busy until 9 and 20 minutes from now, and five jobs waiting: the forecast runs sessions at
    several moments, binding, admitting and building a Volcano Job's pod on the way."""
    vjob, pg = volcano_job("train", "u1", "15m")
    objs = cluster(
        2,
        job("r0", 8, on="n0", started=-60, runtime="10m"),
        job("r1", 8, on="n1", started=0, runtime="20m"),
        [pg],
        job("a", 8, runtime="1h"),
        job("b", 8, runtime="30m", phase="Pending"),
        job("pair", 8, size=2),
        job("last", 8, priority="low"),
    )
    return objs, [vjob]


SPENT = re.compile(r"s, \d+\.\ds\)")


def answer_of(objs: ClusterObjects, jobs: Sequence[Obj], bounds: Bounds, *, keep: bool) -> object:
    answer = forecast(objs, load_conf(), NOW, jobs=jobs, model=MODEL, bounds=bounds, keep_records=keep)
    # Wall seconds are the one thing that may differ: the answer's, and those a stopped forecast spent.
    etas = {
        key: replace(eta, why_unknown=SPENT.sub("s)", eta.why_unknown)) for key, eta in answer.etas.items()
    }
    return replace(answer, seconds=0.0, etas=etas)


@pytest.mark.parametrize(
    ("objs", "jobs", "bounds"),
    [
        *(pytest.param(c.objs, [], c.bounds, id=p.id) for p in CASES if isinstance(c := p.values[0], Case)),
        pytest.param(*several_moments(), Bounds(), id="several-moments"),
        pytest.param(*several_moments(), Bounds(sessions=4), id="several-moments-stopped-by-its-bound"),
    ],
)
def test_kept_records_give_the_answer_fresh_snapshots_give(
    objs: ClusterObjects, jobs: list[Obj], bounds: Bounds
) -> None:
    assert answer_of(objs, jobs, bounds, keep=True) == answer_of(objs, jobs, bounds, keep=False)


def test_the_several_moments_run_many_sessions() -> None:
    """The comparison above is worth something only if the records are carried through many sessions."""
    objs, jobs = several_moments()
    answer = forecast(objs, load_conf(), NOW, jobs=jobs, model=MODEL)
    assert answer.sessions >= 6
    assert all(eta.start is not None for eta in answer.etas.values())


@pytest.mark.parametrize(("keep", "most"), [(True, 1), (False, 6)])
def test_each_pod_is_read_once_however_many_sessions_run(
    monkeypatch: pytest.MonkeyPatch, keep: bool, most: int
) -> None:
    objs, jobs = several_moments()
    parsed = counting_parses(monkeypatch)
    forecast(objs, load_conf(), NOW, jobs=jobs, model=MODEL, keep_records=keep)
    assert {p["metadata"]["name"] for p in objs.pods} | {"train-worker-0"} == set(parsed)
    if keep:
        assert set(parsed.values()) == {1}, parsed
    else:
        assert max(parsed.values()) >= most  # a fresh snapshot reads every pod again


def test_no_dict_a_snapshot_has_read_is_changed_afterwards(monkeypatch: pytest.MonkeyPatch) -> None:
    """The world moves on by new dicts (binds, ends, admissions), as kept records require."""
    objs, jobs = several_moments()
    reads = watching_reads(monkeypatch)
    forecast(objs, load_conf(), NOW, jobs=jobs, model=MODEL)
    assert len(reads.seen) > len(objs.pods) + len(objs.podgroups) + len(objs.nodes)
    assert reads.changed() == []


def test_a_bound_spent_before_the_first_session_runs_none() -> None:
    """The wall-seconds bound is how long the person asking waits, setup included: once spent, even before a
    first session (reading a very large cluster), it is not overrun for one more."""
    calls: list[float] = []

    def clock() -> float:
        calls.append(0.0 if len(calls) < 2 else 2.0)  # forecast's and the simulation's start, then setup done
        return calls[-1]

    answer = forecast(
        cluster(1, job("want", 8)), load_conf(), NOW, model=MODEL, bounds=Bounds(seconds=1), clock=clock
    )
    assert (answer.sessions, answer.exhausted, answer.etas["default/want"].start) == (0, True, None)
    assert "stopped at its bound (0 sessions, 2.0s)" in answer.etas["default/want"].in_text(NOW)
