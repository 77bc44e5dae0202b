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
from typing import Any


async def stop_within(task: asyncio.Task[Any], what: str, seconds: float, *, grace: float = 10.0) -> None:
    """Wait for ``task`` (already told to stop) to end: ``seconds`` for a graceful stop, then it is cancelled
    and gets ``grace`` more. Warns, with the task's stack, if it is still running then."""
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if done:
        if not task.cancelled():
            task.exception()  # retrieved, so a failure it ended with is not reported as never retrieved
        return
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=grace)
    if not done:
        # Reported, not raised: the test's own assertions have passed, and a teardown error would hide them.
        stack = io.StringIO()
        task.print_stack(file=stack)
        warnings.warn(
            f"{what} did not stop within {seconds:.0f}s, nor {grace:.0f}s after being cancelled; left "
            f"running:\n{stack.getvalue()}",
            RuntimeWarning,
            stacklevel=2,
        )
