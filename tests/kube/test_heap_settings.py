"""The scheduler process's collector settings: fewer young collections, the start-up heap frozen."""

from __future__ import annotations

import asyncio
import gc

from volcano_py.scheduler.runtime.heap import YOUNG_THRESHOLD, freeze_heap, tune_collector


def test_the_scheduler_process_collects_less_often_and_freezes_what_it_started_with() -> None:
    saved = gc.get_threshold()
    gc.unfreeze()
    try:
        tune_collector()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, saved[1], saved[2])
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # the modules this process imported, at least
        listed = [
            {"metadata": {"name": f"pod-{i}"}, "spec": {"containers": [{"name": "c"}]}} for i in range(1000)
        ]
        asyncio.run(freeze_heap())
        assert gc.get_freeze_count() >= frozen + 3000  # the listed objects joined them (3 containers each)
        # Frozen dicts are still freed by reference counting when the informer replaces them.
        del listed
        assert gc.get_freeze_count() < frozen + 1000
    finally:
        gc.unfreeze()
        gc.set_threshold(*saved)
