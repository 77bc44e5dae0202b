"""Priority queues ordered by the session's job and queue order (the plugins' comparators)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("item", "less", "seq")

    def __init__(self, item: T, less: Callable[[T, T], bool], seq: int) -> None:
        self.item = item
        self.less = less
        self.seq = seq

    def __lt__(self, other: _Entry[T]) -> bool:
        if self.less(self.item, other.item):
            return True
        if self.less(other.item, self.item):
            return False
        return self.seq < other.seq


class OrderedQueue(Generic[T]):
    """A heap whose order is asked of the session each time, so shares updated by allocations count."""

    def __init__(self, less: Callable[[T, T], bool], items: Iterable[T] = ()) -> None:
        self._less = less
        self._seq = 0
        self._heap: list[_Entry[T]] = []
        for item in items:
            self.push(item)

    def push(self, item: T) -> None:
        self._seq += 1
        heapq.heappush(self._heap, _Entry(item, self._less, self._seq))

    def pop(self) -> T:
        return heapq.heappop(self._heap).item

    def __bool__(self) -> bool:
        return bool(self._heap)

    def __len__(self) -> int:
        return len(self._heap)
