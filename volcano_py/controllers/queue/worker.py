"""Reconcile one Queue: its state (Open / Closing / Closed), its PodGroup counters, its children's state."""

from __future__ import annotations

from dataclasses import replace

from volcano_py.api.bodies.podgroup import podgroup_phase, podgroup_queue
from volcano_py.api.bodies.queue import queue_status_says, written_state
from volcano_py.api.bus import Action
from volcano_py.controllers.queue.state import (
    CLOSED_BY_PARENT_KEY,
    QueueActionError,
    check_action,
    hierarchy_actions,
    next_state,
    podgroup_counts,
    read_queue,
)
from volcano_py.controllers.runtime.context import ControllerContext
from volcano_py.kube.client import NETWORK_ERRORS, ApiError
from volcano_py.kube.events import NORMAL, WARNING
from volcano_py.kube.kinds import QUEUES
from volcano_py.log import get_logger

_log = get_logger(__name__)


class QueueWorker:
    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx

    async def handle(self, name: str, action_name: str) -> None:
        try:
            await self._reconcile(name, Action(action_name))
        except (ApiError, *NETWORK_ERRORS) as exc:
            _log.warning("queue reconcile failed; retrying", queue=name, error=str(exc))
            self.ctx.queue_queue.add_after(1.0, name, action_name)

    async def _reconcile(self, name: str, action: Action) -> None:
        body = self.ctx.queue(name)
        if body is None:
            return
        views = {q.name: q for q in map(read_queue, self.ctx.queues())}
        queue = views[name]
        try:
            check_action(queue, action, views)
        except QueueActionError as exc:
            self.ctx.recorder.record(body, WARNING, str(action), str(exc))
            return
        phases = [podgroup_phase(pg) for pg in self.ctx.podgroups() if podgroup_queue(pg) == name]
        counts = podgroup_counts(phases)
        self.ctx.metrics.set_queue_counts(name, counts)
        written = written_state(body)
        state = next_state(written, action, len(phases))
        wanted = {"state": state.value, **counts}
        if not queue_status_says(body, wanted):
            await self.ctx.client.patch(QUEUES.object_path(name, None, "status"), {"status": wanted})
            if written != state.value:
                self.ctx.recorder.record(body, NORMAL, str(action), f"Queue {name} is {state.value}")
        if action is Action.OPEN_QUEUE and queue.closed_by_parent:
            await self._mark(name, False)
        views[name] = replace(queue, state=state)
        for child, child_action, by_parent in hierarchy_actions(views.values()):
            if by_parent:
                await self._mark(child, True)
            self.ctx.queue_queue.add(child, child_action.value)

    async def _mark(self, name: str, closed_by_parent: bool) -> None:
        patch = {"metadata": {"annotations": {CLOSED_BY_PARENT_KEY: "true" if closed_by_parent else "false"}}}
        await self.ctx.client.patch(QUEUES.object_path(name), patch)
