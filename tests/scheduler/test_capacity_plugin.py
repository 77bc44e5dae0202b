"""capacity plugin in whole sessions: enqueue, allocate and reclaim against per-queue quota."""

from __future__ import annotations

from tests.scheduler.evict_harness import NOW, Cluster
from volcano_py.resources import Resource
from volcano_py.scheduler.actions.victims import EVICTABLE
from volcano_py.scheduler.builtin import default_registry
from volcano_py.scheduler.core import load_conf
from volcano_py.scheduler.framework.session import Session
from volcano_py.scheduler.plugins.capacity import CapacityPlugin

CAPACITY_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: capacity
  - name: nodeorder
"""

DOCS_CONF = """
actions: "enqueue, allocate, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: capacity
"""


def test_allocate_stops_at_the_queue_capability() -> None:
    outcome = (
        Cluster()
        .node("n0", cpu=16)
        .queue("qa", capability={"cpu": "4"})
        .job("a", queue="qa", cpu="2", pending=3, min_member=1)
        .run(CAPACITY_CONF)
    )
    assert len(outcome.bound) == 2


def test_enqueue_refuses_beyond_capability_and_says_which_resource() -> None:
    outcome = (
        Cluster()
        .node("n0", cpu=16)
        .queue("qa", capability={"cpu": "4"})
        .job("a", queue="qa", cpu="2", pending=3, phase="Pending", min_resources=True)
        .run(CAPACITY_CONF)
    )
    assert outcome.bound == set()
    message = outcome.result.explanations["default/a"].message
    assert "queue 'qa' cpu: would hold 6, capability is 4" in message
    update = {u.name: u for u in outcome.result.podgroup_updates}["a"]
    assert update.phase.value == "Pending"


def test_child_queue_is_capped_by_its_parent() -> None:
    outcome = (
        Cluster()
        .node("n0", cpu=16)
        .queue("org", capability={"cpu": "4"})
        .queue("team", parent="org", capability={"cpu": "12"})
        .job("t", queue="team", cpu="2", pending=4, min_member=1)
        .run(CAPACITY_CONF)
    )
    assert len(outcome.bound) == 2


def test_siblings_share_their_parent_capability() -> None:
    outcome = (
        Cluster()
        .node("n0", cpu=16)
        .queue("org", capability={"cpu": "6"})
        .queue("t1", parent="org")
        .queue("t2", parent="org")
        .job("a", queue="t1", cpu="2", running_on=["n0", "n0"], min_member=1)
        .job("b", queue="t2", cpu="2", pending=3, min_member=1, created=1)
        .run(CAPACITY_CONF)
    )
    assert outcome.bound == {"b-0"}


def test_gpu_only_capability_leaves_cpu_unlimited() -> None:
    outcome = (
        Cluster()
        .node("n0", cpu=32, gpu=8)
        .queue("gpu", capability={"nvidia.com/gpu": "2"})
        .job("cpu-heavy", queue="gpu", cpu="8", pending=3, min_member=1)
        .job("gpu-heavy", queue="gpu", cpu="1", gpu=1, pending=4, min_member=1, created=1)
        .run(CAPACITY_CONF)
    )
    assert {n for n in outcome.bound if n.startswith("cpu-heavy")} == {
        "cpu-heavy-0",
        "cpu-heavy-1",
        "cpu-heavy-2",
    }
    assert len([n for n in outcome.bound if n.startswith("gpu-heavy")]) == 2


def test_queue_below_its_share_is_served_first() -> None:
    outcome = (
        Cluster()
        .node("n0", cpu=4)
        .queue("busy", deserved={"cpu": "4"})
        .queue("idle", deserved={"cpu": "4"})
        .node("n1", cpu=4)
        .job("b0", queue="busy", cpu="2", running_on=["n1", "n1"], min_member=1)
        .job("b", queue="busy", cpu="4", pending=1, created=1)
        .job("i", queue="idle", cpu="4", pending=1, created=2)
        .run(CAPACITY_CONF)
    )
    assert outcome.bound == {"i-0"}


def test_jobs_in_a_parent_queue_are_not_scheduled() -> None:
    outcome = (
        Cluster()
        .node("n0", cpu=8)
        .queue("org")
        .queue("team", parent="org")
        .job("p", queue="org", cpu="1", pending=1)
        .run(CAPACITY_CONF)
    )
    assert outcome.bound == set()
    assert "leaf queue" in outcome.result.explanations["default/p"].message


def test_closed_queue_allocates_nothing() -> None:
    outcome = (
        Cluster()
        .node("n0", cpu=8)
        .queue("shut", state="Closed")
        .job("s", queue="shut", cpu="1", pending=1)
        .run(CAPACITY_CONF)
    )
    assert outcome.bound == set()


def test_queue_updates_report_the_deserved_share() -> None:
    outcome = (
        Cluster()
        .node("n0", cpu=8)
        .queue("qa", deserved={"cpu": "2"}, guarantee={"cpu": "3"})
        .run(CAPACITY_CONF)
    )
    qa = {u.name: u for u in outcome.result.queue_updates}["qa"]
    assert qa.deserved is not None
    assert qa.deserved.amount("cpu") == 3000


def test_docs_worked_example_end_to_end() -> None:
    """docs/queues.md: vision is admitted within its deserved share and reclaims one nlp job, whole."""
    outcome = (
        Cluster()
        .node("n0", cpu=32, gpu=4)
        .node("n1", cpu=32, gpu=4)
        .queue(
            "research",
            capability={"nvidia.com/gpu": "8"},
            deserved={"cpu": "32", "nvidia.com/gpu": "6"},
            guarantee={"nvidia.com/gpu": "2"},
        )
        .queue(
            "vision", parent="research", deserved={"nvidia.com/gpu": "4"}, guarantee={"nvidia.com/gpu": "2"}
        )
        .queue("nlp", parent="research", deserved={"nvidia.com/gpu": "2"})
        .queue(
            "prod",
            reclaimable=False,
            deserved={"cpu": "32", "nvidia.com/gpu": "2"},
            guarantee={"cpu": "16", "nvidia.com/gpu": "2"},
        )
        .job("serve", queue="prod", cpu="1", gpu=2, running_on=["n0"])
        .job("nlp1", queue="nlp", cpu="1", gpu=1, running_on=["n0", "n0"], created=1)
        .job("nlp2", queue="nlp", cpu="1", gpu=1, running_on=["n1", "n1"], created=2)
        .job(
            "train", queue="vision", cpu="1", gpu=1, pending=4, phase="Pending", min_resources=True, created=3
        )
        .run(DOCS_CONF)
    )
    assert outcome.evicted == {"nlp2-0", "nlp2-1"}
    assert outcome.nominated == {f"train-{i}": "n1" for i in range(4)}
    update = {u.name: u for u in outcome.result.podgroup_updates}["train"]
    assert update.phase.value == "Inqueue"


def test_a_discarded_statement_leaves_queue_usage_as_it_was() -> None:
    cluster = (
        Cluster()
        .node("n0", cpu=8)
        .queue("qa", capability={"cpu": "4"})
        .job("a", queue="qa", cpu="2", running_on=["n0"])
        .job("b", queue="qa", cpu="2", pending=1, created=1)
    )
    ssn = Session(cluster.snapshot(), load_conf(CAPACITY_CONF), default_registry(), now=NOW)
    ssn.open()
    plugin = ssn.plugin("capacity")
    assert isinstance(plugin, CapacityPlugin) and plugin.ledger is not None
    ledger = plugin.ledger
    assert ledger.allocated("qa") == Resource.of(cpu=2, memory="1Gi")
    pending = ssn.jobs["default/b"].pending_tasks[0]
    running = ssn.jobs["default/a"].tasks_in(*EVICTABLE)[0]
    with ssn.statement() as stmt:
        stmt.allocate(pending, 0)
        assert ledger.allocated("qa") == Resource.of(cpu=4, memory="2Gi")
        assert not ledger.allocatable("qa", Resource.of(cpu=1)).ok
        stmt.evict(running, "test")
        assert ledger.allocated("qa") == Resource.of(cpu=2, memory="1Gi")
        stmt.discard()
    assert ledger.allocated("qa") == Resource.of(cpu=2, memory="1Gi")
    assert ledger.allocated("root") == Resource.of(cpu=2, memory="1Gi")
