"""Priority queues ordered by the session's job and queue order (the plugins' comparators)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("item", "less")

    def __init__(self, item: T, less: Callable[[T, T], bool]) -> None:
        self.item = item
        self.less = less

    def __lt__(self, other: _Entry[T]) -> bool:
        # The session's orders end in a unique tiebreak (creation time, then name), so one call decides.
        return self.less(self.item, other.item)


class OrderedQueue(Generic[T]):
    """A heap whose order is asked of the session each time, so shares updated by allocations count."""

    def __init__(self, less: Callable[[T, T], bool], items: Iterable[T] = ()) -> None:
        self._less = less
        self._heap: list[_Entry[T]] = [_Entry(item, less) for item in items]
        heapq.heapify(self._heap)

    def push(self, item: T) -> None:
        heapq.heappush(self._heap, _Entry(item, self._less))

    def pop(self) -> T:
        return heapq.heappop(self._heap).item

    def __bool__(self) -> bool:
        return bool(self._heap)

    def __len__(self) -> int:
        return len(self._heap)
