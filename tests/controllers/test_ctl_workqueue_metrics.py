"""The operator's per-key work queue and its metric names (no API server involved)."""

from __future__ import annotations

import asyncio

from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.controllers.runtime.workqueue import KeyedQueue
from volcano_py.kube.waiting import within


async def test_one_key_is_never_processed_twice_at_once_and_order_is_kept() -> None:
    queue: KeyedQueue[str, int] = KeyedQueue()
    seen: list[tuple[str, int]] = []
    active: set[str] = set()
    overlaps: list[str] = []
    finished = asyncio.Event()

    async def handle(key: str, item: int) -> None:
        if key in active:
            overlaps.append(key)
        active.add(key)
        await asyncio.sleep(0.01)
        seen.append((key, item))
        active.discard(key)
        if len(seen) == 10:
            finished.set()

    for i in range(5):
        queue.add("a", i)
        queue.add("b", i)
    runner = asyncio.create_task(queue.run(handle, workers=4))
    await within(finished.wait(), 10)
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    assert overlaps == []
    assert [i for k, i in seen if k == "a"] == [0, 1, 2, 3, 4]
    assert [i for k, i in seen if k == "b"] == [0, 1, 2, 3, 4]


async def test_consecutive_resyncs_collapse() -> None:
    queue: KeyedQueue[str, str] = KeyedQueue(is_resync=lambda r: r == "sync")
    for item in ("sync", "sync", "sync", "restart", "sync", "sync"):
        queue.add("job", item)
    assert queue.depth() == 3


async def _drain(queue: KeyedQueue[str, str]) -> list[tuple[str, str]]:
    """What one worker handles, in order, until the queue is empty."""
    seen: list[tuple[str, str]] = []
    empty = asyncio.Event()

    async def handle(key: str, request: str) -> None:
        seen.append((key, request))
        if not queue.depth():
            empty.set()

    task = asyncio.create_task(queue.run(handle, 1))
    await within(empty.wait(), 10)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return seen


async def test_background_keys_wait_until_no_other_key_is_ready() -> None:
    queue: KeyedQueue[str, str] = KeyedQueue()
    for i in range(3):
        queue.add(f"old-{i}", "check", background=True)
    queue.add("new", "sync")
    queue.add("old-0", "more", background=True)
    # A key's next request waits its turn among the other ready keys of its lane.
    assert await _drain(queue) == [("new", "sync"), ("old-0", "check"), ("old-1", "check"),
                                   ("old-2", "check"), ("old-0", "more")]  # fmt: skip


async def test_a_foreground_request_raises_a_waiting_background_key() -> None:
    queue: KeyedQueue[str, str] = KeyedQueue(is_resync=lambda r: r == "sync")
    queue.add("old-0", "sync", background=True)
    queue.add("old-1", "sync", background=True)
    queue.add("other", "x")
    queue.add("old-1", "sync")  # collapses into the waiting resync, which is now foreground
    assert await _drain(queue) == [("other", "x"), ("old-1", "sync"), ("old-0", "sync")]
    assert queue.depth() == 0


async def test_a_backlog_of_handlers_without_io_does_not_hold_other_tasks() -> None:
    queue: KeyedQueue[str, str] = KeyedQueue()
    for i in range(1000):
        queue.add(f"old-{i}", "check", background=True)
    handled: list[str] = []
    drained = asyncio.Event()

    async def handle(key: str, _request: str) -> None:  # no await: nothing suspends here
        handled.append(key)
        if len(handled) == 1000:
            drained.set()

    async def other_io() -> int:  # another task's I/O callbacks, one loop turn each
        for _ in range(3):
            await asyncio.sleep(0)
        return len(handled)

    runner = asyncio.create_task(queue.run(handle, 4))
    seen_by_other = await other_io()
    await within(drained.wait(), 10)
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    assert seen_by_other < 100, f"another task waited until {seen_by_other} items were handled"


async def test_a_failing_handler_does_not_stop_the_worker() -> None:
    queue: KeyedQueue[str, int] = KeyedQueue()
    done: list[int] = []
    finished = asyncio.Event()

    async def handle(_key: str, item: int) -> None:
        if item == 0:
            raise RuntimeError("boom")
        done.append(item)
        finished.set()

    queue.add("k", 0)
    queue.add("k", 1)
    runner = asyncio.create_task(queue.run(handle, workers=1))
    await within(finished.wait(), 10)
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    assert done == [1]


def test_metrics_use_volcanos_names() -> None:
    metrics = ControllerMetrics()
    metrics.job_completed.labels("ns/j", "default").inc()
    metrics.set_queue_counts("default", {"running": 2, "pending": 1})
    text = metrics.expose().decode()
    assert 'volcano_job_completed_phase_count_total{job_name="ns/j",queue_name="default"} 1.0' in text
    assert 'volcano_queue_pod_group_running_count{queue_name="default"} 2.0' in text
    assert 'volcano_queue_pod_group_pending_count{queue_name="default"} 1.0' in text
    assert "volcano_controller_job_to_pod_creation_latency_milliseconds_bucket" in text
    assert "volcano_job_failed_phase_count" in text
