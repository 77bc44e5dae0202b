"""preempt: gang-aware eviction within a queue, as scenario data.

Each case builds a cluster, runs one session (enqueue, allocate, preempt, backfill) and states which pods
a user would see evicted and which pods get a nominated node. Nodes have 8 cpu unless a case says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.scheduler.evict_harness import PREEMPT_CONF, Cluster

Case = Callable[[], Cluster]
KEEP = {"volcano.sh/preemptable": "false"}


def four_cpu_nodes(n: int) -> Cluster:
    return Cluster().nodes_named("n", n, cpu=4)


CASES = [
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("low", priority="low", cpu="2", running_on=["n0", "n0", "n1", "n1"], min_member=1)
            .job("hi", priority="high", cpu="2", pending=2)
        ),
        {"low-0", "low-1"},
        {"hi-0", "hi-1"},
        id="high-priority-gang-preempts-just-enough-low-pods",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("low", priority="low", cpu="4", running_on=["n0"], min_member=1)
            .job("mid", priority="high", cpu="4", running_on=["n1"], min_member=1, created=1)
            .job("hi", priority="high", cpu="4", pending=2, created=2)
        ),
        set(),
        set(),
        id="no-eviction-when-victims-free-only-part-of-the-gang",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("low", priority="low", cpu="2", running_on=["n0", "n1"], min_member=1)
            .job("hi", priority="high", cpu="4", pending=3)
        ),
        set(),
        set(),
        id="no-eviction-when-idle-plus-evictable-is-not-enough",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(1)
            .job("a", priority="mid", cpu="4", running_on=["n0"])
            .job("b", priority="mid", cpu="4", pending=1, created=5)
        ),
        set(),
        set(),
        id="equal-priority-never-preempts",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(1)
            .job("a", priority="high", cpu="4", running_on=["n0"])
            .job("b", priority="low", cpu="4", pending=1, created=5)
        ),
        set(),
        set(),
        id="lower-priority-never-preempts-higher",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(1)
            .queue("qa")
            .queue("qb")
            .job("low", queue="qb", priority="low", cpu="4", running_on=["n0"])
            .job("hi", queue="qa", priority="high", cpu="4", pending=1)
        ),
        set(),
        set(),
        id="no-preemption-across-queues",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(1)
            .job("low", priority="low", cpu="4", running_on=["n0"], pod_annotations=KEEP)
            .job("hi", priority="high", cpu="4", pending=1)
        ),
        set(),
        set(),
        id="preemptable-false-is-never-a-victim",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("keep", priority="low", cpu="4", running_on=["n0"], pod_annotations=KEEP)
            .job("low", priority="low", cpu="4", running_on=["n1"], created=1)
            .job("hi", priority="high", cpu="4", pending=1, created=2)
        ),
        {"low-0"},
        {"hi-0"},
        id="preemptable-false-pod-skipped-for-another-victim",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(1)
            .job("sys", namespace="kube-system", priority="low", cpu="4", running_on=["n0"])
            .job("hi", namespace="kube-system", priority="high", cpu="4", pending=1)
        ),
        set(),
        set(),
        id="kube-system-pods-are-never-victims",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(1)
            .job("crit", priority="low", pod_priority="system-cluster-critical", cpu="4", running_on=["n0"])
            .job("hi", priority="high", cpu="4", pending=1)
        ),
        set(),
        set(),
        id="system-critical-pods-are-never-victims",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(1)
            .job("low", priority="low", cpu="4", running_on=["n0"])
            .job("hi", priority="high", cpu="4", pending=1, preemption_policy="Never")
        ),
        set(),
        set(),
        id="preemption-policy-never-does-not-preempt",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("gang", priority="low", cpu="4", running_on=["n0", "n1"], min_member=2)
            .job("hi", priority="high", cpu="4", pending=2)
        ),
        {"gang-0", "gang-1"},
        {"hi-0", "hi-1"},
        id="victim-gang-evicted-whole",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("gang", priority="low", cpu="4", running_on=["n0", "n1"], min_member=2)
            .job("hi", priority="high", cpu="4", pending=1)
        ),
        {"gang-0", "gang-1"},
        {"hi-0"},
        id="victim-gang-is-never-left-below-min-available",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(3)
            .job("gang", priority="low", cpu="4", running_on=["n0", "n1"], min_member=2)
            .job("single", priority="low", cpu="4", running_on=["n2"], created=1)
            .job("hi", priority="high", cpu="4", pending=1, created=2)
        ),
        {"single-0"},
        {"hi-0"},
        id="one-pod-victim-preferred-over-a-whole-gang",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("small-a", priority="low", cpu="2", running_on=["n0"])
            .job("small-b", priority="low", cpu="2", running_on=["n0"])
            .job("big", priority="low", cpu="4", running_on=["n1"])
            .job("hi", priority="high", cpu="4", pending=1, created=1)
        ),
        {"big-0"},
        {"hi-0": "n1"},
        id="fewest-pods-plan-wins",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("mid", priority="mid", cpu="4", running_on=["n0"])
            .job("low", priority="low", cpu="4", running_on=["n1"])
            .job("hi", priority="high", cpu="4", pending=1, created=1)
        ),
        {"low-0"},
        {"hi-0": "n1"},
        id="lowest-priority-victim-wins",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("old", priority="low", cpu="4", running_on=["n0"], created=1)
            .job("young", priority="low", cpu="4", running_on=["n1"], created=9)
            .job("hi", priority="high", cpu="4", pending=1, created=10)
        ),
        {"young-0"},
        {"hi-0": "n1"},
        id="youngest-victim-wins",
    ),
    pytest.param(
        lambda: (
            Cluster()
            .node("n0", cpu=8, gpu=2)
            .job("cpu", priority="low", cpu="4", running_on=["n0"])
            .job("gpu", priority="low", cpu="1", gpu=2, running_on=["n0"], created=1)
            .job("hi", priority="high", cpu="1", gpu=2, pending=1, created=2)
        ),
        {"gpu-0"},
        {"hi-0": "n0"},
        id="gpu-preemptor-evicts-gpu-pod-not-cpu-pod",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(4)
            .job("low", priority="low", cpu="4", running_on=["n0", "n1", "n2", "n3"], min_member=1)
            .job("hi", priority="high", cpu="4", pending=4, created=1)
        ),
        {"low-0", "low-1", "low-2", "low-3"},
        {"hi-0", "hi-1", "hi-2", "hi-3"},
        id="gang-spanning-four-nodes-evicts-on-each",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("low", priority="low", cpu="4", running_on=["n0", "n1"], min_member=1)
            .job("hi1", priority="high", cpu="4", pending=1, created=1)
            .job("hi2", priority="high", cpu="4", pending=1, created=2)
        ),
        {"low-0", "low-1"},
        {"hi1-0", "hi2-0"},
        id="two-starving-jobs-each-get-their-own-victim",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("low", priority="low", cpu="4", running_on=["n0"])
            .job("hi", priority="high", cpu="4", pending=1, created=1)
        ),
        set(),
        set(),
        id="fits-on-idle-node-so-allocate-binds-without-eviction",
    ),
    pytest.param(
        lambda: four_cpu_nodes(1).job(
            "mixed", priority="mid", pending_priority="high", cpu="4", running_on=["n0"], pending=1
        ),
        {"mixed-0"},
        {"mixed-1": "n0"},
        id="within-a-job-higher-priority-pod-replaces-lower",
    ),
    pytest.param(
        lambda: four_cpu_nodes(1).job(
            "same", priority="mid", cpu="4", running_on=["n0"], pending=1, min_member=1
        ),
        set(),
        set(),
        id="within-a-job-equal-pod-priority-never-replaces",
    ),
    pytest.param(
        lambda: (
            four_cpu_nodes(2)
            .job("low", priority="low", cpu="2", running_on=["n0", "n1"], min_member=1)
            .job("mid", priority="mid", cpu="2", running_on=["n0", "n1"], min_member=1, created=1)
            .job("hi", priority="high", cpu="4", pending=1, created=2)
        ),
        {"low-0", "mid-0"},
        {"hi-0": "n0"},
        id="victims-of-two-priorities-combine-on-one-node",
    ),
]


@pytest.mark.parametrize(("build", "evicted", "nominated"), CASES)
def test_preempt(build: Case, evicted: set[str], nominated: set[str] | dict[str, str]) -> None:
    outcome = build().run()
    assert outcome.evicted == evicted
    if isinstance(nominated, dict):
        assert {name: outcome.nominated.get(name) for name in nominated} == nominated
    else:
        assert set(outcome.nominated) == nominated


def test_preemptor_pods_are_nominated_not_bound_and_victims_name_them() -> None:
    outcome = (
        four_cpu_nodes(1)
        .job("low", priority="low", cpu="4", running_on=["n0"])
        .job("hi", priority="high", cpu="4", pending=1, created=1)
        .run()
    )
    assert outcome.nominated == {"hi-0": "n0"}
    assert "hi-0" not in outcome.bound
    assert [(e.name, e.reason, e.preemptor) for e in outcome.result.evictions] == [
        ("low-0", "preempt", "default/hi-0")
    ]


def test_idle_room_binds_and_preempt_leaves_the_job_alone() -> None:
    outcome = (
        four_cpu_nodes(2)
        .job("low", priority="low", cpu="4", running_on=["n0"])
        .job("hi", priority="high", cpu="4", pending=1, created=1)
        .run()
    )
    assert outcome.bound == {"hi-0"}
    assert outcome.evicted == set()


def test_elastic_victim_loses_one_pod_and_keeps_its_gang() -> None:
    outcome = (
        four_cpu_nodes(3)
        .job("elastic", priority="low", cpu="4", running_on=["n0", "n1", "n2"], min_member=2)
        .job("hi", priority="high", cpu="4", pending=1, created=1)
        .run()
    )
    assert len(outcome.evicted) == 1
    assert outcome.evicted <= {"elastic-0", "elastic-1", "elastic-2"}
    assert set(outcome.nominated) == {"hi-0"}


# drf judges victims beside priority: a lower tier is not asked once the first names victims (Volcano's rule).
DRF_CONF = PREEMPT_CONF.replace("  - name: drf\n    enablePreemptable: false\n", "").replace(
    "  - name: conformance\n", "  - name: conformance\n  - name: drf\n"
)


def _share_inverting() -> Cluster:
    # hi already holds 3 of 4 nodes; taking the last pod of low would leave low with less than hi.
    return (
        four_cpu_nodes(4)
        .job("hi", priority="high", cpu="4", running_on=["n0", "n1", "n2"], pending=1, min_member=4)
        .job("low", priority="low", cpu="4", running_on=["n3"], created=1)
    )


def test_drf_preemptable_refuses_a_share_inverting_preemption() -> None:
    assert "conformance\n  - name: drf\n- plugins" in DRF_CONF
    assert _share_inverting().run(DRF_CONF).evicted == set()


def test_without_drf_preemptable_the_same_preemption_happens() -> None:
    assert _share_inverting().run(PREEMPT_CONF).evicted == {"low-0"}


def test_a_gang_that_cannot_preempt_says_why() -> None:
    outcome = (
        four_cpu_nodes(2)
        .job("low", priority="low", cpu="2", running_on=["n0", "n1"], min_member=1)
        .job("hi", priority="high", cpu="4", pending=3)
        .run()
    )
    assert outcome.evicted == set()
    message = outcome.result.explanations["default/hi"].message
    assert "preempt: lower-priority pods in queue default cannot free enough for it" in message


def test_victim_gangs_stay_whole_even_with_the_gang_plugin_not_judging_victims() -> None:
    conf = PREEMPT_CONF.replace("  - name: gang\n", "  - name: gang\n    enablePreemptable: false\n")
    assert "enablePreemptable: false\n  - name: conformance" in conf
    outcome = (
        four_cpu_nodes(2)
        .job("gang", priority="low", cpu="4", running_on=["n0", "n1"], min_member=2)
        .job("hi", priority="high", cpu="4", pending=1, created=1)
        .run(conf)
    )
    assert outcome.evicted == {"gang-0", "gang-1"}
    assert set(outcome.nominated) == {"hi-0"}
