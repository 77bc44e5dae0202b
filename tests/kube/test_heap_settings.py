"""The scheduler process's collector settings: fewer young collections, the start-up heap frozen."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

from volcano_py.scheduler.runtime import heap
from volcano_py.scheduler.runtime.heap import YOUNG_THRESHOLD, collect_from_here, freeze_heap, tune_collector


class Listed:
    """Stands for an object the informers listed (an instance, so a weak reference can watch it)."""


def collected(obj: object) -> bool:
    """Whether the collector would still scan ``obj`` (frozen objects are in no generation)."""
    return any(o is obj for o in gc.get_objects())


def test_the_scheduler_process_collects_less_often_and_freezes_what_it_started_with() -> None:
    saved = gc.get_threshold()
    gc.unfreeze()

    async def start() -> list[Listed]:
        tune_collector()
        return [Listed() for _ in range(100)]

    try:
        listed = asyncio.run(start())
        assert gc.get_threshold() == (YOUNG_THRESHOLD, saved[1], saved[2])
        assert not collected(tune_collector)  # the imported modules are out of the collector's reach
        assert collected(listed[0])
        assert not gc.isenabled()  # while the cluster is listed and read
        asyncio.run(freeze_heap())
        assert gc.isenabled()
        assert gc.is_tracked(listed[0]) and not collected(listed[0])
        # A frozen object the informer replaces is still freed, by reference counting.
        watch = weakref.ref(listed[0])
        del listed
        assert watch() is None
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*saved)


def test_the_collector_comes_back_on_by_itself_when_the_caches_never_sync(monkeypatch: Any) -> None:
    saved = gc.get_threshold()
    monkeypatch.setattr(heap, "OFF_AT_MOST", 0.05)

    async def never_synced() -> bool:
        tune_collector()
        off = not gc.isenabled()
        await asyncio.sleep(0.2)
        return off

    try:
        assert asyncio.run(never_synced())
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*saved)


def test_outside_an_event_loop_the_collector_is_the_callers_to_turn_back_on() -> None:
    # bench_cycle sets the collector as the process does, without an event loop.
    saved = gc.get_threshold()
    try:
        tune_collector()
        assert not gc.isenabled()
        collect_from_here()
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*saved)
