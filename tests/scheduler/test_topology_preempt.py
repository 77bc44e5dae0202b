"""preempt with ``enableTopologyAwarePreemption``: victims found node by node, with pod affinity re-checked.

The scenario of Volcano's own e2e spec "should preempt low priority pod with anti-affinity constraint",
as data: one blocker per node (anti-affine to each other), one bystander next to each blocker, and a
high-priority gang that must not share a node with a blocker. Freeing room is not enough: the blockers
must go, and the bystanders, though lower in priority, must stay.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.evict_harness import PREEMPT_CONF, Cluster
from volcano_py.scheduler.actions.topology_preempt import CandidateLimits

TOPOLOGY_CONF = (
    PREEMPT_CONF + "configurations:\n- name: preempt\n  arguments:\n    enableTopologyAwarePreemption: true\n"
)


def _term(app: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}


def _required(kind: str, *apps: str) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [_term(a) for a in apps]}}


def blockers_and_bystanders(nodes: int = 3, *, blocker_priority: str = "mid") -> Cluster:
    on = [f"n{i}" for i in range(nodes)]
    return (
        Cluster()
        .nodes_named("n", nodes, cpu=4)
        .job(
            "blocker",
            priority=blocker_priority,
            cpu="1",
            running_on=on,
            min_member=1,
            pod_labels={"app": "blocker"},
            affinity=_required("podAntiAffinity", "blocker"),
        )
        .job(
            "bystander",
            priority="low",
            cpu="1",
            running_on=on,
            min_member=1,
            created=1,
            pod_labels={"app": "bystander"},
            affinity={**_required("podAffinity", "blocker"), **_required("podAntiAffinity", "bystander")},
        )
    )


def with_preemptor(cluster: Cluster, pods: int) -> Cluster:
    return cluster.job(
        "hi",
        priority="high",
        cpu="3",
        pending=pods,
        created=2,
        pod_labels={"app": "preemptor"},
        affinity=_required("podAntiAffinity", "blocker"),
    )


def test_only_the_blockers_go_and_the_lower_priority_bystanders_stay() -> None:
    outcome = with_preemptor(blockers_and_bystanders(3), 2).run(TOPOLOGY_CONF)
    assert len(outcome.evicted) == 2
    assert all(name.startswith("blocker-") for name in outcome.evicted)
    nominated = outcome.nominated
    assert set(nominated) == {"hi-0", "hi-1"}
    freed = {f"n{name.split('-')[1]}" for name in outcome.evicted}
    assert set(nominated.values()) == freed


def test_without_the_argument_room_alone_is_freed_and_nothing_is_evicted() -> None:
    # The gang plan counts resources; the anti-affinity keeps every node closed, so no plan is made.
    outcome = with_preemptor(blockers_and_bystanders(3), 2).run()
    assert outcome.evicted == set()
    assert outcome.nominated == {}


def test_a_victim_gang_goes_whole_when_its_last_pod_must_go() -> None:
    # Three preemptor pods need every blocker gone: the blockers' gang may go whole (never left below its
    # minMember while it holds pods), and the bystanders still stay.
    outcome = with_preemptor(blockers_and_bystanders(3), 3).run(TOPOLOGY_CONF)
    assert outcome.evicted == {"blocker-0", "blocker-1", "blocker-2"}
    assert set(outcome.nominated) == {"hi-0", "hi-1", "hi-2"}


def test_a_blocker_of_equal_priority_is_never_a_victim() -> None:
    cluster = blockers_and_bystanders(2, blocker_priority="high")
    outcome = with_preemptor(cluster, 1).run(TOPOLOGY_CONF)
    assert outcome.evicted == set()


def test_a_pod_that_fits_somewhere_is_placed_without_victims() -> None:
    cluster = blockers_and_bystanders(2).node("spare", cpu=4)
    outcome = with_preemptor(cluster, 1).run(TOPOLOGY_CONF)
    assert outcome.evicted == set()
    assert outcome.bound == {"hi-0"}


@pytest.mark.parametrize(
    ("limits", "nodes", "count"),
    [
        (CandidateLimits(), 5, 1),  # 10% of 5 is 0: the absolute minimum of 1
        (CandidateLimits(), 1000, 100),
        (CandidateLimits(), 5000, 100),  # capped at the absolute maximum
        (CandidateLimits(percentage=50, minimum=3, maximum=100), 4, 3),
        (CandidateLimits(percentage=100, minimum=1, maximum=100), 7, 7),
        (CandidateLimits(percentage=0, minimum=0, maximum=0), 7, 1),  # at least one node is tried
    ],
)
def test_candidate_count_follows_volcano_s_three_arguments(
    limits: CandidateLimits, nodes: int, count: int
) -> None:
    assert limits.count(nodes) == count
