"""A queue's ``spec.dequeueStrategy``: ``fifo`` lets no job pass a head that cannot be scheduled,
``traverse`` (Volcano's default) tries the next job. One session each, as data."""

from __future__ import annotations

import pytest

from tests.scheduler.evict_harness import PREEMPT_CONF, Cluster
from volcano_py.scheduler.framework.node import QueueInfo

ALLOCATE_ONLY = PREEMPT_CONF.replace('"enqueue, allocate, preempt, backfill"', '"allocate, backfill"')
ENQUEUE_CONF = PREEMPT_CONF.replace('"enqueue, allocate, preempt, backfill"', '"enqueue, allocate"')


def big_head_then_small(strategy: str | None, *, phase: str | None = None) -> Cluster:
    # 8 free cpus: the 12-cpu head never fits now; the 2-cpu job behind it would.
    return (
        Cluster()
        .node("n0", cpu=8)
        .queue("q", dequeue_strategy=strategy)
        .job("head", queue="q", cpu="6", pending=2, created=0, phase=phase)
        .job("small", queue="q", cpu="2", pending=1, created=1, phase=phase)
    )


@pytest.mark.parametrize(
    ("strategy", "conf", "bound"),
    [
        pytest.param("fifo", ALLOCATE_ONLY, set(), id="fifo-head-blocks-allocate"),
        pytest.param("traverse", ALLOCATE_ONLY, {"small-0"}, id="traverse-skips-the-head"),
        pytest.param(None, ALLOCATE_ONLY, {"small-0"}, id="default-is-traverse"),
        pytest.param("fifo", ENQUEUE_CONF, set(), id="fifo-head-blocks-enqueue"),
        pytest.param("traverse", ENQUEUE_CONF, {"small-0"}, id="traverse-enqueues-past-the-head"),
    ],
)
def test_the_head_blocks_only_a_fifo_queue(strategy: str | None, conf: str, bound: set[str]) -> None:
    phase = "Pending" if conf is ENQUEUE_CONF else None
    cluster = big_head_then_small(strategy, phase=phase)
    for podgroup in cluster.podgroups:
        if phase:
            podgroup["spec"]["minResources"] = {
                "cpu": "12" if podgroup["metadata"]["name"] == "head" else "2"
            }
    outcome = cluster.run(conf)
    assert outcome.bound == bound


def test_a_held_job_says_which_head_it_waits_for() -> None:
    outcome = big_head_then_small("fifo").run(ALLOCATE_ONLY)
    why = outcome.result.explanations["default/small"].message
    assert "strict FIFO order (spec.dequeueStrategy: fifo)" in why
    assert "waiting behind default/head" in why


def test_a_head_that_fits_lets_the_rest_follow_in_order() -> None:
    cluster = (
        Cluster()
        .node("n0", cpu=8)
        .queue("q", dequeue_strategy="fifo")
        .job("first", queue="q", cpu="2", pending=2, created=0)
        .job("second", queue="q", cpu="2", pending=2, created=1)
        .job("third", queue="q", cpu="2", pending=2, created=2)
    )
    assert cluster.run(ALLOCATE_ONLY).bound == {"first-0", "first-1", "second-0", "second-1"}


def test_another_queue_is_not_held_by_a_fifo_head() -> None:
    cluster = big_head_then_small("fifo").queue("other").job("elsewhere", queue="other", cpu="2", pending=1)
    assert cluster.run(ALLOCATE_ONLY).bound == {"elsewhere-0"}


def test_an_unknown_strategy_is_refused_with_the_field_named() -> None:
    with pytest.raises(ValueError, match=r"queue q: spec.dequeueStrategy must be one of fifo, traverse"):
        QueueInfo.from_queue({"metadata": {"name": "q"}, "spec": {"dequeueStrategy": "lifo"}})
