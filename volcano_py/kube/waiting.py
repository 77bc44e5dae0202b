"""Waiting with a time limit, without losing a cancel.

On Python 3.11, ``asyncio.wait_for`` returns what it waited for when a cancel arrives in the same turn of the
loop as the answer: the cancel is lost. A loop around it (the status flusher, the lease holder) then runs on
after its task group has cancelled it, and the group, the process's shutdown and whoever waits for that wait
forever. ``asyncio.timeout`` keeps the cancel (Python 3.12 rebuilt ``wait_for`` on it). ``asyncio.wait_for``
is banned in this repository (ruff TID251); these are what to use instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """``await awaitable``, raising TimeoutError after ``seconds`` (None: no limit)."""
    async with asyncio.timeout(seconds):
        return await awaitable


async def event_within(event: asyncio.Event, seconds: float) -> bool:
    """Whether ``event`` is set within ``seconds``."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
    return event.is_set()
