"""The operator's Kopf registrations: the Queue cache, Queue events and Commands, one function per controller.

The Job controller's events come from informers of our own instead (``controllers/job/feed.py``; see
``runtime/context.py`` for why not Kopf). Handlers are coroutines: Kopf runs a plain function in a thread of
its executor, which costs a thread hop per event and would touch the work queues from outside their loop. Most
handlers only classify and enqueue; the writes happen in the Job and Queue workers, one key at a time. One
handler does I/O itself and says so: Commands are deleted (with a uid precondition) before they are enqueued,
as Volcano does, so two operator instances or a redelivered event can never run one Command twice. Plain pods'
PodGroups are made from an informer of our own (``plain_pods.py``), not here.
"""

from __future__ import annotations

import contextlib
from typing import Any

import kopf

from volcano_py.api import constants as c
from volcano_py.api.batch import JobEvent
from volcano_py.api.bus import JOB_COMMAND_ACTIONS, QUEUE_COMMAND_ACTIONS, Action, Event
from volcano_py.api.queue_hierarchy import written_state
from volcano_py.controllers.job.policies import Request
from volcano_py.controllers.runtime.context import QUEUE_INDEX, SYNC_QUEUE, ControllerContext
from volcano_py.kube.client import ApiError
from volcano_py.kube.events import NORMAL
from volcano_py.kube.kinds import COMMANDS, plain
from volcano_py.log import get_logger

_log = get_logger(__name__)

_QUEUES = (c.SCHEDULING_GROUP, c.SCHEDULING_VERSION, c.QUEUE_PLURAL)


def build_registry(ctx: ControllerContext) -> kopf.OperatorRegistry:
    """Every controller's Kopf registrations, one function per controller below."""
    registry = kopf.OperatorRegistry()
    for register in (
        register_caches,
        register_queue_controller,
        register_command_controller,
    ):
        register(registry, ctx)
    return registry


def register_caches(registry: kopf.OperatorRegistry, ctx: ControllerContext) -> None:
    """The Queue cache (a Kopf index); Jobs, their pods and PodGroups come from the operator's informers."""

    @kopf.index(*_QUEUES, id=QUEUE_INDEX, registry=registry)
    async def index_queue(body: kopf.Body, name: str, **_: Any) -> dict[Any, Any]:
        return {name: plain(body)}

    @kopf.on.startup(registry=registry)
    async def capture_indices(settings: kopf.OperatorSettings, **kwargs: Any) -> None:
        settings.posting.enabled = False  # our own EventRecorder writes the Events users see
        settings.watching.server_timeout = 300
        ctx.indices[QUEUE_INDEX] = kwargs[QUEUE_INDEX]


def register_queue_controller(registry: kopf.OperatorRegistry, ctx: ControllerContext) -> None:
    """Queue events: enqueue a sync; a deleted queue's gauges are dropped (no I/O here)."""

    @kopf.on.event(*_QUEUES, registry=registry)
    async def queue_event(event: kopf.RawEvent, name: str, body: kopf.Body, **_: Any) -> None:
        if event["type"] != "DELETED":
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


def register_command_controller(registry: kopf.OperatorRegistry, ctx: ControllerContext) -> None:
    """Commands. Does I/O: deletes the Command (uid precondition) before enqueueing its action, so that
    it runs at most once."""

    @kopf.on.event(COMMANDS.group, COMMANDS.version, COMMANDS.plural, registry=registry)
    async def command_event(
        event: kopf.RawEvent, namespace: str | None, name: str, body: kopf.Body, **_: Any
    ) -> None:
        if event["type"] == "DELETED":
            return
        await ctx.ready.wait()  # the Jobs are listed: a Job's command is recorded on it
        target = body.get("target") or body.get("targetObject") or {}
        raw_action = str(body.get("action") or "")
        try:
            action = Action(raw_action)
        except ValueError:
            action = None
        delete = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": body.metadata.uid}}
        try:
            await ctx.client.delete(COMMANDS.object_path(name, namespace), delete)
        except ApiError as exc:
            if exc.not_found or exc.conflict:
                return  # already consumed (by us before a restart, or by another instance)
            raise
        kind = target.get("kind")
        if kind == c.JOB_KIND and action in JOB_COMMAND_ACTIONS:
            key = (namespace or "", str(target.get("name")))
            job = ctx.job(key)
            if job is not None:
                ctx.recorder.record(
                    job, NORMAL, JobEvent.COMMAND_ISSUED,
                    f"Start to execute command {action}, and clean it up to make sure executed not more "
                    "than once.",
                )  # fmt: skip
            ctx.job_queue.add(key, Request(event=Event.COMMAND_ISSUED, action=action))
        elif kind == c.QUEUE_KIND and action in QUEUE_COMMAND_ACTIONS:
            ctx.queue_queue.add(str(target.get("name")), action.value)
        else:
            _log.warning(
                "ignored command", command=f"{namespace}/{name}", action=raw_action, target_kind=kind
            )
