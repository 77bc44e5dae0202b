"""A work queue that serialises work per key (one Job, one Queue) and runs different keys in parallel.

Like client-go's workqueue: a key being processed is never handed to a second worker; requests arriving
meanwhile wait in order and run after it. Consecutive plain resyncs of one key collapse into one.

A request may be added as ``background``: its key is handed out only when no other key is ready. A restarted
controller lists every finished Job again (tens of thousands in a long-lived cluster) and checks each once;
a Job submitted meanwhile must not wait behind that history.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from volcano_py.log import get_logger

_log = get_logger(__name__)

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")


class KeyedQueue(Generic[K, R]):
    def __init__(self, *, is_resync: Callable[[R], bool] = lambda _r: False) -> None:
        self._pending: dict[K, deque[R]] = {}
        # (0 foreground / 1 background, arrival, key): a key may be in it twice (raised to the foreground
        # while waiting); ``_take`` skips an entry whose key is taken or has nothing pending.
        self._ready: asyncio.PriorityQueue[tuple[int, int, K]] = asyncio.PriorityQueue()
        self._arrival = itertools.count()
        self._background: set[K] = set()  # keys whose every pending request is background
        self._active: set[K] = set()
        self._is_resync = is_resync
        self._loop: asyncio.AbstractEventLoop | None = None
        self.processed = 0
        self._size = 0

    def add(self, key: K, request: R, *, background: bool = False) -> None:
        queue = self._pending.get(key)
        if queue is None:
            queue = self._pending[key] = deque()
        fresh = not queue
        if fresh and background:
            self._background.add(key)
        elif not background and key in self._background:
            self._background.discard(key)
            if not fresh and key not in self._active:
                self._put(key)  # waiting in the background lane: raise it
        if queue and self._is_resync(request) and self._is_resync(queue[-1]):
            return
        queue.append(request)
        self._size += 1
        if key not in self._active and fresh:
            self._put(key)

    def _put(self, key: K) -> None:
        self._ready.put_nowait((1 if key in self._background else 0, next(self._arrival), key))

    def add_after(self, delay: float, key: K, request: R) -> asyncio.TimerHandle:
        loop = asyncio.get_running_loop()
        return loop.call_later(max(delay, 0.0), self.add, key, request)

    def depth(self) -> int:
        """Requests waiting (not counting the ones being handled)."""
        return self._size

    async def _take(self) -> tuple[K, R]:
        while True:
            _, _, key = await self._ready.get()
            queue = self._pending.get(key)
            if key in self._active or not queue:
                continue
            self._active.add(key)
            self._size -= 1
            return key, queue.popleft()

    def _done(self, key: K) -> None:
        self._active.discard(key)
        queue = self._pending.get(key)
        if queue:
            self._put(key)
        else:
            self._background.discard(key)
            if queue is not None:
                del self._pending[key]

    async def worker(self, handle: Callable[[K, R], Awaitable[None]]) -> None:
        while True:
            key, request = await self._take()
            try:
                await handle(key, request)
            except asyncio.CancelledError:
                raise
            except Exception:  # a handler bug must not kill the worker; the handler logs and requeues
                _log.exception("work item failed", key=str(key))
            finally:
                self.processed += 1
                self._done(key)
            # A queue's get does not suspend while items wait, and a handler that did no I/O (a finished
            # Job's check) did not either: without this, a backlog of those would hold every other task's I/O
            # (a new Job's PodGroup create answered, its pods sent) until it was drained.
            await asyncio.sleep(0)

    async def run(self, handle: Callable[[K, R], Awaitable[None]], workers: int) -> None:
        async with asyncio.TaskGroup() as group:
            for _ in range(workers):
                group.create_task(self.worker(handle))
