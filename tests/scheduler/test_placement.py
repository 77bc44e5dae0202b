"""Greedy placement equals placing pods one at a time with every node re-scored (Volcano's loop), and
the fast cpu/memory score path equals the general formulas."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scheduler.builders import make_node, make_pg, make_pod
from volcano_py.scheduler.actions.placement import Candidates
from volcano_py.scheduler.builtin import default_registry
from volcano_py.scheduler.core import load_conf
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.plugins import scoring

BINPACK = """
actions: "allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: nodeorder, arguments: {mostrequested.weight: 2}}, {name: binpack}]
"""


def session(used: list[tuple[int, int]], conf: str | None, gang: int, cpu: int, gpu: int) -> Session:
    nodes = [make_node(f"n{i:02d}", cpu=16, memory="64Gi", gpu=8).obj() for i in range(len(used))]
    running = [
        make_pod(f"r{i}").req(cpu=c, memory=f"{c * 2}Gi", gpu=g).scheduler("other").running(f"n{i:02d}").obj()
        for i, (c, g) in enumerate(used)
        if c or g
    ]
    pods = [
        make_pod(f"w{i}").req(cpu=cpu, memory=f"{cpu * 3}Gi", gpu=gpu).group("pg").obj() for i in range(gang)
    ]
    snapshot = Snapshot.build(nodes=nodes, pods=running + pods, podgroups=[make_pg("pg", gang).obj()])
    ssn = Session(snapshot, load_conf(conf), default_registry(), now="2026-01-01T00:00:00Z")
    ssn.open()
    return ssn


def naive(ssn: Session, gang: int) -> list[int]:
    """Volcano's loop: for each pod, score every node that fits and take the best (first on ties)."""
    task = ssn.jobs["default/pg"].pending_tasks[0]
    klass = ssn.task_class(task)
    placed: list[int] = []
    free = ssn.table.free.copy()
    used = ssn.table.used.copy()
    for _ in range(gang):
        rows = np.flatnonzero(np.all(ssn.table.free >= klass.vec, axis=1) & ssn.predicate(klass).ok)
        if rows.size == 0:
            break
        row = int(rows[int(np.argmax(ssn.node_scores(klass, rows)))])
        ssn.table.charge(row, klass.vec)
        placed.append(row)
    ssn.table.used[:] = used
    ssn.table.free[:] = free
    return placed


def ladder(ssn: Session, gang: int) -> list[int]:
    task = ssn.jobs["default/pg"].pending_tasks[0]
    klass = ssn.task_class(task)
    candidates = Candidates(ssn, klass, gang)
    placed: list[int] = []
    for _ in range(gang):
        choice = candidates.best()
        if choice is None or not choice[1]:
            break
        ssn.table.charge(choice[0], klass.vec)
        candidates.took(choice[0], True)
        placed.append(choice[0])
    return placed


@settings(max_examples=60, deadline=None)
@given(
    used=st.lists(st.tuples(st.integers(0, 16), st.integers(0, 8)), min_size=1, max_size=12),
    gang=st.integers(1, 20),
    cpu=st.integers(1, 6),
    gpu=st.integers(0, 4),
    packing=st.booleans(),
)
def test_ladder_placement_equals_rescoring_every_pod(
    used: list[tuple[int, int]], gang: int, cpu: int, gpu: int, packing: bool
) -> None:
    conf = BINPACK if packing else None
    expected = naive(session(used, conf, gang, cpu, gpu), gang)
    assert ladder(session(used, conf, gang, cpu, gpu), gang) == expected


def test_fast_cpu_memory_scores_equal_general_formulas() -> None:
    ssn = session([(3, 1), (10, 0), (0, 0), (16, 8)], None, 1, 2, 0)
    klass = ssn.task_class(ssn.jobs["default/pg"].pending_tasks[0])
    rows = np.arange(4, dtype=np.int64)
    plugin = ssn.plugin("nodeorder")
    got = plugin.node_order(ssn, klass, rows, np.zeros(4, dtype=np.int64))  # type: ignore[union-attr]
    dims = [ssn.table.index["cpu"], ssn.table.index["memory"]]
    alloc = ssn.table.allocatable[:, dims]
    before = ssn.table.used[:, dims]
    after = before + klass.vec[dims]
    # The taint score: none untolerated, 100 times Volcano's default weight of 3.
    want = scoring.least_requested(alloc, after) + scoring.balanced(alloc, before, after) + 300.0
    assert np.allclose(got, want)


def test_a_gpu_pods_balance_counts_its_gpus_and_the_pods_of_its_class_placed_before_it() -> None:
    ssn = session([(3, 1), (10, 0), (0, 0), (6, 6)], None, 2, 2, 1)
    klass = ssn.task_class(ssn.jobs["default/pg"].pending_tasks[0])
    rows = np.arange(4, dtype=np.int64)
    extra = np.array([0, 1, 0, 2], dtype=np.int64)  # pods of its class this plan has put there already
    plugin = ssn.plugin("nodeorder")
    got = plugin.node_order(ssn, klass, rows, extra)  # type: ignore[union-attr]
    table = ssn.table
    two = [table.index["cpu"], table.index["memory"]]
    three = [*two, table.index["nvidia.com/gpu"]]
    before = table.used[:, three] + np.outer(extra, klass.vec[three])
    after = before + klass.vec[three]
    least = scoring.least_requested(table.allocatable[:, two], after[:, :2])
    want = least + scoring.balanced(table.allocatable[:, three], before, after) + 300.0
    assert np.allclose(got, want)
    # Counted without the GPUs, the balance reads otherwise on these nodes.
    without = scoring.balanced(table.allocatable[:, two], before[:, :2], after[:, :2])
    assert not np.allclose(got, least + without + 300.0)
