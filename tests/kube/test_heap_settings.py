"""The scheduler process's collector settings: fewer young collections, the start-up heap frozen."""

from __future__ import annotations

import asyncio
import gc
import weakref

from volcano_py.scheduler.runtime.heap import YOUNG_THRESHOLD, freeze_heap, tune_collector


class Listed:
    """Stands for an object the informers listed (an instance, so a weak reference can watch it)."""


def collected(obj: object) -> bool:
    """Whether the collector would still scan ``obj`` (frozen objects are in no generation)."""
    return any(o is obj for o in gc.get_objects())


def test_the_scheduler_process_collects_less_often_and_freezes_what_it_started_with() -> None:
    saved = gc.get_threshold()
    gc.unfreeze()
    try:
        tune_collector()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, saved[1], saved[2])
        assert not collected(tune_collector)  # the imported modules are out of the collector's reach
        listed = [Listed() for _ in range(100)]
        assert collected(listed[0])
        asyncio.run(freeze_heap())
        assert gc.is_tracked(listed[0]) and not collected(listed[0])
        # A frozen object the informer replaces is still freed, by reference counting.
        watch = weakref.ref(listed[0])
        del listed
        assert watch() is None
    finally:
        gc.unfreeze()
        gc.set_threshold(*saved)
