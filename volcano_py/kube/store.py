"""The informer's mirror: objects by key, and the exact add/update/delete each watch event or relist implies.

Pure: a relist is turned into the events a watch would have sent (including deletes of objects that vanished
while we were disconnected), so handlers see one consistent stream whatever happened on the wire.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from volcano_py.kube.kinds import object_key

Obj = dict[str, Any]


class EventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(frozen=True, slots=True)
class Delta:
    type: EventType
    key: str
    old: Obj | None  # None when ADDED
    new: Obj  # the object as now; for DELETED, as last seen


def resource_version(obj: Obj) -> str:
    rv = obj.get("metadata", {}).get("resourceVersion")
    return rv if isinstance(rv, str) else ""


def version_number(version: str) -> int | None:
    """A resourceVersion as the number etcd makes it; None for one that is not (an API server may say
    anything: then versions cannot be ordered)."""
    return int(version) if version.isdigit() else None


class Listing(list[Obj]):
    """A store's values at one moment (``Store.shared_values``). When only objects already held changed since
    the listing before it, ``base`` is that listing and ``replaced`` maps each changed key to its (object in
    ``base``, object now): a reader that kept ``base`` (a session's views of 5,000 nodes) catches up by
    those few, without a walk over every object. ``base`` is None after an add, a delete or a relist,
    and each listing lets go of its own base when the next is made, so they never chain."""

    __slots__ = ("base", "replaced")

    def __init__(self, items: Iterable[Obj], base: Listing | None, replaced: Mapping[str, tuple[Obj, Obj]]):
        super().__init__(items)
        self.base = base
        self.replaced = replaced


class Store:
    """Objects by key; every mutation returns the :class:`Delta` it caused, or None if nothing changed."""

    def __init__(self) -> None:
        self._items: dict[str, Obj] = {}
        self._shared: Listing | None = None  # ``shared_values``, until the next change
        self._last: Listing | None = None  # the last listing made
        # Since ``_last``: each changed key's (object in ``_last``, object now); None once a key came or went.
        self._changed: dict[str, tuple[Obj, Obj]] | None = None

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def keys(self) -> Iterator[str]:
        return iter(self._items)

    def values(self) -> list[Obj]:
        return list(self._items.values())

    def shared_values(self) -> Listing:
        """``values()``, the same list object until the store changes, not to be modified: a reader that
        kept the last one can tell "nothing changed" by identity, and what changed by ``Listing.replaced``,
        without a walk over thousands of nodes."""
        if self._shared is None:
            last = self._last
            changed = self._changed
            listing = Listing(self._items.values(), last if changed is not None else None, changed or {})
            if last is not None:
                last.base = None
            self._shared = self._last = listing
            self._changed = {}
        return self._shared

    def _note(self, key: str, old: Obj | None, new: Obj | None) -> None:
        self._shared = None
        changed = self._changed
        if changed is None:
            return
        if old is None or new is None:
            self._changed = None  # a key came or went: every reader walks the next listing
            return
        before = changed.get(key)
        changed[key] = (before[0] if before is not None else old, new)

    def values_with(self, shown: Mapping[str, Obj]) -> list[Obj]:
        """``values()`` with the objects of ``shown``'s keys in their places (views of them)."""
        if not shown:
            return list(self._items.values())
        # ``map`` calls ``shown.get(key, obj)`` without a Python frame per object: a session reads thousands.
        items = self._items
        return list(map(shown.get, items.keys(), items.values()))

    def apply(self, event_type: EventType, obj: Obj) -> Delta | None:
        key = object_key(obj)
        old = self._items.get(key)
        if event_type is EventType.DELETED:
            if old is None:
                return None
            del self._items[key]
            self._note(key, old, None)
            return Delta(EventType.DELETED, key, old, obj)
        if old is not None and resource_version(old) == resource_version(obj) != "":
            return None  # a replay of what we hold (e.g. after a reconnect): not a change
        self._items[key] = obj
        self._note(key, old, obj)
        return Delta(EventType.MODIFIED if old is not None else EventType.ADDED, key, old, obj)

    def replace(self, items: Iterable[Obj]) -> list[Delta]:
        """Make the store equal to a fresh list; return the deltas that get there (deletes last)."""
        fresh = {object_key(obj): obj for obj in items}
        deltas: list[Delta] = []
        for key, obj in fresh.items():
            old = self._items.get(key)
            if old is None:
                deltas.append(Delta(EventType.ADDED, key, None, obj))
            elif resource_version(old) != resource_version(obj) or not resource_version(obj):
                deltas.append(Delta(EventType.MODIFIED, key, old, obj))
        for key, old in self._items.items():
            if key not in fresh:
                deltas.append(Delta(EventType.DELETED, key, old, old))
        self._items = fresh
        self._shared = None
        self._changed = None
        return deltas
