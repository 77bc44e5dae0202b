"""Fair share that remembers (proportion's ``recentUsage``): the ledger's math, the plugin's use of it, and
the runtime's accrual, without a server."""

from __future__ import annotations

import math

import pytest

from tests.scheduler.evict_harness import NOW, Cluster
from volcano_py.api.constants import RECENT_USAGE_KEY
from volcano_py.api.recent_usage import RecentUsage, read_recent_usage, usage_weight_factor
from volcano_py.resources import Resource
from volcano_py.scheduler.core import load_conf
from volcano_py.scheduler.framework.arguments import ConfError
from volcano_py.scheduler.framework.decisions import QueueUpdate
from volcano_py.scheduler.framework.task import timestamp
from volcano_py.scheduler.runtime.usage_ledger import UsageLedger, half_life_of

HOUR = 3600.0
CONF = """
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
    arguments:
      recentUsage.halfLife: 1h
  - name: nodeorder
"""


def test_a_ledger_halves_every_half_life() -> None:
    ledger = RecentUsage(0.0, {"cpu": 1000.0})
    assert ledger.decayed_to(HOUR, HOUR).usage["cpu"] == pytest.approx(500.0)
    assert ledger.decayed_to(2 * HOUR, HOUR).usage["cpu"] == pytest.approx(250.0)


def test_holding_a_whole_cluster_for_ever_tends_to_a_fraction_of_one() -> None:
    ledger = RecentUsage(0.0).accrue({"cpu": 8000.0}, 50 * HOUR, HOUR)
    assert ledger.fraction({"cpu": 8000.0}, HOUR) == pytest.approx(1.0, rel=1e-6)
    # Accrual is exact whatever the step: one long interval equals many short ones.
    stepped = RecentUsage(0.0)
    for step in range(1, 61):
        stepped = stepped.accrue({"cpu": 8000.0}, step * 60.0, HOUR)
    once = RecentUsage(0.0).accrue({"cpu": 8000.0}, HOUR, HOUR)
    assert stepped.usage["cpu"] == pytest.approx(once.usage["cpu"])
    assert once.fraction({"cpu": 8000.0}, HOUR) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ('{"at": 10, "usage": {"cpu": 5}}', RecentUsage(10.0, {"cpu": 5.0})),
        ("", None),
        ("not json", None),
        ('{"usage": {"cpu": 5}}', None),  # no time: cannot be decayed
        ('{"at": 10, "usage": {"cpu": -5}}', None),
        ('{"at": "NaN", "usage": {}}', None),
    ],
)
def test_only_a_well_formed_ledger_is_read(text: str, parsed: RecentUsage | None) -> None:
    assert read_recent_usage({RECENT_USAGE_KEY: text}) == parsed


@pytest.mark.parametrize(
    ("used", "entitled", "strength", "kept"),
    [
        (0.2, 0.5, 1.0, 1.0),
        (0.5, 0.5, 1.0, 1.0),
        (1.0, 0.5, 1.0, 0.5),
        (1.0, 0.5, 2.0, 0.25),
        (1.0, 0.5, 0.0, 1.0),
        (1.0, 0.001, 1.0, 0.01),
    ],
)
def test_weight_kept_after_recent_usage(used: float, entitled: float, strength: float, kept: float) -> None:
    assert usage_weight_factor(used, entitled, strength) == pytest.approx(kept)


def _ledger(fraction_of_cluster: float, cpu: float) -> str:
    now = timestamp(NOW)
    return RecentUsage(now, {"cpu": fraction_of_cluster * cpu * HOUR / math.log(2)}).to_annotation()


def _queues(heavy: str) -> Cluster:
    ledger = {RECENT_USAGE_KEY: _ledger(0.9, 8000)}
    return (
        Cluster()
        .node("n0", cpu=8)
        .queue("qa", annotations=ledger if heavy == "qa" else None)
        .queue("qb", annotations=ledger if heavy == "qb" else None)
    )


def elastic_jobs(heavy: str) -> Cluster:
    # Eight 1-cpu pods in each queue on one 8-cpu node: proportion splits the node by weight.
    return (
        _queues(heavy)
        .job("a", queue="qa", cpu="1", pending=8, min_member=1, created=0)
        .job("b", queue="qb", cpu="1", pending=8, min_member=1, created=1)
    )


def _bound_per_job(cluster: Cluster, conf: str) -> dict[str, int]:
    bound = cluster.run(conf).bound
    return {job: sum(1 for name in bound if name.startswith(f"{job}-")) for job in ("a", "b")}


@pytest.mark.parametrize(
    ("heavy", "split"),
    [("qa", {"a": 2, "b": 5}), ("qb", {"a": 5, "b": 2}), ("none", {"a": 4, "b": 4})],
)
def test_the_queue_that_used_more_recently_deserves_less(heavy: str, split: dict[str, int]) -> None:
    # Used 0.9 of the cluster against an entitlement of 0.5: weight 1 x 0.5/0.9; deserved 8 x 0.36 = 2.9.
    assert _bound_per_job(elastic_jobs(heavy), CONF) == split


def test_without_the_argument_the_ledger_is_not_read() -> None:
    forgetful = CONF.replace("    arguments:\n      recentUsage.halfLife: 1h\n", "")
    assert "recentUsage" not in forgetful
    assert _bound_per_job(elastic_jobs("qa"), forgetful) == {"a": 4, "b": 4}


ADMIT_CONF = CONF.replace(
    "  - name: nodeorder\n",
    "  - name: nodeorder\n  - name: overcommit\n    arguments:\n      overcommit-factor: 1.0\n",
)


@pytest.mark.parametrize(("heavy", "admitted"), [("qa", "b"), ("qb", "a")])
def test_the_queue_that_used_less_recently_is_admitted_first(heavy: str, admitted: str) -> None:
    # Two Jobs not started yet (no pods), each needing the whole node: enqueue admits one.
    cluster = (
        _queues(heavy)
        .job("a", queue="qa", cpu="8", min_member=1, created=0, phase="Pending", min_resources=True)
        .job("b", queue="qb", cpu="8", min_member=1, created=1, phase="Pending", min_resources=True)
    )
    phases = {u.name: u.phase.value for u in cluster.run(ADMIT_CONF).result.podgroup_updates}
    assert phases.get(admitted) == "Inqueue"
    assert phases.get("b" if admitted == "a" else "a", "Pending") == "Pending"


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        ("recentUsage.weight: 2", "recentUsage.weight needs recentUsage.halfLife"),
        ("recentUsage.halfLife: soon", "recentUsage.halfLife' must be a positive duration"),
        ("recentUsage.halfLife: 1h\n      recentUsage.weight: -1", "recentUsage.weight"),
    ],
)
def test_bad_arguments_are_refused_by_name(arguments: str, refusal: str) -> None:
    with pytest.raises(ConfError, match=refusal):
        load_conf(CONF.replace("recentUsage.halfLife: 1h", arguments))


def test_the_runtime_accrues_and_writes_every_interval_and_resumes_a_written_ledger() -> None:
    conf = load_conf(CONF)
    assert half_life_of(conf) == HOUR
    ledger = UsageLedger(write_every=30.0)
    queues = [{"metadata": {"name": "qa", "annotations": {}}}]
    held = [QueueUpdate("qa", Resource({"cpu": 4000}))]
    assert ledger.observe(held, queues, 1000.0, HOUR) == {}
    assert ledger.observe(held, queues, 1020.0, HOUR) == {}
    due = ledger.observe(held, queues, 1031.0, HOUR)
    written = read_recent_usage({RECENT_USAGE_KEY: due["qa"]})
    assert written is not None and written.at == 1031.0
    assert written.usage["cpu"] == pytest.approx(4000 * 31.0, rel=0.01)
    # A new scheduler (a restart, a new leader) resumes from the annotation rather than from zero.
    again = UsageLedger(write_every=30.0)
    again.observe(
        held, [{"metadata": {"name": "qa", "annotations": {RECENT_USAGE_KEY: due["qa"]}}}], 1031.0, HOUR
    )
    assert again.ledgers["qa"].usage["cpu"] == pytest.approx(written.usage["cpu"])
    # A conf without recentUsage keeps nothing.
    assert ledger.observe(held, queues, 2000.0, 0.0) == {} and ledger.ledgers == {}
