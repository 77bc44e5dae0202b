"""Queue quota: the hierarchy's limits (capacity_math) and usage checks against them (capacity_ledger)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.resources import Resource
from volcano_py.scheduler.plugins.capacity_ledger import QuotaLedger
from volcano_py.scheduler.plugins.capacity_math import Limit, QueueQuota, build_tree

R = Resource.of
CLUSTER = R(cpu=100, memory="400Gi", gpu=16)


def q(name: str, parent: str = "", **kw: object) -> QueueQuota:
    return QueueQuota(name=name, parent=parent, **kw)  # type: ignore[arg-type]


def ledger(*queues: QueueQuota, cluster: Resource = CLUSTER) -> QuotaLedger:
    return QuotaLedger(build_tree(queues, cluster))


# --- limits ---------------------------------------------------------------------------------------------


def test_flat_queue_without_quota_is_limited_by_the_cluster_only() -> None:
    tree = build_tree([q("a")], CLUSTER)
    assert tree.queues["a"].real_capability == Limit(dict(CLUSTER))
    assert tree.queues["a"].deserved == Resource()
    assert tree.queues["a"].ancestors == ("root",)
    assert tree.queues["root"].children == ("a",)


def test_siblings_guarantees_are_carved_out_of_a_queues_real_capability() -> None:
    tree = build_tree([q("a", guarantee=R(cpu=30)), q("b", guarantee=R(cpu=20))], CLUSTER)
    # a may use everything but what b is guaranteed, and vice versa.
    assert tree.queues["a"].real_capability.bound("cpu") == 80_000
    assert tree.queues["b"].real_capability.bound("cpu") == 70_000
    # Guarantees add up at the root.
    assert tree.queues["root"].guarantee == R(cpu=50)


def test_gpu_only_capability_leaves_other_resources_unconstrained() -> None:
    tree = build_tree([q("gpu", capability=R(gpu=4))], Resource())
    limits = tree.queues["gpu"].real_capability
    assert limits.bound("nvidia.com/gpu") == 4_000
    assert limits.bound("cpu") is None
    assert limits.bound("memory") is None


def test_child_inherits_and_is_capped_by_its_parent_capability() -> None:
    tree = build_tree(
        [q("org", capability=R(cpu=10, gpu=4)), q("team", parent="org", capability=R(cpu=20))],
        CLUSTER,
    )
    team = tree.queues["team"]
    assert team.capability.bound("cpu") == 10_000  # capped by the parent
    assert team.capability.bound("nvidia.com/gpu") == 4_000  # inherited
    assert any("exceeds its parent 'org'" in p and "cpu" in p for p in tree.problems)


def test_deserved_is_at_least_the_guarantee_and_at_most_the_real_capability() -> None:
    tree = build_tree(
        [q("a", deserved=R(cpu=5), guarantee=R(cpu=8)), q("b", deserved=R(cpu=500), capability=R(cpu=40))],
        CLUSTER,
    )
    assert tree.queues["a"].deserved == R(cpu=8)
    assert tree.queues["b"].deserved == R(cpu=40)


def test_parent_guarantee_is_raised_to_cover_its_children() -> None:
    tree = build_tree(
        [
            q("org", guarantee=R(cpu=10)),
            q("t1", parent="org", guarantee=R(cpu=8)),
            q("t2", parent="org", guarantee=R(cpu=8)),
        ],
        CLUSTER,
    )
    assert tree.queues["org"].guarantee == R(cpu=16)
    assert any("children are guaranteed" in p for p in tree.problems)


def test_real_root_queue_capability_bounds_everything_below() -> None:
    tree = build_tree([q("root", capability=R(cpu=20)), q("a")], CLUSTER)
    assert tree.queues["a"].real_capability.bound("cpu") == 20_000


@pytest.mark.parametrize(
    ("queues", "broken", "fix"),
    [
        pytest.param([q("a", parent="nope")], "a", "is not a queue", id="missing-parent"),
        pytest.param([q("a", parent="a")], "a", "names the queue itself", id="self-parent"),
        pytest.param([q("a", parent="b"), q("b", parent="a")], "b", "forms a cycle", id="cycle"),
        pytest.param([q("a", parent="x"), q("c", parent="a")], "c", "broken", id="under-broken"),
    ],
)
def test_queues_that_cannot_be_placed_are_broken_with_the_fix(
    queues: list[QueueQuota], broken: str, fix: str
) -> None:
    tree = build_tree(queues, CLUSTER)
    assert fix in tree.broken[broken]
    verdict = QuotaLedger(tree).allocatable(broken, R(cpu=1))
    assert not verdict.ok
    assert broken in verdict.reason


def test_duplicate_queue_names_are_an_error() -> None:
    with pytest.raises(ValueError, match="listed twice"):
        build_tree([q("a"), q("a")], CLUSTER)


# --- allocate and enqueue ---------------------------------------------------------------------------------


def test_allocatable_within_capability_and_refused_beyond_it_naming_the_resource() -> None:
    book = ledger(q("a", capability=R(cpu=4)))
    assert book.allocatable("a", R(cpu=4, memory="1Gi")).ok
    book.charge("a", R(cpu=3))
    verdict = book.allocatable("a", R(cpu=2))
    assert not verdict.ok
    assert verdict.resources == ("cpu",)
    assert "queue 'a' cpu: would hold 5, capability is 4" in verdict.reason


def test_child_is_refused_when_its_parent_is_full() -> None:
    book = ledger(q("org", capability=R(cpu=10)), q("t1", parent="org"), q("t2", parent="org"))
    book.charge("t1", R(cpu=8))
    assert book.allocated("org") == R(cpu=8)
    verdict = book.allocatable("t2", R(cpu=3))
    assert not verdict.ok
    assert verdict.shortfalls[0].queue == "org"
    assert book.allocatable("t2", R(cpu=2)).ok


def test_jobs_go_to_leaf_queues_only() -> None:
    book = ledger(q("org"), q("t1", parent="org"))
    verdict = book.allocatable("org", R(cpu=1))
    assert not verdict.ok
    assert "leaf queue" in verdict.reason


def test_gpu_only_quota_limits_gpus_not_cpus() -> None:
    book = ledger(q("gpu", capability=R(gpu=2)))
    assert book.allocatable("gpu", R(cpu=90)).ok
    assert not book.allocatable("gpu", R(cpu=1, gpu=3)).ok


def test_enqueue_counts_admitted_jobs_and_discounts_elastic_usage() -> None:
    book = ledger(q("a", capability=R(cpu=10)))
    book.admit("a", R(cpu=6))
    assert not book.enqueueable("a", R(cpu=5)).ok
    assert book.enqueueable("a", R(cpu=4)).ok
    book.charge("a", R(cpu=4))
    book.stretch("a", R(cpu=4))  # a running job's extra pods, above its minimum
    assert book.enqueueable("a", R(cpu=4)).ok


def test_share_is_largest_ratio_over_deserved_resources_and_one_for_best_effort() -> None:
    book = ledger(q("a", deserved=R(cpu=10, gpu=4)), q("be"))
    book.charge("a", R(cpu=5, gpu=4, memory="100Gi"))
    assert book.share("a") == 1.0
    book.charge("a", R(gpu=2))
    assert book.share("a") == 1.5
    assert book.over_deserved("a")
    assert book.share("be") == 1.0
    assert book.headroom_to_deserved("a") == R(cpu=5)


# --- reclaim ----------------------------------------------------------------------------------------------


def test_queue_below_deserved_may_reclaim_and_at_deserved_may_not() -> None:
    book = ledger(q("a", deserved=R(cpu=10)), q("b", deserved=R(cpu=10)))
    book.charge("a", R(cpu=8))
    assert book.can_reclaim("a", R(cpu=2)).ok
    verdict = book.can_reclaim("a", R(cpu=3))
    assert not verdict.ok
    assert "deserved" in verdict.reason


def test_queue_without_deserved_cannot_reclaim() -> None:
    assert not ledger(q("be")).can_reclaim("be", R(cpu=1)).ok


def test_victim_queue_must_be_above_deserved_on_a_resource_the_victim_uses() -> None:
    book = ledger(q("a", deserved=R(cpu=10)), q("b", deserved=R(cpu=10)))
    book.charge("b", R(cpu=10))
    assert not book.can_give_up("b", R(cpu=2), "a").ok
    book.charge("b", R(cpu=2))
    assert book.can_give_up("b", R(cpu=2), "a").ok


def test_reclaim_never_takes_a_queue_below_its_guarantee() -> None:
    book = ledger(q("a", deserved=R(cpu=50)), q("b", deserved=R(cpu=5), guarantee=R(cpu=5)))
    book.charge("b", R(cpu=8))
    assert book.can_give_up("b", R(cpu=3), "a").ok
    verdict = book.can_give_up("b", R(cpu=4), "a")
    assert not verdict.ok
    assert "guarantee" in verdict.reason


def test_unreclaimable_queue_gives_nothing_up() -> None:
    book = ledger(q("a", deserved=R(cpu=10)), q("b", reclaimable=False))
    book.charge("b", R(cpu=50))
    verdict = book.can_give_up("b", R(cpu=1), "a")
    assert not verdict.ok
    assert "reclaimable: false" in verdict.reason


def test_resources_a_queue_deserves_nothing_of_are_always_reclaimable() -> None:
    book = ledger(q("a", deserved=R(cpu=10)), q("gpu", deserved=R(gpu=4)))
    book.charge("gpu", R(cpu=20))
    assert book.can_give_up("gpu", R(cpu=20), "a").ok


def test_hierarchical_reclaim_checks_the_victims_side_below_the_common_parent() -> None:
    book = ledger(
        q("A", deserved=R(cpu=50)),
        q("a1", parent="A", deserved=R(cpu=10)),
        q("a2", parent="A", deserved=R(cpu=40)),
        q("B", deserved=R(cpu=50)),
        q("b1", parent="B", deserved=R(cpu=50)),
    )
    book.charge("a1", R(cpu=30))  # a1 over its share, but A as a whole is under its own
    assert not book.can_give_up("a1", R(cpu=5), "b1").ok
    # Within A, a2 may still take back from a1.
    assert book.can_give_up("a1", R(cpu=5), "a2").ok
    book.charge("a1", R(cpu=30))  # now A is over its share too
    assert book.can_give_up("a1", R(cpu=5), "b1").ok


def test_a_queue_never_reclaims_from_itself() -> None:
    book = ledger(q("a", deserved=R(cpu=1)))
    book.charge("a", R(cpu=5))
    assert not book.can_give_up("a", R(cpu=1), "a").ok


def test_release_undoes_charge_up_the_chain() -> None:
    book = ledger(q("org"), q("t", parent="org"))
    book.charge("t", R(cpu=3))
    book.release("t", R(cpu=3))
    assert book.allocated("t") == Resource()
    assert book.allocated("org") == Resource()
    assert book.allocated("root") == Resource()


# --- the worked example of docs/queues.md -----------------------------------------------------------------


def _docs_example() -> QuotaLedger:
    return ledger(
        q("research", capability=R(gpu=8), deserved=R(cpu=32, gpu=6), guarantee=R(gpu=2)),
        q("vision", parent="research", deserved=R(gpu=4), guarantee=R(gpu=2)),
        q("nlp", parent="research", deserved=R(gpu=2)),
        q("prod", reclaimable=False, deserved=R(cpu=32, gpu=2), guarantee=R(cpu=16, gpu=2)),
        cluster=R(cpu=64, gpu=8),
    )


def test_docs_example_derived_figures() -> None:
    tree = _docs_example().tree
    figures = {
        name: (
            tree.queues[name].guarantee,
            tree.queues[name].real_capability.cap(R(cpu=1000, gpu=1000)),
            tree.queues[name].deserved,
        )
        for name in ("root", "research", "prod", "vision", "nlp")
    }
    assert figures == {
        "root": (R(cpu=16, gpu=4), R(cpu=64, gpu=8), R(cpu=64, gpu=8)),
        "research": (R(gpu=2), R(cpu=48, gpu=6), R(cpu=32, gpu=6)),
        "prod": (R(cpu=16, gpu=2), R(cpu=64, gpu=6), R(cpu=32, gpu=2)),
        "vision": (R(gpu=2), R(cpu=48, gpu=6), R(gpu=4)),
        "nlp": (Resource(), R(cpu=48, gpu=4), R(gpu=2)),
    }


def test_docs_example_reclaim_story() -> None:
    book = _docs_example()
    book.charge("prod", R(gpu=2))
    book.charge("nlp", R(gpu=4))
    gang = R(gpu=4)
    # Research is full to its real capability, but vision may still be admitted: it is within deserved.
    assert not book.allocatable("vision", gang).ok
    assert book.enqueueable("vision", gang).ok
    assert book.can_reclaim("vision", gang).ok
    assert not book.can_give_up("prod", R(gpu=1), "vision").ok
    assert book.can_give_up("nlp", R(gpu=2), "vision").ok
    book.release("nlp", R(gpu=2))
    assert book.allocatable("vision", gang).ok
    assert not book.can_give_up("nlp", R(gpu=2), "vision").ok  # nlp is back at its deserved share


def test_enqueue_refused_beyond_deserved_when_ancestors_are_full() -> None:
    book = _docs_example()
    book.charge("nlp", R(gpu=4))
    verdict = book.enqueueable("vision", R(gpu=5))
    assert not verdict.ok
    assert "queue 'research' nvidia.com/gpu: would hold 9, capability is 6" in verdict.reason


# --- properties over random hierarchies -------------------------------------------------------------------


@st.composite
def hierarchies(draw: st.DrawFn) -> list[QueueQuota]:
    count = draw(st.integers(min_value=1, max_value=8))
    queues: list[QueueQuota] = []
    for i in range(count):
        parent = draw(st.sampled_from(["", *[f"q{j}" for j in range(i)]]))
        amount = st.integers(min_value=0, max_value=40)
        cap = draw(st.one_of(st.none(), amount.map(lambda c: R(cpu=c) if c else None)))
        queues.append(
            q(
                f"q{i}",
                parent=parent,
                deserved=R(cpu=draw(amount)),
                guarantee=R(cpu=draw(st.integers(min_value=0, max_value=10))),
                capability=cap,
            )
        )
    return queues


@settings(max_examples=150, deadline=None)
@given(hierarchies())
def test_hierarchy_invariants(queues: list[QueueQuota]) -> None:
    tree = build_tree(queues, R(cpu=100))
    assert not tree.broken
    for limits in tree.queues.values():
        real = limits.real_capability.bound("cpu")
        # deserved never above what the queue may hold
        assert real is None or limits.deserved.amount("cpu") <= real
        if limits.parent is None:
            continue
        parent = tree.queues[limits.parent]
        # a child never exceeds its parent
        parent_real = parent.real_capability.bound("cpu")
        assert parent_real is None or (real is not None and real <= parent_real)
        parent_cap = parent.capability.bound("cpu")
        assert parent_cap is None or (limits.capability.bound("cpu") or 0) <= parent_cap
    for limits in tree.queues.values():
        # guarantees add up
        kids = sum(tree.queues[c].guarantee.amount("cpu") for c in limits.children)
        assert limits.guarantee.amount("cpu") >= kids
