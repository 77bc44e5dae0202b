"""Each gang gets its minimum before any grows beyond it, as in Volcano's allocate: a job is placed until it
is ready, then goes back in line behind the gangs still short of theirs (gang's job order), and grows a pod
per turn in drf's order. The cpsat placer keeps that: it solves what makes a gang ready, not all its pods."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod
from tests.scheduler.harness import Scenario, run
from volcano_py.scheduler.framework.job import JobInfo
from volcano_py.scheduler.framework.snapshot import Snapshot

SAME_SECOND = "2026-01-01T00:00:00Z"
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


@pytest.mark.parametrize("conf", [pytest.param(None, id="default-cpsat"), pytest.param(GREEDY, id="greedy")])
def test_three_elastic_gangs_on_a_full_cluster_each_get_their_minimum_and_share_the_rest(
    conf: str | None,
) -> None:
    # The shape seen on a cluster: three identical Jobs (minAvailable 2, 128 one-CPU pods) created in the
    # same second on 128 CPUs. The default conf's cpsat placed the first whole (128/0/0) and left the others
    # "over capability"; Volcano gives each its 2 first and drf evens out the rest.
    nodes = [make_node(f"n{i}", cpu="32", memory="256Gi").obj() for i in range(4)]
    podgroups, pods = [], []
    for job in "abc":
        podgroups.append(make_pg(job, 2).created(SAME_SECOND).min_res(cpu=2).obj())
        pods += [make_pod(f"{job}{i}").req(cpu="1").group(job).created(SAME_SECOND).obj() for i in range(128)]
    result = run(Scenario(nodes=nodes, pods=pods, podgroups=podgroups, conf=conf))
    placed = Counter(bind.job for bind in result.binds)
    assert sorted(placed.values()) == [42, 43, 43], placed
    phases = {u.name: u.phase.value for u in result.podgroup_updates}
    assert phases == {"a": "Running", "b": "Running", "c": "Running"}


def _job(min_available: int, roles: dict[str, int], ready: dict[str, int], pending: list[str]) -> JobInfo:
    """A job with ``ready`` running pods per role and pending pods of the roles listed, in that order."""
    pg = make_pg("pg", min_available).task_min(**roles).obj()
    pods = [
        make_pod(f"r-{role}-{i}").req(cpu="1").group("pg", role).running("n0").obj()
        for role, n in ready.items()
        for i in range(n)
    ]
    pods += [make_pod(f"p{i}-{role}").req(cpu="1").group("pg", role).obj() for i, role in enumerate(pending)]
    snapshot = Snapshot.build(nodes=[make_node("n0", cpu="64").obj()], pods=pods, podgroups=[pg])
    return snapshot.jobs["default/pg"]


@pytest.mark.parametrize(
    ("min_available", "roles", "ready", "pending", "needed"),
    [
        pytest.param(3, {}, {"w": 1}, ["w"] * 5, ["p0-w", "p1-w"], id="the-first-ones-up-to-min-available"),
        pytest.param(2, {}, {"w": 2}, ["w"] * 3, [], id="a-ready-job-needs-none"),
        pytest.param(4, {}, {}, ["w"] * 2, ["p0-w", "p1-w"], id="fewer-pending-than-needed-all"),
        pytest.param(
            2, {"ps": 1, "w": 1}, {}, ["w", "w", "ps"], ["p0-w", "p2-ps"], id="each-role-short-first"
        ),
        pytest.param(
            3, {"ps": 1}, {"w": 1}, ["w", "w", "ps"], ["p0-w", "p2-ps"], id="role-shortfall-then-the-rest"
        ),
    ],
)
def test_needed_to_be_ready(
    min_available: int, roles: dict[str, int], ready: dict[str, int], pending: list[str], needed: list[str]
) -> None:
    job = _job(min_available, roles, ready, pending)
    order = sorted(job.pending_tasks, key=lambda t: t.name)
    assert [t.name for t in job.needed_to_be_ready(order)] == needed
