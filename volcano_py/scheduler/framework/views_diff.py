"""What changed between two listings of one kind of object, found by the dicts' identities.

The kept views (``views.py``) learn what changed since the last update by comparing the list they are given
with the last one. The usual change between two cycles is a few objects replaced where they stood and a
few appended (what an informer's mirror hands over), which one vector comparison of the two lists' ids
finds (``in_place``); anything else costs one pass that numbers every object afresh (``renumber``). Apart
from the views so that both diffs read on their own, and are written once for pods and PodGroups alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

Obj = Any  # Mapping[str, Any]: the API's JSON, read-only here
Ids = npt.NDArray[np.int64]

_Entry = TypeVar("_Entry")


class Reset(Exception):
    """The change cannot be applied in place (a node came or went, or objects held are listed in another
    order): the views are built again."""


class Placed(Protocol):
    """An entry of the views with its object's place in the list last given."""

    pos: int


def object_ids(objs: Sequence[Obj]) -> Ids:
    return np.fromiter(map(id, objs), dtype=np.int64, count=len(objs))


def listing_ids(objs: Sequence[Obj], seen: Sequence[Obj] | None, last: Ids | None) -> Ids:
    """``object_ids(objs)``. When ``objs`` says it is ``seen`` (whose ids are ``last``) with the objects at
    ``changed`` replaced and more appended (its ``base`` and ``changed``: the agent scheduler's pod listing,
    ``runtime/shown_pods.py``), from ``last`` by those alone, without a walk over every object."""
    if last is None or seen is None or getattr(objs, "base", None) is not seen:
        return object_ids(objs)
    changed: Sequence[int] = getattr(objs, "changed", ())
    ids = np.empty(len(objs), dtype=np.int64)
    ids[: len(last)] = last
    for at in changed:
        ids[at] = id(objs[at])
    ids[len(last) :] = object_ids(objs[len(last) :])
    return ids


def in_place(
    objs: Sequence[Obj],
    ids: Ids,
    last: Ids | None,
    entries: dict[int, _Entry],
    base: int,
) -> tuple[list[tuple[int, Obj]], dict[int, _Entry]] | None:
    """The new objects (with their places) and the gone entries when ``objs`` is the last list (``last``,
    its ids) with a few objects replaced where they stood and a few added at the end (what an informer's
    mirror hands over between two cycles), found by comparing the two lists' ids in one vector operation;
    None when it is anything else. Every object keeps its place number (``base`` + index), so nothing is
    renumbered."""
    if last is None or len(ids) < len(last):
        return None
    changed = np.flatnonzero(ids[: len(last)] != last)
    added = len(ids) - len(last)
    if 8 * (len(changed) + added) > len(ids):
        return None  # many changes: the loop is as cheap
    new: list[tuple[int, Obj]] = []
    gone: dict[int, _Entry] = {}
    seen: set[int] = set()
    for i in itertools.chain(changed.tolist(), range(len(last), len(ids))):
        obj = objs[i]
        if id(obj) in entries or id(obj) in seen:
            return None  # an object the views hold moved (the order changed), or one is listed twice
        seen.add(id(obj))
        new.append((base + i, obj))
        if i < len(last):
            old_id = int(last[i])
            gone[old_id] = entries[old_id]
    return new, gone


def renumber(objs: Sequence[Obj], entries: Mapping[int, Placed], base: int) -> list[tuple[int, Obj]]:
    """The objects of ``objs`` no entry holds, with their places, numbered from ``base``; the entries held
    take their new places. One pass over the list: a loop, not set arithmetic over ids (at 10,000 pods the
    sets cost three times as much). A dict the views hold cannot share its id with another one, so an id
    found is the same object. Raises ``Reset`` when objects held are listed in another order (a relist):
    the views keep the last list's order, which a build from this one would not have."""
    get = entries.get
    new: list[tuple[int, Obj]] = []
    before = -1
    for pos, obj in enumerate(objs, base):
        found = get(id(obj))
        if found is None:
            new.append((pos, obj))
        else:
            if found.pos < before:
                raise Reset
            before = found.pos
            found.pos = pos
    return new
