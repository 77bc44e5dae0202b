"""The Queue controller's feed: a Queue's watch event becomes a sync on the queue work queue (no I/O)."""

from __future__ import annotations

import contextlib

from volcano_py.api.objects import Obj
from volcano_py.api.queue_hierarchy import written_state
from volcano_py.controllers.runtime.context import SYNC_QUEUE, ControllerContext


def queue_changed(ctx: ControllerContext, name: str, body: Obj, *, deleted: bool) -> None:
    """Enqueue the queue's sync; a deleted queue's gauges are dropped."""
    if not deleted:
        if not written_state(body):
            # A queue never reconciled is opened at once: a script creates a queue, then submits to it.
            ctx.queue_queue.add(name, SYNC_QUEUE)
            return
        # Paced like a PodGroup's change: most queue events are the echo of our own status write.
        ctx.sync_queue_soon(name)
        return
    for gauge in ctx.metrics.queue_podgroups.values():
        with contextlib.suppress(KeyError):  # never reported for this queue
            gauge.remove(name)
