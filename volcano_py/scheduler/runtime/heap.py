"""The garbage collector's settings for a scheduler process, whose heap is a mirror of the cluster.

CPython's cycle collector scans every tracked object of a generation when it runs, and its default
thresholds (a young collection every 700 net allocations) promote much of each cycle's short-lived work to
the old generation, whose collections then scan the whole mirror. In a 30-cycle replay at 1,000 nodes and
10,000 pods, collections took 1.65 s of 6.5 s of CPU with CPython's thresholds and 0.47 s of 5.8 s with a
frozen start-up heap and a 20,000 threshold; end to end the difference was within the noise
(docs/performance-log.md). Three settings, all for this process only:

* the young threshold is raised, so a cycle's temporary objects are freed by reference counting before a
  collection ever looks at them (sessions are not reference cycles: ``Session.release``);
* the collector is off from start until the caches are synced and the core has read them: everything
  allocated meanwhile is the listed cluster, alive, which each collection would scan again. At 100,000
  listed objects (a backlog of 50,000 one-pod jobs with their PodGroups) decoding took 1.1 s of CPU with
  the collector on and 0.49 s with it off. Should the sync never come, it is back on after
  ``OFF_AT_MOST`` seconds;
* what is alive is frozen out of the collector's reach twice: at start (the modules: 130,000 objects that
  every old-generation collection would scan again), after one collection; and once the caches are synced
  (the first listing of the cluster), without one, as a collection over a freshly listed cluster of
  20,000 pods would hold up the first cycle by a second or two. Informer objects are plain JSON dicts
  without cycles, so frozen ones that are replaced later are still freed by reference counting.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Final

# Net allocations between young collections; older generations keep CPython's ratios.
YOUNG_THRESHOLD: Final = 50_000
# Seconds the collector stays off at start when the caches do not sync (an API server out of reach): the
# garbage of retries is freed then, not only once the cluster is listed.
OFF_AT_MOST: Final = 300.0


def tune_collector() -> None:
    """At process start, before the cluster is read. In an event loop (the scheduler's), the collector comes
    back on by itself after ``OFF_AT_MOST``; outside one, ``collect_from_here`` is the caller's to call."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    loop.call_later(OFF_AT_MOST, gc.enable)


def collect_from_here() -> None:
    """Once the caches are synced and read: keep the listed cluster out of later collections, and collect
    from here on."""
    gc.freeze()
    gc.enable()


async def freeze_heap() -> None:
    """``collect_from_here`` as the scheduler's start-up hook."""
    collect_from_here()
