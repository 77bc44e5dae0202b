"""The operator's Kopf registrations, one function per controller; each handler only hands its event on.

What an event means lives beside the controller it is for: a Queue's in ``queue/feed.py``, a Command's in
``job/commands.py`` (the one that does I/O: it deletes the Command before enqueueing its action), and the
Jobs', their pods' and PodGroups' in ``job/feed.py``. Those three kinds come from informers of our own
unless the operator runs with ``--job-watch kopf`` (``job/watch.py``; ``register_job_watch`` below), an
experiment whose figures are in ``docs/architecture.md``. Plain pods' PodGroups are made from an informer of
our own (``podgroup/worker.py``), not here. Handlers are coroutines: Kopf runs a plain function in a thread
of its executor, which costs a thread hop per event and would touch the work queues from outside their loop.
"""

from __future__ import annotations

from typing import Any

import kopf

from volcano_py.api import constants as c
from volcano_py.controllers.job.commands import command_issued
from volcano_py.controllers.job.watch import KopfWatch
from volcano_py.controllers.queue.feed import queue_changed
from volcano_py.controllers.runtime.context import QUEUE_INDEX, ControllerContext
from volcano_py.kube.kinds import COMMANDS, JOBS, PODGROUPS, PODS, plain

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
    """Queue events (no I/O)."""

    @kopf.on.event(*_QUEUES, registry=registry)
    async def queue_event(event: kopf.RawEvent, name: str, body: kopf.Body, **_: Any) -> None:
        queue_changed(ctx, name, plain(body), deleted=event["type"] == "DELETED")


def register_command_controller(registry: kopf.OperatorRegistry, ctx: ControllerContext) -> None:
    """Commands. Does I/O (``job/commands.py``): deletes the Command before enqueueing its action."""

    @kopf.on.event(COMMANDS.group, COMMANDS.version, COMMANDS.plural, registry=registry)
    async def command_event(
        event: kopf.RawEvent, namespace: str | None, name: str, body: kopf.Body, **_: Any
    ) -> None:
        if event["type"] != "DELETED":
            await command_issued(ctx, namespace, name, plain(body))


def register_job_watch(registry: kopf.OperatorRegistry, watch: KopfWatch) -> None:
    """``--job-watch kopf``: Jobs, their pods and PodGroups through plain Kopf event handlers, no index. The
    pods are selected server-side by ``settings.watching.label_selectors`` (``operator.py``)."""

    @kopf.on.event(JOBS.group, JOBS.version, JOBS.plural, registry=registry)
    async def job_event(event: kopf.RawEvent, **_: Any) -> None:
        watch.job_event(event)

    @kopf.on.event(PODGROUPS.group, PODGROUPS.version, PODGROUPS.plural, registry=registry)
    async def podgroup_event(event: kopf.RawEvent, **_: Any) -> None:
        watch.podgroup_event(event)

    @kopf.on.event(PODS.version, PODS.plural, registry=registry)
    async def pod_event(event: kopf.RawEvent, **_: Any) -> None:
        watch.pod_event(event)
