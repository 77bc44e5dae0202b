"""A session placing a backlog gives its committed binds over while it runs: whole gangs, in commit order,
and exactly the binds its result lists, so the first pods bind long before a 50,000-pod session ends."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from tests.scheduler.builders import make_node, make_pg, make_pod, make_queue
from volcano_py.scheduler.core import ClusterObjects
from volcano_py.scheduler.framework.decisions import Bind
from volcano_py.scheduler.framework.session import HAND_OVER_BINDS
from volcano_py.scheduler.runtime.cycle import default_core

NOW = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
SOLO_JOBS = 230
GANG_SIZE = 40


def _backlog() -> ClusterObjects:
    nodes = [make_node(f"n{i:02}", cpu="32").obj() for i in range(20)]
    pods, groups = [], []
    for j in range(SOLO_JOBS):
        pods.append(make_pod(f"solo-{j:03}").req(cpu="1").group(f"solo-{j:03}").obj())
        groups.append(make_pg(f"solo-{j:03}").obj())
    for g in ("gang-a", "gang-b"):
        pods += [make_pod(f"{g}-{i:02}").req(cpu="1").group(g).obj() for i in range(GANG_SIZE)]
        groups.append(make_pg(g, GANG_SIZE).obj())
    # No requests: backfill places it, after allocate has handed over everything it bound.
    pods.append(make_pod("best-effort").group("loose").obj())
    groups.append(make_pg("loose").obj())
    return ClusterObjects(nodes=nodes, pods=pods, podgroups=groups, queues=[make_queue("default").obj()])


def test_binds_go_over_in_chunks_while_the_session_runs_and_the_result_lists_them_all() -> None:
    core = default_core(("volcano",))
    conf = core.load_conf(None)
    chunks: list[Sequence[Bind]] = []
    result = core.run(_backlog(), conf, NOW, hand_over=chunks.append).result
    handed = [bind for chunk in chunks for bind in chunk]
    assert len(result.binds) == SOLO_JOBS + 2 * GANG_SIZE + 1  # everything fits
    assert handed == list(result.binds)
    assert result.handed_over == len(result.binds) and result.binds_left() == ()
    # Allocate gives over every HAND_OVER_BINDS or more as it goes, the rest when it ends; backfill's one
    # best-effort pod goes when backfill ends.
    *allocate, backfill = chunks
    assert len(allocate) >= 3 and all(len(chunk) >= HAND_OVER_BINDS for chunk in allocate[:-1])
    assert [bind.name for bind in backfill] == ["best-effort"]
    for gang in ("default/gang-a", "default/gang-b"):
        holding = [chunk for chunk in chunks if any(bind.job == gang for bind in chunk)]
        assert len(holding) == 1 and sum(bind.job == gang for bind in holding[0]) == GANG_SIZE


def test_a_session_without_a_hand_over_decides_the_same_binds() -> None:
    core, other = default_core(("volcano",)), default_core(("volcano",))
    conf = core.load_conf(None)
    handed = core.run(_backlog(), conf, NOW, hand_over=lambda _binds: None).result
    kept = other.run(_backlog(), conf, NOW).result
    assert kept.binds == handed.binds
    assert kept.handed_over == 0 and kept.binds_left() == kept.binds
