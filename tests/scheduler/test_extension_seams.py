"""The seams later work plugs into: a job placer replacing greedy placement, per-plugin enable flags,
and registry errors."""

from __future__ import annotations

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod
from volcano_py.scheduler.builtin import default_registry
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.arguments import Arguments
from volcano_py.scheduler.framework.extension import Placed
from volcano_py.scheduler.framework.job import JobInfo
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.framework.statement import Statement


class LastNodePlacer:
    """Puts every pod of a gang on the last node, or declines jobs named ``greedy-*``."""

    name = "lastnode"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()

    def place_job(self, ssn: Session, stmt: Statement, job: JobInfo) -> Placed | None:
        if job.name.startswith("greedy"):
            return None
        for task in job.pending_tasks:
            stmt.allocate(task, len(ssn.nodes) - 1)
        return Placed(allocated=len(job.tasks), pipelined=0)


CONF = """
actions: "allocate"
tiers:
- plugins: [{name: gang}, {name: lastnode}]
- plugins: [{name: predicates}, {name: nodeorder}]
"""


def snapshot(*groups: str) -> Snapshot:
    pods = [make_pod(f"{g}-{i}").req(cpu=1).group(g).obj() for g in groups for i in range(2)]
    return Snapshot.build(
        nodes=[make_node("a").obj(), make_node("b").obj(), make_node("z").obj()],
        pods=pods,
        podgroups=[make_pg(g, 2).obj() for g in groups],
    )


def test_a_job_placer_plugin_replaces_greedy_placement_and_can_decline() -> None:
    registry = default_registry()
    registry.add_plugin("lastnode", LastNodePlacer)
    result = run_session(
        snapshot("solver", "greedy"), load_conf(CONF, registry=registry), "t", registry=registry
    )
    placed = {b.name: b.node for b in result.binds}
    assert placed["solver-0"] == placed["solver-1"] == "z"
    # Declined: the greedy path spreads the gang (least requested) over the emptiest nodes.
    assert {placed["greedy-0"], placed["greedy-1"]} == {"a", "b"}


def test_registering_a_name_twice_is_refused() -> None:
    registry = default_registry()
    with pytest.raises(ValueError, match="plugin 'gang' is registered twice"):
        registry.add_plugin("gang", LastNodePlacer)  # type: ignore[arg-type]


def test_enable_predicate_false_switches_the_predicate_off() -> None:
    conf = """
actions: "allocate"
tiers:
- plugins: [{name: gang}, {name: predicates, enablePredicate: false}]
"""
    snap = Snapshot.build(
        nodes=[make_node("tainted").taint("dedicated", "x").obj()],
        pods=[make_pod("p").req(cpu=1).group("pg").obj()],
        podgroups=[make_pg("pg").obj()],
    )
    result = run_session(snap, load_conf(conf), "t")
    assert [b.node for b in result.binds] == ["tainted"]


def test_enable_job_ready_false_lets_a_partial_gang_bind() -> None:
    conf = """
actions: "allocate"
tiers:
- plugins: [{name: gang, enableJobReady: false, enableJobPipelined: false}, {name: predicates}]
"""
    snap = Snapshot.build(
        nodes=[make_node("n", cpu=2).obj()],
        pods=[make_pod(f"w{i}").req(cpu=1).group("pg").obj() for i in range(3)],
        podgroups=[make_pg("pg", 3).obj()],
    )
    result = run_session(snap, load_conf(conf), "t")
    assert len(result.binds) == 2
