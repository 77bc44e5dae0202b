"""Statement: changes apply at once, discard undoes exactly, commit decides, nesting hands changes up."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduler.builders import make_node, make_pg, make_pod
from volcano_py.scheduler.builtin import default_registry
from volcano_py.scheduler.core import load_conf
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.framework.statement import StatementClosed
from volcano_py.scheduler.framework.status import TaskStatus


def session() -> Session:
    snapshot = Snapshot.build(
        nodes=[make_node("a", cpu=8).obj(), make_node("b", cpu=8).obj()],
        pods=[make_pod(f"w{i}").req(cpu=2).group("pg").obj() for i in range(3)]
        + [make_pod("run").req(cpu=4).group("old").running("b").obj()],
        podgroups=[make_pg("pg", 3).obj(), make_pg("old", phase="Running").obj()],
    )
    ssn = Session(snapshot, load_conf(), default_registry(), now="2026-01-01T00:00:00Z")
    ssn.open()
    return ssn


def state(ssn: Session) -> tuple[object, ...]:
    t = ssn.table
    tasks = tuple(
        (task.uid, task.status, task.node_name) for job in ssn.jobs.values() for task in job.tasks.values()
    )
    counts = tuple((job.uid, job.ready_task_num, job.waiting_task_num) for job in ssn.jobs.values())
    on_nodes = tuple(tuple(sorted(n.tasks)) for n in ssn.nodes)
    drf = ssn.plugin("drf")
    shares = tuple(sorted(drf.share.items())) if drf is not None else ()  # type: ignore[attr-defined]
    pipelined = (t.pipelined.tobytes(), t.pipelined_tasks)
    return (t.used.tobytes(), pipelined, t.releasing.tobytes(), tasks, counts, on_nodes, shares)


def test_discard_undoes_a_failed_gang_exactly() -> None:
    ssn = session()
    before = state(ssn)
    job = ssn.jobs["default/pg"]
    old = ssn.jobs["default/old"].tasks["uid-default-run"]
    with ssn.statement() as stmt:
        tasks = job.pending_tasks
        stmt.allocate(tasks[0], 0)
        stmt.allocate(tasks[1], 0)
        stmt.evict(old, "preempted")
        stmt.pipeline(tasks[2], 1)
        assert state(ssn) != before
        assert job.ready_task_num == 2 and job.waiting_task_num == 1
        assert ssn.table.pipelined_tasks == 1  # so room_now leaves out what it will take on node b
        stmt.discard()
    assert state(ssn) == before
    assert ssn.binds == [] and ssn.evictions == []


def test_allocate_changes_node_state_at_once() -> None:
    ssn = session()
    task = ssn.jobs["default/pg"].pending_tasks[0]
    with ssn.statement() as stmt:
        stmt.allocate(task, 0)
        assert ssn.table.to_resource(ssn.table.idle[0])["cpu"] == 6000
        assert task.status is TaskStatus.ALLOCATED and task.node_name == "a"
        stmt.discard()


def test_commit_turns_allocations_into_binds_and_evictions() -> None:
    ssn = session()
    job = ssn.jobs["default/pg"]
    old = ssn.jobs["default/old"].tasks["uid-default-run"]
    with ssn.statement() as stmt:
        stmt.allocate(job.pending_tasks[0], 0)
        stmt.evict(old, "reclaimed")
        decisions = stmt.commit()
    assert [type(d).__name__ for d in decisions] == ["Bind", "Evict"]
    assert ssn.binds[0].node == "a" and ssn.binds[0].job == "default/pg"
    assert ssn.evictions[0].reason == "reclaimed"
    assert old.status is TaskStatus.RELEASING
    assert int(ssn.table.releasing[1].sum()) > 0


def test_statement_left_open_is_discarded() -> None:
    ssn = session()
    before = state(ssn)
    with ssn.statement() as stmt:
        stmt.allocate(ssn.jobs["default/pg"].pending_tasks[0], 0)
    assert state(ssn) == before


def test_exception_inside_statement_discards_and_propagates() -> None:
    ssn = session()
    before = state(ssn)
    with pytest.raises(RuntimeError, match="boom"), ssn.statement() as stmt:
        stmt.allocate(ssn.jobs["default/pg"].pending_tasks[0], 0)
        raise RuntimeError("boom")
    assert state(ssn) == before


def test_nested_commit_hands_changes_to_outer_which_can_still_discard() -> None:
    ssn = session()
    before = state(ssn)
    tasks = ssn.jobs["default/pg"].pending_tasks
    with ssn.statement() as outer:
        outer.allocate(tasks[0], 0)
        with ssn.statement() as inner:
            inner.allocate(tasks[1], 1)
            assert inner.commit() == []
        assert ssn.binds == []
        outer.discard()
    assert state(ssn) == before


def test_closed_statement_refuses_more_changes() -> None:
    ssn = session()
    tasks = ssn.jobs["default/pg"].pending_tasks
    with ssn.statement() as stmt:
        stmt.commit()
        with pytest.raises(StatementClosed):
            stmt.allocate(tasks[0], 0)


def test_allocating_a_non_pending_task_is_refused() -> None:
    ssn = session()
    old = ssn.jobs["default/old"].tasks["uid-default-run"]
    with ssn.statement() as stmt, pytest.raises(ValueError, match="not Pending"):
        stmt.allocate(old, 0)


def test_used_resources_match_the_sum_of_tasks_after_commit() -> None:
    ssn = session()
    job = ssn.jobs["default/pg"]
    with ssn.statement() as stmt:
        for task in job.pending_tasks:
            stmt.allocate(task, 0)
        stmt.commit()
    node = ssn.nodes[0]
    assert np.array_equal(ssn.table.used[0], ssn.table.vector(node.used, pods=len(node.tasks)))


@settings(max_examples=40, deadline=None)
@given(
    ops=st.lists(st.tuples(st.sampled_from(["allocate", "pipeline", "evict"]), st.integers(0, 1)), max_size=6)
)
def test_any_sequence_of_changes_discards_back_to_the_start(ops: list[tuple[str, int]]) -> None:
    ssn = session()
    before = state(ssn)
    pending = list(ssn.jobs["default/pg"].pending_tasks)
    running = [ssn.jobs["default/old"].tasks["uid-default-run"]]
    with ssn.statement() as stmt:
        for op, row in ops:
            if op == "evict" and running:
                stmt.evict(running.pop(), "test")
            elif op in ("allocate", "pipeline") and pending:
                getattr(stmt, op)(pending.pop(), row)
        stmt.discard()
    assert state(ssn) == before
