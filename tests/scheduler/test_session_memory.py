"""A session leaves nothing for the garbage collector: its cluster-sized state goes with its last reference.

The scheduler runs one session per period over a mirror of the whole cluster. If a session were a reference
cycle, every one of them would wait for a full collection, which scans the whole mirror each time.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod
from tests.scheduler.evict_harness import PREEMPT_CONF
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework import session as session_module
from volcano_py.scheduler.framework.conf import VOLCANO_SHIPPED_CONF
from volcano_py.scheduler.framework.snapshot import Snapshot


@pytest.fixture
def no_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "conf_text", [None, VOLCANO_SHIPPED_CONF, PREEMPT_CONF], ids=["default", "volcano", "preempting"]
)
def test_a_session_is_freed_by_reference_counting(
    conf_text: str | None, no_collector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions: list[weakref.ref[session_module.Session]] = []
    opened = session_module.Session.open

    def tracked(self: session_module.Session) -> None:
        sessions.append(weakref.ref(self))
        opened(self)

    monkeypatch.setattr(session_module.Session, "open", tracked)
    nodes = [make_node(f"n{i}", cpu="8", gpu=8).obj() for i in range(4)]
    pods = [make_pod(f"g-{i}").req(cpu="1", gpu=1).group("gang").obj() for i in range(4)]
    pods += [make_pod("big").req(cpu="64").group("big").obj()]  # unschedulable: explanations too
    groups = [make_pg("gang", 4).obj(), make_pg("big", 1).obj()]
    snapshot = Snapshot.build(nodes=nodes, pods=pods, podgroups=groups)
    result = run_session(snapshot, load_conf(conf_text), "2026-01-01T00:00:00Z")
    del snapshot
    assert len(result.binds) == 4 and "default/big" in result.explanations
    [session] = sessions
    assert session() is None
