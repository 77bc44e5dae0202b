"""The pods as a scheduler's sessions see them before the promises, kept as the watch brings them, so that a
listing costs what changed rather than a walk over every pod.

The agent scheduler shows each pod of its own as another scheduler's (``scheduler/agent/pods.hidden``): its
bound pods count on their nodes, and a session places only the pods an attempt took. Building that view of
thousands of pods for every attempt (a merge of every view into the promises, then a walk over the store)
was a fifth of an attempt at 5,000 nodes. Here each pod's view is made once, when its version arrives, and
kept in a list in arrival order; a listing is that list copied, with the few pods an attempt shows otherwise
(the promised binds, the pods it places) put in their places. It says how it differs from the listing before
it (``PodListing``), so the session's views bring their pod ids up to date by those few, too.

A deleted pod would move every pod after it, and the views would number every pod afresh: so it stays in
its place, shown finished (a finished pod holds no room and is placed by no one), until enough have gone
that the list is compacted, once in a while.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from volcano_py.api.bodies.pod import with_pod_phase
from volcano_py.api.podspec import PodPhase
from volcano_py.kube.store import Delta, EventType

Obj = dict[str, Any]

# Deleted pods shown finished in their places, at most this many plus a share of the pods held, before the
# list is compacted (every pod's place moves then).
GONE_AT_MOST = 64
GONE_SHARE = 1 / 32


def _finished(view: Obj) -> Obj:
    return with_pod_phase(view, PodPhase.SUCCEEDED.value)


class PodListing(list[Obj]):
    """A listing of ``ShownPods``. When ``base`` is not None (the listing made before this one), this one is
    ``base`` with the objects at ``changed`` replaced and more appended after its end: the session's views
    that read ``base`` last catch up by those (``framework/views_pods.py``). ``base`` is None after a pod
    was deleted (places moved); each listing lets go of its own base when the next is made, so they never
    chain."""

    __slots__ = ("base", "changed")

    def __init__(self, items: Iterable[Obj], base: PodListing | None, changed: list[int]) -> None:
        super().__init__(items)
        self.base = base
        self.changed = changed


class ShownPods:
    """Every pod of the informer's store as ``shown_as`` shows it, fed with the store's deltas (``observe``)
    and listed with a few pods shown otherwise (``listing``)."""

    def __init__(self, shown_as: Callable[[Obj], Obj]) -> None:
        self._shown_as = shown_as
        self._views: dict[str, Obj] = {}  # by key, in arrival order
        self._list: list[Obj] = []  # the views in that order, and each key's place in it
        self._places: dict[str, int] | None = {}  # None: a pod was deleted, the places are made again
        self._dirty: set[int] = set()  # places whose view changed since the last listing
        self._patched: list[int] = []  # places the last listing showed otherwise
        self._last: PodListing | None = None
        self._gone: set[str] = set()  # deleted, shown finished in their places until compacted

    def __len__(self) -> int:
        return len(self._views) - len(self._gone)

    def view(self, key: str) -> Obj | None:
        return self._views.get(key) if key not in self._gone else None

    def observe(self, delta: Delta) -> None:
        key = delta.key
        if delta.type is EventType.DELETED:
            view = self._views.get(key)
            if view is None or key in self._gone:
                return
            if len(self._gone) >= GONE_AT_MOST + GONE_SHARE * len(self._views):
                for gone in self._gone:
                    del self._views[gone]
                self._gone.clear()
                del self._views[key]
                self._places = None
                return
            self._gone.add(key)
            self._put(key, _finished(view))
            return
        self._gone.discard(key)
        self._put(key, self._shown_as(delta.new))

    def _put(self, key: str, view: Obj) -> None:
        places = self._places
        held = key in self._views
        self._views[key] = view
        if places is None:
            return
        if held:
            at = places[key]
            self._list[at] = view
            self._dirty.add(at)
        else:
            places[key] = len(self._list)
            self._list.append(view)

    def listing(self, shown: Mapping[str, Obj]) -> PodListing:
        """Every pod's view, but those of ``shown``'s keys, shown as its objects (keys not held are left
        out; deleted pods not yet compacted are listed finished)."""
        places = self._places
        last = self._last
        if places is None:
            self._list = list(self._views.values())
            places = self._places = dict(zip(self._views, range(len(self._list)), strict=True))
            last = None
        items = self._list.copy()
        patched: list[int] = []
        gone = self._gone
        for key, obj in shown.items():
            at = places.get(key)
            if at is not None and items[at] is not obj and key not in gone:
                items[at] = obj
                patched.append(at)
        changed: list[int] = []
        if last is not None:
            end = len(last)
            changed = [at for at in {*self._dirty, *self._patched, *patched} if at < end]
            last.base = None
        listing = PodListing(items, last, changed)
        self._dirty.clear()
        self._patched = patched
        self._last = listing
        return listing
