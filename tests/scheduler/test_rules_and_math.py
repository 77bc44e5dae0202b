"""The tier-combination rules, queue share water-filling and node scores, as pure functions."""

from __future__ import annotations

import numpy as np
import pytest

from volcano_py.resources import Resource
from volcano_py.scheduler.framework import combine
from volcano_py.scheduler.framework import extension as ext
from volcano_py.scheduler.framework.status import TaskStatus
from volcano_py.scheduler.framework.task import TaskInfo
from volcano_py.scheduler.plugins import scoring
from volcano_py.scheduler.plugins.shares import QueueDemand, share, water_fill

P, A, R = ext.Vote.PERMIT, ext.Vote.ABSTAIN, ext.Vote.REJECT


def votes(*tiers: tuple[ext.Vote, ...]) -> list[list[object]]:
    return [[(lambda _job, v=v: v) for v in tier] for tier in tiers]


@pytest.mark.parametrize(
    ("tiers", "expected"),
    [
        pytest.param(((P,), (R,)), True, id="first-tier-permit-decides"),
        pytest.param(((A,), (R,)), False, id="abstaining-tier-passes-to-next"),
        pytest.param(((P, R),), False, id="reject-within-tier-wins"),
        pytest.param(((A,), (A,)), True, id="all-abstain-permits"),
        pytest.param((), True, id="no-plugins-permits"),
    ],
)
def test_vote_by_tier(tiers: tuple[tuple[ext.Vote, ...], ...], expected: bool) -> None:
    assert combine.vote_by_tier(votes(*tiers), object()) is expected  # type: ignore[arg-type]


def test_first_nonzero_order_wins() -> None:
    tiers = [[lambda a, b: 0, lambda a, b: -1], [lambda a, b: 1]]
    assert combine.first_nonzero(tiers, "x", "y") == -1
    assert combine.first_nonzero([[lambda a, b: 0]], "x", "y") == 0


def _task(name: str) -> TaskInfo:
    return TaskInfo(name, "default", name, None, "", Resource(), 0, TaskStatus.RUNNING)


def test_the_first_tier_naming_victims_decides_as_in_volcano() -> None:
    a, b, c = _task("a"), _task("b"), _task("c")
    within = [[lambda p, ts: [a, b], lambda p, ts: [b, c]]]
    assert combine.first_deciding_tier(within, a, [a, b, c]) == [b]  # one tier: what all its plugins let go
    # A lower tier is not asked once a higher one has victims.
    lower_ignored = [[lambda p, ts: [a, b]], [lambda p, ts: [c]]]
    assert combine.first_deciding_tier(lower_ignored, a, [a, b, c]) == [a, b]
    # A plugin that lets none go leaves its tier undecided: the next tier decides.
    undecided = [[lambda p, ts: [a], lambda p, ts: []], [lambda p, ts: [c]]]
    assert combine.first_deciding_tier(undecided, a, [a, b, c]) == [c]
    abstain_first = [[lambda p, ts: None], [lambda p, ts: [c]]]
    assert combine.first_deciding_tier(abstain_first, a, [a, b, c]) == [c]
    assert combine.first_deciding_tier([[lambda p, ts: [a], lambda p, ts: []]], a, [a]) == []
    assert combine.first_deciding_tier([[lambda p, ts: None]], a, [a]) == []  # nobody judged: no victims
    # Every plugin judges every candidate, not what the plugin before it let through.
    seen: list[int] = []
    counting = [[lambda p, ts: [a, b], lambda p, ts: seen.append(len(ts)) or [b]]]
    assert combine.first_deciding_tier(counting, a, [a, b, c]) == [b] and seen == [3]


def test_water_fill_splits_by_weight_and_returns_unwanted_share() -> None:
    deserved = water_fill(
        {"cpu": 12.0},
        [QueueDemand("a", 2, {"cpu": 100.0}), QueueDemand("b", 1, {"cpu": 2.0})],
    )
    # b wants only 2, so a gets the rest rather than its 2/3.
    assert deserved["b"]["cpu"] == pytest.approx(2.0)
    assert deserved["a"]["cpu"] == pytest.approx(10.0)


def test_water_fill_respects_capability_and_guarantee() -> None:
    deserved = water_fill(
        {"cpu": 10.0},
        [
            QueueDemand("capped", 5, {"cpu": 10.0}, capability={"cpu": 3.0}),
            QueueDemand("guaranteed", 1, {"cpu": 10.0}, guarantee={"cpu": 4.0}),
            QueueDemand("plain", 4, {"cpu": 10.0}),
        ],
    )
    # Volcano's rule: the weighted split, capped by capability, lifted to the guarantee; the others' room
    # is what the cluster holds minus the guarantees of the rest.
    assert deserved["capped"]["cpu"] == pytest.approx(3.0)
    assert deserved["guaranteed"]["cpu"] == pytest.approx(4.0)
    assert deserved["plain"]["cpu"] == pytest.approx(4.0)


def test_share_of_undeserved_allocation_is_full() -> None:
    assert share({"cpu": 1.0}, {}) == 1.0
    assert share({"cpu": 2.0}, {"cpu": 4.0}) == 0.5


def test_scores_spread_pack_and_binpack() -> None:
    alloc = np.array([[8000, 8], [8000, 8]], dtype=np.int64)
    used = np.array([[6000, 6], [1000, 1]], dtype=np.int64)
    assert np.argmax(scoring.least_requested(alloc, used)) == 1
    assert np.argmax(scoring.most_requested(alloc, used)) == 0
    request = np.array([1000, 2], dtype=np.int64)
    weights = np.array([1.0, 1.0])
    packed = scoring.binpack(alloc, used, request, weights)
    assert packed[0] > packed[1]
    # A node the request would overflow scores zero.
    assert scoring.binpack(alloc, used, np.array([3000, 0], dtype=np.int64), weights)[0] == 0.0


@pytest.mark.parametrize(
    ("allocatable", "before", "asked", "score"),
    [
        # Balanced before and after: the change is nothing, 75.
        ([8000, 8], [4000, 4], [1000, 1], 75.0),
        # An empty node loses its balance to a cpu-only pod: 100 -> 75, so 50 + (50 - 25) // 2.
        ([8000, 8], [0, 0], [4000, 0], 62.0),
        # A node whose memory lags its cpu gets it back: 75 -> 100.
        ([8000, 8], [4000, 0], [0, 4], 87.0),
        # nvidia.com/gpu asked: three fractions, the population deviation (0.125, 0.125, 0.25 -> 94).
        ([8000, 8, 4], [0, 0, 0], [1000, 1, 1], 72.0),
        # A resource the node does not have (or the pod does not ask, passed as 0) is left out.
        ([8000, 8, 0], [0, 0, 0], [1000, 1, 0], 75.0),
        # A fraction over 1 counts as 1.
        ([8000, 8], [8000, 8], [1000, 1], 75.0),
    ],
)
def test_balanced_scores_how_the_pod_changes_the_balance_as_kubernetes_1_36(
    allocatable: list[int], before: list[int], asked: list[int], score: float
) -> None:
    alloc = np.array([allocatable], dtype=np.int64)
    used = np.array([before], dtype=np.int64)
    assert scoring.balanced(alloc, used, used + np.array(asked)).tolist() == [score]


def test_balanced_prefers_a_node_in_use_to_an_empty_one_for_a_gpu_pod() -> None:
    # 96 cores, 384Gi, 8 GPUs; a 1-GPU pod of 12 cores and 96Gi. An empty node can only lose balance to it
    # (72); the node whose memory and GPUs lag its cpu (CPU-only pods on it) gains (76). The balance after
    # placing, scored before, picked the empty node (94 against 81 over cpu and memory), and one-pod GPU jobs
    # spread over the cluster (the openb trace: the first gang refused at 44% of the GPUs allocated).
    alloc = np.array([[96_000, 384, 8], [96_000, 384, 8]], dtype=np.int64)
    used = np.array([[0, 0, 0], [48_000, 0, 0]], dtype=np.int64)
    scores = scoring.balanced(alloc, used, used + np.array([12_000, 96, 1]))
    assert scores.tolist() == [72.0, 76.0]


def test_node_sampling_follows_volcanos_formula_and_rotates() -> None:
    from volcano_py.scheduler.framework.sampling import NodeSampling

    sampling = NodeSampling()
    assert [sampling.count(n) for n in (50, 1000, 5000, 20000)] == [50, 420, 500, 1000]
    assert NodeSampling(percentage=100).count(5000) == 5000
    feasible = np.arange(0, 1000, 2, dtype=np.int64)  # 500 feasible rows of 1,000
    first = sampling.pick(feasible, 1000, 1)
    second = sampling.pick(feasible, 1000, 1)
    assert len(first) == 420 and feasible[first[0]] == 0
    # The next search starts after the last node the previous one looked at, wrapping around.
    assert feasible[second].min() == 0 and 840 in feasible[second]
    assert len(sampling.pick(feasible, 1000, 450)) == 450


def test_node_sampling_takes_the_first_feasible_nodes_from_where_it_stopped() -> None:
    from volcano_py.scheduler.framework.sampling import NodeSampling

    rng = np.random.default_rng(7)
    for _ in range(200):
        total = int(rng.integers(101, 3000))
        feasible = np.flatnonzero(rng.random(total) < rng.uniform(0.05, 1.0)).astype(np.int64)
        sampling = NodeSampling(next_start=int(rng.integers(0, 2 * total)))
        start = sampling.next_start % total
        wanted = int(rng.integers(1, 200))
        limit = max(sampling.count(total), wanted)
        # The definition: scan the rows from ``start``, wrapping, and keep the first ``limit`` feasible ones.
        members = set(feasible.tolist())
        scan = [row for row in [*range(start, total), *range(start)] if row in members]
        expected = sorted(scan[:limit])
        picked = sampling.pick(feasible, total, wanted)
        assert feasible[picked].tolist() == expected
        if len(scan) > limit:
            assert sampling.next_start == scan[limit - 1] + 1


def test_job_sort_key_orders_as_the_comparators_do() -> None:
    import functools

    from tests.scheduler.builders import make_node, make_pg, make_pod, make_priority_class
    from volcano_py.scheduler.builtin import default_registry
    from volcano_py.scheduler.core import load_conf
    from volcano_py.scheduler.framework.session import Session
    from volcano_py.scheduler.framework.snapshot import Snapshot

    pods = [make_pod(f"r{i}").req(cpu=i + 1).group(f"pg{i}").running("n").obj() for i in range(4)]
    pods += [make_pod(f"p{i}").req(cpu=1).group(f"pg{i}").obj() for i in range(8)]
    groups = [make_pg(f"pg{i}", 1 + i % 2).priority_class("hi" if i % 3 == 0 else "").obj() for i in range(8)]
    snapshot = Snapshot.build(
        nodes=[make_node("n", cpu=64).obj()],
        pods=pods,
        podgroups=groups,
        priority_classes=[make_priority_class("hi", 100)],
    )
    ssn = Session(snapshot, load_conf(), default_registry(), now="2026-01-01T00:00:00Z")
    ssn.open()
    key = ssn.job_key()
    assert key is not None
    jobs = list(ssn.jobs.values())

    def cmp(a: object, b: object) -> int:
        return -1 if ssn.job_less(a, b) else (1 if ssn.job_less(b, a) else 0)  # type: ignore[arg-type]

    assert [j.uid for j in sorted(jobs, key=key)] == [
        j.uid for j in sorted(jobs, key=functools.cmp_to_key(cmp))
    ]
