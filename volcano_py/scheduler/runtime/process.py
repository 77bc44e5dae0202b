"""What the batch scheduler process (``runner.py``) and the agent scheduler process (``agent.py``) share.

Both mirror the cluster in a ``SchedulerCache``, write through a ``Binder``, serve ``/metrics`` and the
health probes, decide only while they hold their Lease, and take turns with each other at a capped Queue.
The wiring of those parts is written once here, so the two processes cannot drift apart in how they lead,
fence their writes, give a turn back or shut down; what each decides, and when, stays with it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.kube.health import MetricsServer
from volcano_py.kube.leader import LeaderElector, LeaseTiming, run_while_leading
from volcano_py.kube.waiting import event_within
from volcano_py.scheduler.framework.decisions import Bind
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.queue_room import QueueRoom, QueueTurns


def default_identity() -> str:
    return f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:8]}"


async def sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    await event_within(stop, seconds)


async def sleep_until_either(stop: asyncio.Event, other: asyncio.Event, seconds: float) -> None:
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(other.wait())]
    try:
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


@asynccontextmanager
async def connected(kubeconfig: str | None) -> AsyncIterator[KubeClient]:
    client = KubeClient(await load_api_client(kubeconfig))
    try:
        yield client
    finally:
        await client.close()


def fenced_elector(
    client: KubeClient,
    binder: Binder,
    *,
    elect: bool,
    namespace: str,
    name: str,
    identity: str,
    timing: LeaseTiming,
) -> LeaderElector | None:
    """The Lease the process decides under (None when it elects no leader), with the binder's writes fenced
    by it: a leader that has not renewed within the renew deadline writes nothing, so one frozen past its
    lease wakes without binding over its successor."""
    if not elect:
        return None
    elector = LeaderElector(client, namespace=namespace, name=name, identity=identity, timing=timing)
    binder.may_write = elector.may_write
    return elector


async def lead(
    elector: LeaderElector | None,
    binder: Binder,
    stop: asyncio.Event,
    schedule_until: Callable[[asyncio.Event], Awaitable[None]],
) -> None:
    """Schedule while leading (at once without an elector); on ``stop`` the binds in flight finish before
    the Lease is given up, so the standby that takes over sees them."""
    if elector is None:
        await schedule_until(stop)
        return
    await run_while_leading(elector, stop, schedule_until, before_release=binder.wait_idle)


def queue_turns(client: KubeClient, cache: SchedulerCache, *, namespace: str, identity: str) -> QueueTurns:
    """This process's turns at capped Queues (``queue_room.py``); a placement counts as come back once the
    cache no longer holds it as assumed."""
    room = QueueRoom(client, namespace=namespace, identity=identity, watch_version=cache.watch_version)
    return QueueTurns(room, lambda key: cache.assumed_node(key) is None)


def end_turns(
    turns: QueueTurns,
    binder: Binder,
    held: set[str],
    pods: Mapping[str, Sequence[str]],
    binds: Iterable[Bind],
) -> None:
    """Give back the turns ``held`` for one decision once the pods it bound there show in the watch.
    ``pods``: each capped Queue's pods the decision was offered. In the background: the next decision
    need not wait for the watch."""
    if not held:
        return
    bound = {f"{bind.namespace}/{bind.name}" for bind in binds}
    binder.spawn(turns.end(held, [key for queue in held for key in pods[queue] if key in bound]))


@asynccontextmanager
async def serving(
    server: MetricsServer, *services: Callable[[], Coroutine[Any, Any, None]]
) -> AsyncIterator[asyncio.TaskGroup]:
    """The probes served and ``services`` (the watches, the binder, the conf reload) run for as long as the
    body does; they are cancelled when it ends, and the server stops even when it fails. The body may start
    tasks of its own in the group it is given, which then cannot outlive the process."""
    await server.start()
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(service()) for service in services]
            yield group
            for task in tasks:
                task.cancel()
    finally:
        await server.stop()
