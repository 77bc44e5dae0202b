"""Work over many items with a fixed number in flight (creating thousands of objects without opening
thousands of requests at once)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


async def each(items: Iterable[T], work: Callable[[T], Awaitable[object]], concurrency: int) -> None:
    """``work(item)`` for every item, at most ``concurrency`` at a time."""
    queue: asyncio.Queue[T] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def worker() -> None:
        while not queue.empty():
            await work(queue.get_nowait())

    await asyncio.gather(*(worker() for _ in range(concurrency)))
