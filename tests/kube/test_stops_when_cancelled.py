"""A loop that waits with a time limit stops when it is cancelled, even when what it waits for comes in the
same turn of the event loop as the cancel. ``asyncio.wait_for`` (Python 3.11) returned the answer there and
lost the cancel: the binder's status flusher then ran on, so a scheduler told to stop never did, and the
test waiting for it hung a whole CI run (``volcano_py/kube/waiting.py``; ruff now bans ``wait_for``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from test_binder_podgroup_rewrite import SCHEDULED, FakeApi, api

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.kube.waiting import event_within, within
from volcano_py.scheduler.framework.decisions import PodGroupUpdate, SessionResult

__all__ = ["api"]


async def stopped_within(task: asyncio.Task[None], seconds: float) -> bool:
    done, _ = await asyncio.wait({task}, timeout=seconds)
    return bool(done)


def completed(succeeded: int) -> SessionResult:
    update = PodGroupUpdate("ns", "pg", PodGroupPhase.COMPLETED, (SCHEDULED,), 0, succeeded, 0)
    return SessionResult(podgroup_updates=(update,))


@pytest.mark.parametrize("turns", [0, 1, 2, 3], ids=lambda n: f"cancel-{n}-turns-after-the-status")
async def test_the_binder_stops_when_cancelled_as_a_status_comes_in(
    api: FakeApi, monkeypatch: pytest.MonkeyPatch, turns: int
) -> None:
    binder = api.binder
    assert binder is not None
    # Nothing is handed to a writer, so a status stays pending and the flusher waits for news with a limit.
    monkeypatch.setattr(binder.statuses, "_hand_over", lambda: None)
    running = asyncio.create_task(binder.run())
    binder.submit(completed(1))
    await asyncio.sleep(binder.statuses.flush_interval + 0.1)  # past the pause that lets updates coalesce
    binder.submit(completed(2))  # the news, as the cancel comes
    for _ in range(turns):
        await asyncio.sleep(0)
    running.cancel()
    assert await stopped_within(running, 3), "the binder was cancelled and is still running"


def on_event(event: asyncio.Event) -> Callable[[], Awaitable[object]]:
    return lambda: event_within(event, 1.0)


def on_awaitable(event: asyncio.Event) -> Callable[[], Awaitable[object]]:
    return lambda: within(event.wait(), 1.0)


@pytest.mark.parametrize("wait", [on_event, on_awaitable], ids=["event_within", "within"])
@pytest.mark.parametrize("turns", [0, 1, 2, 3], ids=lambda n: f"cancel-{n}-turns-after-the-event")
async def test_a_loop_around_a_limited_wait_stops_when_cancelled(
    wait: Callable[[asyncio.Event], Callable[[], Awaitable[object]]], turns: int
) -> None:
    event = asyncio.Event()
    waiting = wait(event)

    async def forever() -> None:
        while True:
            await waiting()
            event.clear()
            await asyncio.sleep(0.01)

    loop = asyncio.create_task(forever())
    await asyncio.sleep(0.05)
    event.set()
    for _ in range(turns):
        await asyncio.sleep(0)
    loop.cancel()
    assert await stopped_within(loop, 2), f"cancelled {turns} turns after the event, the loop ran on"


async def test_event_within_says_whether_the_event_came() -> None:
    event = asyncio.Event()
    assert await event_within(event, 0.01) is False
    asyncio.get_running_loop().call_later(0.01, event.set)
    assert await event_within(event, 2) is True
    with pytest.raises(TimeoutError):
        await within(asyncio.Event().wait(), 0.01)
    assert await within(asyncio.sleep(0, "answer"), 1) == "answer"
