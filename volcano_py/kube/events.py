"""core/v1 Events, recorded without blocking and aggregated like client-go's recorder.

``record()`` is synchronous and never awaits: the scheduler's hot path only appends to a queue. A background
writer posts each new (object, type, reason, message) once and afterwards bumps ``count`` and
``lastTimestamp`` on the same Event, so a pod that stays unschedulable for an hour produces one Event with
a count, not 3,600.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from volcano_py.api.common import format_time
from volcano_py.kube.client import NETWORK_ERRORS, ApiError, KubeClient
from volcano_py.kube.kinds import EVENTS
from volcano_py.log import get_logger

_log = get_logger(__name__)

NORMAL: Final = "Normal"
WARNING: Final = "Warning"
_MAX_MESSAGE: Final = 1024


@dataclass(frozen=True, slots=True)
class ObjectRef:
    kind: str
    api_version: str
    name: str
    namespace: str
    uid: str

    @classmethod
    def of(cls, obj: dict[str, Any]) -> ObjectRef:
        meta = obj.get("metadata") or {}
        return cls(
            kind=str(obj.get("kind", "")),
            api_version=str(obj.get("apiVersion", "")),
            name=str(meta.get("name", "")),
            namespace=str(meta.get("namespace") or "default"),
            uid=str(meta.get("uid", "")),
        )

    def to_json(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "apiVersion": self.api_version,
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
        }


@dataclass(frozen=True, slots=True)
class PendingEvent:
    ref: ObjectRef
    type: str
    reason: str
    message: str
    at: datetime


@dataclass(slots=True)
class _Seen:
    name: str
    count: int
    last: float


class Aggregator:
    """Decides, per event, whether to create a new Event object or bump the count of an earlier one.

    Pure apart from the clock it is handed; remembers at most ``capacity`` keys (least recently used dropped).
    """

    def __init__(self, *, window_seconds: float = 600.0, capacity: int = 4096) -> None:
        self.window = window_seconds
        self.capacity = capacity
        self._seen: OrderedDict[tuple[str, str, str, str, str], _Seen] = OrderedDict()

    @staticmethod
    def key(event: PendingEvent) -> tuple[str, str, str, str, str]:
        return (
            event.ref.uid or f"{event.ref.namespace}/{event.ref.name}",
            event.ref.kind,
            event.type,
            event.reason,
            event.message,
        )

    def lookup(self, event: PendingEvent, now: float) -> _Seen | None:
        """The earlier Event to bump, if one was written within the window."""
        seen = self._seen.get(self.key(event))
        if seen is None or now - seen.last > self.window:
            return None
        self._seen.move_to_end(self.key(event))
        return seen

    def remember(self, event: PendingEvent, name: str, count: int, now: float) -> None:
        key = self.key(event)
        self._seen[key] = _Seen(name, count, now)
        self._seen.move_to_end(key)
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)

    def forget(self, event: PendingEvent) -> None:
        self._seen.pop(self.key(event), None)


class EventRecorder:
    """Queue Events from sync code; ``run()`` writes them. Drops (counts) events when the queue is full."""

    def __init__(
        self,
        client: KubeClient,
        *,
        component: str = "volcano",
        max_queued: int = 10_000,
        workers: int = 8,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.component = component
        # One queue per worker, picked by the aggregation key: repeats of one event are written in order by
        # one worker, so the second one patches the Event the first one created instead of racing it.
        self.queues: list[asyncio.Queue[PendingEvent]] = [
            asyncio.Queue(maxsize=max(1, max_queued // workers)) for _ in range(max(1, workers))
        ]
        self.aggregator = Aggregator()
        self.clock = clock
        self.dropped = 0
        self.written = 0

    def record(self, obj: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        if event_type not in (NORMAL, WARNING):
            raise ValueError(f"event type must be {NORMAL!r} or {WARNING!r}, got {event_type!r}")
        pending = PendingEvent(
            ObjectRef.of(obj), event_type, reason, message[:_MAX_MESSAGE], datetime.now(UTC)
        )
        queue = self.queues[hash(Aggregator.key(pending)) % len(self.queues)]
        try:
            queue.put_nowait(pending)
        except asyncio.QueueFull:
            self.dropped += 1

    def _body(self, event: PendingEvent, name: str) -> dict[str, Any]:
        stamp = format_time(event.at)
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": event.ref.namespace},
            "involvedObject": event.ref.to_json(),
            "type": event.type,
            "reason": event.reason,
            "message": event.message,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }

    async def write(self, event: PendingEvent) -> None:
        now = self.clock()
        seen = self.aggregator.lookup(event, now)
        if seen is not None:
            count = seen.count + 1
            patch = {"count": count, "lastTimestamp": format_time(event.at)}
            try:
                await self.client.patch(EVENTS.object_path(seen.name, event.ref.namespace), patch)
                self.aggregator.remember(event, seen.name, count, now)
                self.written += 1
                return
            except ApiError as exc:
                if not exc.not_found:
                    raise
                self.aggregator.forget(event)  # the Event expired server-side: start a new one
        name = f"{event.ref.name}.{time.time_ns():x}"
        await self.client.create(EVENTS.collection_path(event.ref.namespace), self._body(event, name))
        self.aggregator.remember(event, name, 1, now)
        self.written += 1

    async def _worker(self, queue: asyncio.Queue[PendingEvent]) -> None:
        while True:
            event = await queue.get()
            try:
                await self.write(event)
            except (ApiError, *NETWORK_ERRORS) as exc:
                _log.warning(
                    "could not write event", reason=event.reason, object=event.ref.name, error=repr(exc)
                )
            finally:
                queue.task_done()

    async def run(self) -> None:
        """Write queued events, one request in flight per worker queue, until cancelled."""
        async with asyncio.TaskGroup() as group:
            for queue in self.queues:
                group.create_task(self._worker(queue))

    async def flush(self) -> None:
        """Until every event recorded so far is written (or failed)."""
        for queue in list(self.queues):
            await queue.join()
