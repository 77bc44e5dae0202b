"""Admitted gangs whose pods the Job controller has not created yet keep their minimum: a job already ready
grows into the rest of the cluster, not into their room (``actions/owed``)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import numpy.typing as npt
import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod
from tests.scheduler.harness import Scenario, run
from volcano_py.resources import Resource
from volcano_py.scheduler.actions.owed import Owed, OwedGang, awaiting_pods, fits_all, owed_to_admitted
from volcano_py.scheduler.framework.snapshot import Snapshot

SAME_SECOND = "2026-01-01T00:00:00Z"
CPU = 1000  # millicores
GREEDY = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
- plugins:
  - {name: overcommit}
  - {name: drf, enablePreemptable: false}
  - {name: predicates}
  - {name: proportion}
  - {name: nodeorder}
  - {name: binpack}
"""


def _snapshot(phase: str, min_member: int, min_cpu: int | None, pods: list[str]) -> Snapshot:
    """PodGroup ``pg`` in ``phase`` and its pods: ``pending``, ``running`` (1 cpu on n0), or ``gated``."""
    builder = make_pg("pg", min_member, phase=phase)
    if min_cpu is not None:
        builder = builder.min_res(cpu=min_cpu)
    objs = []
    for i, state in enumerate(pods):
        pod = make_pod(f"p{i}").req(cpu="1").group("pg")
        if state == "running":
            pod = pod.running("n0")
        elif state == "gated":
            pod = pod.gates("example.com/hold")
        objs.append(pod.obj())
    return Snapshot.build(nodes=[make_node("n0", cpu="16").obj()], pods=objs, podgroups=[builder.obj()])


@pytest.mark.parametrize(
    ("phase", "min_member", "min_cpu", "pods", "owed"),
    [
        pytest.param("Inqueue", 2, 2, [], (2, 1), id="admitted-no-pods-yet-owed-its-minimum"),
        pytest.param("Inqueue", 2, 2, ["pending"], (2, 1), id="admitted-one-of-two-pods-owed-its-minimum"),
        pytest.param("Inqueue", 2, 2, ["pending", "pending"], None, id="admitted-with-its-pods-owed-nothing"),
        pytest.param("Inqueue", 3, 3, ["running"], (2, 1), id="owed-less-the-pods-holding-room"),
        pytest.param("Inqueue", 3, 4, [], (3, 2), id="an-uneven-share-rounds-up"),
        pytest.param("Inqueue", 2, 2, ["gated"], (2, 1), id="a-gated-pod-holds-no-room"),
        pytest.param("Pending", 2, 2, [], None, id="not-admitted-owed-nothing"),
        pytest.param("Running", 2, 2, ["running"], None, id="running-owed-nothing"),
        pytest.param("Inqueue", 2, None, [], None, id="no-min-resources-owed-nothing"),
    ],
)
def test_awaiting_pods(
    phase: str, min_member: int, min_cpu: int | None, pods: list[str], owed: tuple[int, int] | None
) -> None:
    """``owed``: (pods owed, whole cpus each, rounded up) or None."""
    job = _snapshot(phase, min_member, min_cpu, pods).jobs["default/pg"]
    gang = awaiting_pods(job)
    if owed is None:
        assert gang is None
    else:
        assert gang is not None
        assert (gang.count, -(-gang.each.amount("cpu") // CPU)) == owed


def test_owed_to_admitted_names_the_gangs_waiting_for_pods() -> None:
    pgs = [make_pg(n, 2).min_res(cpu=2, memory="1Gi").obj() for n in ("b", "a", "ready")]
    pods = [make_pod(f"r{i}").req(cpu="1").group("ready").obj() for i in range(2)]
    plain = make_pod("plain").req(cpu="1").obj()  # its own (shadow) job, never owed anything
    snapshot = Snapshot.build(nodes=[make_node("n0").obj()], pods=[*pods, plain], podgroups=pgs)
    owed = owed_to_admitted(snapshot.jobs.values())
    assert sorted((g.job, g.count, g.each) for g in owed.gangs) == [
        ("default/a", 2, Resource({"cpu": CPU, "memory": 512 * 1024**2})),
        ("default/b", 2, Resource({"cpu": CPU, "memory": 512 * 1024**2})),
    ]
    assert (
        owed.reason() == "room kept for admitted PodGroups default/a, default/b until their pods are created"
    )


def _rows(*rows: tuple[int, ...]) -> npt.NDArray[np.int64]:
    return np.array(rows, dtype=np.int64).reshape(len(rows), -1)


@pytest.mark.parametrize(
    ("free", "demands", "fits"),
    [
        # columns: pods, cpu (whole cpus, for the table's sake)
        pytest.param(_rows((10, 4)), [((1, 2), 2)], True, id="exactly-enough-on-one-node"),
        pytest.param(_rows((10, 3)), [((1, 2), 2)], False, id="one-cpu-short"),
        pytest.param(
            _rows((10, 1), (10, 1), (10, 1), (10, 1)), [((1, 2), 1)], False, id="slivers-hold-no-whole-pod"
        ),
        pytest.param(_rows((10, 3), (10, 3)), [((1, 2), 2)], True, id="one-pod-on-each-of-two-nodes"),
        pytest.param(_rows((10, 4), (10, 2)), [((1, 2), 2), ((1, 2), 1)], True, id="two-gangs-fill-it"),
        pytest.param(_rows((10, 4), (10, 2)), [((1, 2), 2), ((1, 2), 2)], False, id="two-gangs-one-too-many"),
        pytest.param(_rows((1, 8)), [((1, 1), 2)], False, id="pod-slots-count"),
        pytest.param(_rows((10, -2), (10, 2)), [((1, 2), 1)], True, id="an-overcommitted-node-lends-nothing"),
        pytest.param(_rows((10, 0)), [], True, id="nothing-owed"),
    ],
)
def test_fits_all(
    free: npt.NDArray[np.int64], demands: list[tuple[tuple[int, int], int]], fits: bool
) -> None:
    rows = [(np.array(each, dtype=np.int64), count) for each, count in demands]
    assert fits_all(free, rows) is fits


@pytest.mark.parametrize(
    ("jobs", "reason"),
    [
        pytest.param(("ns/a",), "room kept for admitted PodGroup ns/a until its pods are created", id="one"),
        pytest.param(
            ("ns/e", "ns/b", "ns/c", "ns/d", "ns/a"),
            "room kept for admitted PodGroups ns/a, ns/b, ns/c and 2 more until their pods are created",
            id="many-named-then-counted",
        ),
    ],
)
def test_reason(jobs: tuple[str, ...], reason: str) -> None:
    assert Owed(tuple(OwedGang(job, Resource({"cpu": 1}), 1) for job in jobs)).reason() == reason


def _three_jobs(others: dict[str, tuple[str, int]]) -> list[dict[str, object]]:
    """Job ``a`` (12 pending pods) and the other jobs: name -> (PodGroup phase, pods created so far)."""
    return [make_pod(f"a{i}").req(cpu="1").group("a").created(SAME_SECOND).obj() for i in range(12)] + [
        make_pod(f"{name}{i}").req(cpu="1").group(name).created(SAME_SECOND).obj()
        for name, (_, count) in others.items()
        for i in range(count)
    ]


@pytest.mark.parametrize("conf", [pytest.param(None, id="default-cpsat"), pytest.param(GREEDY, id="greedy")])
@pytest.mark.parametrize(
    ("others", "placed"),
    [
        # The e2e shape: three Jobs (minAvailable 2 of 12 one-cpu pods) admitted together on 12 cpus; a
        # session started as soon as a's pods were created gave a all 12 and b and c never ran.
        pytest.param(
            {"b": ("Inqueue", 0), "c": ("Inqueue", 1)}, {"a": 8}, id="admitted-gangs-awaiting-pods-keep-room"
        ),
        pytest.param(
            {"b": ("Pending", 0), "c": ("Pending", 0)}, {"a": 8}, id="admitted-by-this-sessions-enqueue"
        ),
        pytest.param(
            {"b": ("Inqueue", 12), "c": ("Inqueue", 0)}, {"a": 5, "b": 5}, id="jobs-with-pods-share-the-rest"
        ),
        pytest.param({}, {"a": 12}, id="nothing-owed-a-job-takes-all"),
        pytest.param({"b": ("Running", 0)}, {"a": 12}, id="a-running-gang-is-owed-nothing"),
    ],
)
def test_a_ready_job_does_not_grow_into_room_owed_to_admitted_gangs(
    conf: str | None, others: dict[str, tuple[str, int]], placed: dict[str, int]
) -> None:
    nodes = [make_node(f"n{i}", cpu="4", memory="16Gi").obj() for i in range(3)]
    podgroups = [make_pg("a", 2).created(SAME_SECOND).min_res(cpu=2).obj()]
    podgroups += [
        make_pg(name, 2, phase=phase).created(SAME_SECOND).min_res(cpu=2).obj()
        for name, (phase, _) in others.items()
    ]
    result = run(Scenario(nodes=nodes, pods=_three_jobs(others), podgroups=podgroups, conf=conf))
    assert dict(Counter(bind.job.removeprefix("default/") for bind in result.binds)) == placed
    if placed == {"a": 8}:
        why = result.explanations["default/a"]
        assert (
            "room kept for admitted PodGroups default/b, default/c until their pods are created"
            in why.message
        )


@pytest.mark.parametrize("conf", [pytest.param(None, id="default-cpsat"), pytest.param(GREEDY, id="greedy")])
def test_once_their_pods_exist_the_admitted_gangs_get_the_room_kept_for_them(conf: str | None) -> None:
    # The next session of the shape above: a runs 8 of its pods, b's and c's 12 pods each have been created.
    nodes = [make_node(f"n{i}", cpu="4", memory="16Gi").obj() for i in range(3)]
    podgroups = [make_pg(name, 2).created(SAME_SECOND).min_res(cpu=2).obj() for name in "abc"]
    pods = [make_pod(f"a{i}").req(cpu="1").group("a").running(f"n{i // 4}").obj() for i in range(8)]
    pods += [make_pod(f"a{i}").req(cpu="1").group("a").obj() for i in range(8, 12)]
    pods += [make_pod(f"{job}{i}").req(cpu="1").group(job).obj() for job in "bc" for i in range(12)]
    result = run(Scenario(nodes=nodes, pods=pods, podgroups=podgroups, conf=conf))
    assert dict(Counter(bind.job.removeprefix("default/") for bind in result.binds)) == {"b": 2, "c": 2}


@pytest.mark.parametrize("conf", [pytest.param(None, id="default-cpsat"), pytest.param(GREEDY, id="greedy")])
def test_the_hold_counts_whole_pods_not_slivers(conf: str | None) -> None:
    # As on kind: a DaemonSet pod takes 100m of each 4-cpu node, so 15.6 cpus hold only 12 one-cpu pods. Two
    # Jobs with their pods and a third just admitted: the third keeps two whole places, not 2 of the 15.6.
    nodes = [make_node(f"n{i}", cpu="4", memory="16Gi").obj() for i in range(4)]
    pods = [make_pod(f"kindnet-{i}").req(cpu="100m", memory="50Mi").running(f"n{i}").obj() for i in range(4)]
    pods += [make_pod(f"{job}{i}").req(cpu="1").group(job).obj() for job in "ab" for i in range(12)]
    podgroups = [make_pg("a", 2).min_res(cpu=2).obj(), make_pg("b", 2).min_res(cpu=2).obj()]
    podgroups.append(make_pg("c", 2, phase="Pending").min_res(cpu=2).obj())
    result = run(Scenario(nodes=nodes, pods=pods, podgroups=podgroups, conf=conf))
    assert dict(Counter(bind.job.removeprefix("default/") for bind in result.binds)) == {"a": 5, "b": 5}
