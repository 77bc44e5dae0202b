"""Stopping a scheduler or operator a test started, in bounded time.

``asyncio.wait_for(task, n)`` cancels the task on timeout and then waits, without a bound, for the
cancellation to finish: a task stuck in its shutdown hangs the whole suite with nothing printed. Here the wait
for the cancellation is bounded too, and a task that still has not ended is reported as a warning with where
it is stuck (pytest's summary lists it), and left behind.
"""

from __future__ import annotations

import asyncio
import io
import warnings
from collections.abc import Iterable
from typing import Any


async def stop_within(
    tasks: asyncio.Task[Any] | Iterable[asyncio.Task[Any]], what: str, seconds: float, *, grace: float = 10.0
) -> None:
    """Wait for ``tasks`` (already told to stop) to end: ``seconds`` for a graceful stop, then those left are
    cancelled and get ``grace`` more. Warns, with the stack of every task still pending in the loop (the one
    stuck is usually a child of the task waited for), if any is still running then."""
    waited = {tasks} if isinstance(tasks, asyncio.Task) else set(tasks)
    if not waited:
        return
    _, running = await asyncio.wait(waited, timeout=seconds)
    for task in running:
        task.cancel()
    if running:
        _, running = await asyncio.wait(running, timeout=grace)
    for task in waited - running:
        if not task.cancelled():
            task.exception()  # retrieved, so a failure it ended with is not reported as never retrieved
    if running:
        # Reported, not raised: the test's own assertions have passed, and a teardown error would hide them.
        stacks = io.StringIO()
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.print_stack(file=stacks)
        warnings.warn(
            f"{what} did not stop within {seconds:.0f}s, nor {grace:.0f}s after being cancelled; left "
            f"running, with every task pending in the loop:\n{stacks.getvalue()}",
            RuntimeWarning,
            stacklevel=2,
        )
