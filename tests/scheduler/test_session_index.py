"""The session's shortcuts over a busy cluster answer as the long way round would.

A session looks only at the jobs that had pending pods when it opened (``waiting_jobs``), and its node
table sums each node's charged requests in one numpy pass. Both are checked here against the plain
definition, on clusters where most jobs are running plain pods, as in a real one.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod
from volcano_py.resources import Resource
from volcano_py.scheduler.builtin import default_registry
from volcano_py.scheduler.core import load_conf
from volcano_py.scheduler.framework.node import NodeInfo
from volcano_py.scheduler.framework.nodetable import NodeTable
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.framework.status import OCCUPYING_STATUSES, TaskStatus
from volcano_py.scheduler.framework.task import TaskInfo

NOW = "2026-01-01T00:00:00Z"


def _session() -> Session:
    nodes = [make_node(f"n{i}", cpu="8").obj() for i in range(2)]
    running = [make_pod(f"plain-{i}").req(cpu="1").running(f"n{i % 2}").obj() for i in range(4)]
    waiting_plain = make_pod("plain-new").req(cpu="1").obj()
    gang_running = [make_pod(f"old-{i}").req(cpu="1").group("old").running("n0").obj() for i in range(2)]
    gang_waiting = [make_pod(f"new-{i}").req(cpu="1").group("new").obj() for i in range(2)]
    short = make_pod("short-0").req(cpu="1").group("short").obj()
    snapshot = Snapshot.build(
        nodes=nodes,
        pods=[*running, *gang_running, waiting_plain, *gang_waiting, short],
        podgroups=[
            make_pg("old", 2, phase="Running").obj(),
            make_pg("new", 2, phase="Inqueue").obj(),
            make_pg("short", 3, phase="Inqueue").obj(),
        ],
    )
    return Session(snapshot, load_conf(None), default_registry(), now=NOW)


def test_waiting_jobs_are_those_with_pending_pods_in_session_order() -> None:
    ssn = _session()
    expected = [job for job in ssn.jobs.values() if job.pending_tasks]
    assert [job.uid for job in ssn.waiting_jobs()] == [job.uid for job in expected]
    assert {job.uid for job in ssn.waiting_jobs()} == {"default/plain-new", "default/new", "default/short"}


def test_a_job_the_session_drops_is_no_longer_waiting() -> None:
    ssn = _session()
    ssn.open()  # gang finds "short" invalid (1 of 3 pods) and drops it from the session
    assert "default/short" not in ssn.jobs
    assert {job.uid for job in ssn.waiting_jobs()} == {"default/plain-new", "default/new"}
    ssn.close()
    ssn.release()


def test_a_job_placed_in_the_session_stays_listed_but_has_nothing_pending() -> None:
    ssn = _session()
    ssn.open()
    for name in ssn.conf.actions:
        ssn.registry.action(name, ssn.conf.configurations.get(name)).execute(ssn)
    still = {job.uid: len(job.pending_tasks) for job in ssn.waiting_jobs()}
    assert still == {"default/plain-new": 0, "default/new": 0}
    ssn.close()
    ssn.release()


def _charged(nodes: list[NodeInfo], table: NodeTable, statuses: frozenset[TaskStatus]) -> np.ndarray:
    """The definition: every task's request row added to its node's row, one task at a time."""
    out = np.zeros_like(table.used)
    for row, node in enumerate(nodes):
        for task in node.tasks.values():
            if task.status in statuses:
                out[row] += table.vector(task.resreq)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_node_table_sums_each_nodes_tasks_by_status(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [NodeInfo.from_node(make_node(f"n{i}", cpu="64", gpu=8).obj()) for i in range(7)]
    sizes = [Resource.of(cpu=f"{rng.randrange(1, 9) * 250}m", gpu=rng.randrange(3)) for _ in range(4)]
    statuses = [TaskStatus.RUNNING, TaskStatus.BOUND, TaskStatus.RELEASING, TaskStatus.PIPELINED]
    for i in range(60):
        task = TaskInfo(f"t{i}", "default", f"t{i}", None, "", rng.choice(sizes), 0, rng.choice(statuses))
        nodes[rng.randrange(len(nodes))].tasks[task.uid] = task
    table = NodeTable(nodes)
    assert (table.used == _charged(nodes, table, OCCUPYING_STATUSES)).all()
    assert (table.releasing == _charged(nodes, table, frozenset({TaskStatus.RELEASING}))).all()
    assert (table.pipelined == _charged(nodes, table, frozenset({TaskStatus.PIPELINED}))).all()
    assert (table.free == table.allocatable - table.used).all()


def test_node_table_of_empty_nodes_has_nothing_charged() -> None:
    nodes = [NodeInfo.from_node(make_node(f"n{i}").obj()) for i in range(3)]
    table = NodeTable(nodes)
    assert not table.used.any() and not table.releasing.any() and not table.pipelined.any()
