"""reclaim: a queue below its deserved share takes back from queues above theirs, as scenario data.

Each case builds a cluster with queues, runs one session (enqueue, allocate, reclaim, backfill) with the
capacity plugin, and states which pods a user would see evicted and which get a nominated node.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.scheduler.evict_harness import RECLAIM_CONF, Cluster

Case = Callable[[], Cluster]
CPU4 = {"cpu": "4"}


def nodes(n: int, cpu: int = 4) -> Cluster:
    return Cluster().nodes_named("n", n, cpu=cpu)


def two_queues(a: dict[str, str], b: dict[str, str], **b_kw: object) -> Cluster:
    return nodes(2).queue("qa", deserved=a).queue("qb", deserved=b, **b_kw)  # type: ignore[arg-type]


CASES = [
    pytest.param(
        lambda: (
            two_queues(CPU4, CPU4)
            .job("b1", queue="qb", cpu="4", running_on=["n0"])
            .job("b2", queue="qb", cpu="4", running_on=["n1"], created=1)
            .job("a", queue="qa", cpu="4", pending=1, created=2)
        ),
        {"b2-0"},
        {"a-0": "n1"},
        id="reclaim-from-one-over-served-queue-youngest-first",
    ),
    pytest.param(
        lambda: (
            nodes(2)
            .queue("qa", deserved={"cpu": "6"})
            .queue("qb", deserved={"cpu": "1"})
            .queue("qc", deserved={"cpu": "1"})
            .job("b", queue="qb", cpu="4", running_on=["n0"])
            .job("c", queue="qc", cpu="4", running_on=["n1"], created=1)
            .job("a", queue="qa", cpu="3", pending=2, created=2)
        ),
        {"b-0", "c-0"},
        {"a-0", "a-1"},
        id="reclaim-from-two-over-served-queues",
    ),
    pytest.param(
        lambda: (
            two_queues(CPU4, CPU4, reclaimable=False)
            .job("b1", queue="qb", cpu="4", running_on=["n0"])
            .job("b2", queue="qb", cpu="4", running_on=["n1"], created=1)
            .job("a", queue="qa", cpu="4", pending=1, created=2)
        ),
        set(),
        set(),
        id="no-reclaim-from-reclaimable-false-queue",
    ),
    pytest.param(
        lambda: (
            two_queues(CPU4, {"cpu": "8"})
            .job("b1", queue="qb", cpu="4", running_on=["n0"])
            .job("b2", queue="qb", cpu="4", running_on=["n1"], created=1)
            .job("a", queue="qa", cpu="4", pending=1, created=2)
        ),
        set(),
        set(),
        id="no-reclaim-from-queue-at-its-deserved-share",
    ),
    pytest.param(
        lambda: (
            two_queues({"cpu": "2"}, {"cpu": "2"})
            .job("a0", queue="qa", cpu="2", running_on=["n0"])
            .job("b1", queue="qb", cpu="2", running_on=["n0"])
            .job("b2", queue="qb", cpu="4", running_on=["n1"], created=1)
            .job("a", queue="qa", cpu="2", pending=1, created=2)
        ),
        set(),
        set(),
        id="no-reclaim-for-queue-already-at-its-deserved-share",
    ),
    pytest.param(
        lambda: (
            two_queues(CPU4, CPU4)
            .job("b1", queue="qb", cpu="4", running_on=["n0"])
            .job("b2", queue="qb", cpu="4", running_on=["n1"], created=1)
            .job("a", queue="qa", cpu="1", pending=1, created=2)
        ),
        {"b2-0"},
        {"a-0": "n1"},
        id="request-smaller-than-one-victim-evicts-that-victim",
    ),
    pytest.param(
        lambda: (
            two_queues(CPU4, CPU4)
            .job("b1", queue="qb", cpu="2", running_on=["n0"])
            .job("b2", queue="qb", cpu="2", running_on=["n0"], created=1)
            .job("b3", queue="qb", cpu="2", running_on=["n1"], created=2)
            .job("b4", queue="qb", cpu="2", running_on=["n1"], created=3)
            .job("a", queue="qa", cpu="4", pending=1, created=4)
        ),
        {"b3-0", "b4-0"},
        {"a-0": "n1"},
        id="request-larger-than-one-victim-evicts-several-on-one-node",
    ),
    pytest.param(
        lambda: (
            nodes(2)
            .queue("qa", deserved={"cpu": "6"})
            .queue("qb", deserved={"cpu": "4"}, guarantee={"cpu": "4"})
            .job("b1", queue="qb", cpu="4", running_on=["n0"])
            .job("b2", queue="qb", cpu="2", running_on=["n1"], created=1)
            .job("a0", queue="qa", cpu="2", running_on=["n1"], created=1)
            .job("a", queue="qa", cpu="4", pending=1, created=2)
        ),
        set(),
        set(),
        id="no-reclaim-below-a-guarantee",
    ),
    pytest.param(
        lambda: (
            nodes(2)
            .queue("qa", deserved={"cpu": "6"})
            .queue("qb", deserved={"cpu": "2"}, guarantee={"cpu": "2"})
            .job("b1", queue="qb", cpu="4", running_on=["n0"])
            .job("b2", queue="qb", cpu="2", running_on=["n1"], created=1)
            .job("a0", queue="qa", cpu="2", running_on=["n1"], created=1)
            .job("a", queue="qa", cpu="4", pending=1, created=2)
        ),
        {"b1-0"},
        {"a-0": "n0"},
        id="reclaim-down-to-a-guarantee",
    ),
    pytest.param(
        lambda: (
            nodes(3)
            .queue("org", capability=CPU4)
            .queue("team", parent="org", deserved={"cpu": "8"})
            .queue("other", deserved={"cpu": "4"})
            .job("o", queue="other", cpu="4", running_on=["n0", "n1"], min_member=1)
            .job("t0", queue="team", cpu="4", running_on=["n2"])
            .job("t", queue="team", cpu="4", pending=1, created=2)
        ),
        set(),
        set(),
        id="child-capped-by-its-parent-reclaims-nothing",
    ),
    pytest.param(
        lambda: (
            nodes(2)
            .queue("org", deserved={"cpu": "8"})
            .queue("t1", parent="org", deserved=CPU4)
            .queue("t2", parent="org", deserved=CPU4)
            .job("b", queue="t2", cpu="4", running_on=["n0", "n1"], min_member=1)
            .job("a", queue="t1", cpu="4", pending=1, created=2)
        ),
        {"b-0"},
        {"a-0": "n0"},
        id="sibling-reclaims-within-its-parent",
    ),
    pytest.param(
        lambda: (
            nodes(3)
            .queue("A", deserved={"cpu": "6"})
            .queue("a1", parent="A", deserved={"cpu": "2"})
            .queue("a2", parent="A", deserved=CPU4)
            .queue("B", deserved={"cpu": "6"})
            .queue("b1", parent="B", deserved={"cpu": "6"})
            .queue("x", reclaimable=False)
            .job("a", queue="a1", cpu="2", running_on=["n0", "n0", "n1"], min_member=1)
            .job("b", queue="b1", cpu="2", running_on=["n1", "n2"], min_member=1)
            .job("filler", queue="x", cpu="2", running_on=["n2"])
            .job("sib", queue="a2", cpu="2", pending=1, created=3)
        ),
        {"a-0"},
        {"sib-0": "n0"},
        id="within-a-department-a-sibling-may-reclaim",
    ),
    pytest.param(
        lambda: (
            Cluster()
            .nodes_named("g", 2, cpu=16, gpu=4)
            .queue("qa", deserved={"nvidia.com/gpu": "4"})
            .queue("qb", deserved={"nvidia.com/gpu": "2"})
            .job("b", queue="qb", cpu="1", gpu=2, running_on=["g0", "g0", "g1", "g1"], min_member=1)
            .job("a", queue="qa", cpu="1", gpu=2, pending=2, created=2)
        ),
        {"b-0", "b-1"},
        {"a-0": "g0", "a-1": "g0"},
        id="gpu-only-quota-reclaims-gpus",
    ),
    pytest.param(
        lambda: (
            two_queues(CPU4, {"cpu": "1"})
            .job("gang", queue="qb", cpu="4", running_on=["n0", "n1"], min_member=2)
            .job("a", queue="qa", cpu="4", pending=1, created=2)
        ),
        {"gang-0", "gang-1"},
        {"a-0"},
        id="victim-gang-reclaimed-whole",
    ),
    pytest.param(
        lambda: (
            two_queues(CPU4, {"cpu": "6"})
            .job("gang", queue="qb", cpu="4", running_on=["n0", "n1"], min_member=2)
            .job("a", queue="qa", cpu="4", pending=1, created=2)
        ),
        set(),
        set(),
        id="victim-gang-not-broken-when-its-queue-may-give-up-only-part",
    ),
    pytest.param(
        lambda: (
            nodes(3)
            .queue("qa", deserved={"cpu": "12"})
            .queue("qb", deserved={"cpu": "8"})
            .job("b", queue="qb", cpu="4", running_on=["n0", "n1", "n2"], min_member=1)
            .job("a", queue="qa", cpu="4", pending=3, created=2)
        ),
        set(),
        set(),
        id="reclaiming-gang-all-or-nothing",
    ),
    pytest.param(
        lambda: (
            nodes(1)
            .queue("qa", deserved=CPU4)
            .job("low", queue="qa", priority="low", cpu="4", running_on=["n0"])
            .job("hi", queue="qa", priority="high", cpu="4", pending=1, created=2)
        ),
        set(),
        set(),
        id="no-reclaim-within-one-queue",
    ),
    pytest.param(
        lambda: (
            two_queues(CPU4, CPU4)
            .job(
                "b1",
                queue="qb",
                cpu="4",
                running_on=["n0"],
                pod_annotations={"volcano.sh/preemptable": "false"},
            )
            .job(
                "b2",
                queue="qb",
                cpu="4",
                running_on=["n1"],
                created=1,
                pod_annotations={"volcano.sh/preemptable": "false"},
            )
            .job("a", queue="qa", cpu="4", pending=1, created=2)
        ),
        set(),
        set(),
        id="reclaim-respects-preemptable-false",
    ),
    pytest.param(
        lambda: (
            two_queues(CPU4, CPU4)
            .job("b1", queue="qb", cpu="4", running_on=["n0"])
            .job("b2", queue="qb", cpu="4", running_on=["n1"], created=1)
            .job("a", queue="qa", cpu="4", pending=1, created=2, preemption_policy="Never")
        ),
        set(),
        set(),
        id="reclaim-respects-preemption-policy-never",
    ),
    pytest.param(
        lambda: (
            two_queues(CPU4, CPU4)
            .job("b1", queue="qb", priority="high", cpu="4", running_on=["n0"])
            .job("b2", queue="qb", priority="high", cpu="4", running_on=["n1"], created=1)
            .job("a", queue="qa", priority="low", cpu="4", pending=1, created=2)
        ),
        {"b2-0"},
        {"a-0": "n1"},
        id="reclaim-restores-deserved-regardless-of-job-priority",
    ),
]


@pytest.mark.parametrize(("build", "evicted", "nominated"), CASES)
def test_reclaim(build: Case, evicted: set[str], nominated: set[str] | dict[str, str]) -> None:
    outcome = build().run(RECLAIM_CONF)
    assert outcome.evicted == evicted
    if isinstance(nominated, dict):
        assert {name: outcome.nominated.get(name) for name in nominated} == nominated
    else:
        assert set(outcome.nominated) == nominated


def test_reclaim_evictions_name_the_reclaimer() -> None:
    outcome = (
        two_queues(CPU4, CPU4)
        .job("b1", queue="qb", cpu="4", running_on=["n0"])
        .job("b2", queue="qb", cpu="4", running_on=["n1"], created=1)
        .job("a", queue="qa", cpu="4", pending=1, created=2)
        .run(RECLAIM_CONF)
    )
    assert [(e.name, e.reason, e.preemptor) for e in outcome.result.evictions] == [
        ("b2-0", "reclaim", "default/a-0")
    ]


def test_a_queue_at_its_share_says_why_it_does_not_reclaim() -> None:
    outcome = (
        two_queues({"cpu": "2"}, {"cpu": "2"})
        .job("a0", queue="qa", cpu="2", running_on=["n0"])
        .job("b1", queue="qb", cpu="2", running_on=["n0"])
        .job("b2", queue="qb", cpu="4", running_on=["n1"], created=1)
        .job("a", queue="qa", cpu="2", pending=1, created=2)
        .run(RECLAIM_CONF)
    )
    message = outcome.result.explanations["default/a"].message
    expected = "reclaim: queue already holds its deserved share: queue 'qa' cpu: would hold 4, deserved is 2"
    assert expected in message


PROPORTION_CONF = RECLAIM_CONF.replace("name: capacity", "name: proportion")


def test_reclaim_with_the_proportion_plugin_restores_weighted_shares() -> None:
    outcome = (
        nodes(2)
        .queue("qa")
        .queue("qb")
        .job("b1", queue="qb", cpu="4", running_on=["n0"])
        .job("b2", queue="qb", cpu="4", running_on=["n1"], created=1)
        .job("a", queue="qa", cpu="4", pending=1, created=2)
        .run(PROPORTION_CONF)
    )
    assert outcome.evicted == {"b2-0"}
    assert outcome.nominated == {"a-0": "n1"}


def test_proportion_never_reclaims_from_a_queue_at_its_share() -> None:
    outcome = (
        nodes(2)
        .queue("qa")
        .queue("qb")
        .job("a0", queue="qa", cpu="4", running_on=["n0"])
        .job("b1", queue="qb", cpu="4", running_on=["n1"])
        .job("a", queue="qa", cpu="4", pending=1, created=2)
        .run(PROPORTION_CONF)
    )
    assert outcome.evicted == set()


def _departments() -> Cluster:
    return (
        nodes(3)
        .queue("A", deserved={"cpu": "6"})
        .queue("a1", parent="A", deserved={"cpu": "2"})
        .queue("a2", parent="A", deserved=CPU4)
        .queue("B", deserved={"cpu": "6"})
        .queue("b1", parent="B", deserved={"cpu": "6"})
        .queue("x", reclaimable=False)
        .job("a", queue="a1", cpu="2", running_on=["n0", "n0", "n1"], min_member=1)
        .job("b", queue="b1", cpu="2", running_on=["n1", "n2"], min_member=1)
        .job("filler", queue="x", cpu="2", running_on=["n2"])
        .job("more", queue="b1", cpu="2", pending=1, created=3)
    )


def test_the_first_tier_that_names_victims_decides_a_reclaim_as_in_volcano() -> None:
    # gang and conformance (first tier) let a pod of ``a`` go, since ``a`` runs above its minAvailable: as in
    # Volcano, the queue shares of the second tier are not asked.
    assert _departments().run(RECLAIM_CONF).evicted == {"a-0"}


def test_with_capacity_in_the_first_tier_no_department_under_its_share_is_reclaimed_from() -> None:
    conf = RECLAIM_CONF.replace("  - name: capacity\n", "").replace(
        "  - name: conformance\n", "  - name: conformance\n  - name: capacity\n"
    )
    assert "conformance\n  - name: capacity" in conf
    assert _departments().run(conf).evicted == set()


def _placeholder(node: str, cpu: str) -> dict[str, object]:
    """A pod of another scheduler filling a node, as the e2e suites' placeholders do."""
    return {
        "metadata": {"name": f"{node}-placeholder", "namespace": "default", "uid": f"ph-{node}"},
        "spec": {
            "nodeName": node,
            "schedulerName": "default-scheduler",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
        },
        "status": {"phase": "Running"},
    }


def test_a_new_queue_reclaims_from_jobs_running_above_their_minimum_whatever_their_share() -> None:
    # Volcano's e2e "Reclaim Case 10": four 4-CPU nodes, each filled by another scheduler's pod but for one
    # CPU. The queues of two running jobs (min 1, 2 pods each) hold what they ask, within their share of all
    # 16 CPUs, so proportion finds neither over its share; gang and conformance, in the first tier, still let
    # a pod above each job's minimum go, and that tier decides.
    cluster = (
        nodes(4)
        .queue("q2")
        .queue("q3")
        .job("j1", cpu="1", running_on=["n0", "n1"], min_member=1)
        .job("j2", queue="q2", cpu="1", running_on=["n2", "n3"], min_member=1, created=1)
        .job("j3", queue="q3", cpu="1", pending=1, created=2)
    )
    cluster.pods += [_placeholder(f"n{i}", "3") for i in range(4)]
    outcome = cluster.run(PROPORTION_CONF)
    assert len(outcome.evicted) == 1 and outcome.evicted < {"j1-0", "j1-1", "j2-0", "j2-1"}
    assert set(outcome.nominated) == {"j3-0"}
