"""Priority queues ordered by the session's job and queue order (the plugins' comparators)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

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
    """A heap whose order is asked of the session each time, so shares updated by allocations count.

    With ``key`` (the session's sort key, when every ordering plugin offers one) items are compared as
    plain tuples, computed when pushed: valid as long as an item's order changes only while it is out
    of the heap, which holds in allocate (only the popped job allocates).
    """

    def __init__(
        self, less: Callable[[T, T], bool], items: Iterable[T] = (), *, key: Callable[[T], Any] | None = None
    ) -> None:
        self._less = less
        self._key = key
        self._seq = 0
        self._heap: list[Any] = [self._entry(item) for item in items]
        heapq.heapify(self._heap)

    def _entry(self, item: T) -> Any:
        if self._key is None:
            return _Entry(item, self._less)
        self._seq += 1
        return (self._key(item), self._seq, item)

    def push(self, item: T) -> None:
        heapq.heappush(self._heap, self._entry(item))

    def pop(self) -> T:
        entry = heapq.heappop(self._heap)
        item: T = entry.item if self._key is None else entry[2]
        return item

    def __bool__(self) -> bool:
        return bool(self._heap)

    def __len__(self) -> int:
        return len(self._heap)
