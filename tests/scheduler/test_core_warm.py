"""A core that read the cluster ahead (a restart's resumed mirror) decides as one that did not."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from tests.scheduler.builders import make_node, make_pg, make_pod, make_queue
from volcano_py.scheduler.core import ClusterObjects
from volcano_py.scheduler.runtime.cycle import default_core

NOW = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)


def _before() -> ClusterObjects:
    nodes = [make_node(f"n{i}", cpu="4").obj() for i in range(3)]
    running = [make_pod(f"r{i}").req(cpu="2").group("held").running(f"n{i}").obj() for i in range(3)]
    waiting = [make_pod(f"w{i}").req(cpu="1").group("new").obj() for i in range(2)]
    groups = [make_pg("held", 3, phase="Running").obj(), make_pg("new", 3, phase="Inqueue").obj()]
    return ClusterObjects(
        nodes=nodes, pods=[*running, *waiting], podgroups=groups, queues=[make_queue("default").obj()]
    )


def test_a_warmed_core_binds_what_a_cold_one_binds() -> None:
    before = _before()
    # The gang's last pod arrived while the watches caught up; everything else is the same objects.
    after = replace(before, pods=[*before.pods, make_pod("w2").req(cpu="1").group("new").obj()])
    warmed, cold = default_core(("volcano",)), default_core(("volcano",))
    warmed.warm(before)
    conf = warmed.load_conf(None)
    binds = {
        name: sorted((b.name, b.node) for b in core.run(after, conf, NOW).result.binds)
        for name, core in (("warmed", warmed), ("cold", cold))
    }
    assert binds["warmed"] == binds["cold"]
    assert len(binds["cold"]) == 3  # the gang of three fits in the room the running pods leave
