"""What the binder's writers share: where they write and whom they tell, the leader's fence, the binder's
task group, and how a failed request reads.

The ``Binder`` owns the concurrency (its TaskGroup, its slots) and the fence; each kind of write lives in a
module of its own (``pod_binds``, ``pod_writes``, ``status_writes``) and reaches them only through a
``WriteContext``, so no writer holds the binder itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.leader import WriteStamp
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics


def pod_ref(namespace: str, name: str, uid: str) -> dict[str, Any]:
    """What an Event names a pod by when the cache has it no more (or holds another pod of that name)."""
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": namespace, "uid": uid}}


@dataclass(frozen=True, slots=True)
class WriteContext:
    client: KubeClient
    # Where the writes' promises are kept and taken back.
    cache: SchedulerCache
    recorder: EventRecorder
    metrics: SchedulerMetrics
    # The leader's fence, asked right before each write: its stamp, or None when the write must be dropped.
    fence: Callable[[str], WriteStamp | None]
    # Runs a request among the binder's tasks (``Binder.spawn``).
    spawn: Callable[[Coroutine[Any, Any, object]], None]

    def observe(self, operation: str, result: str, started: float) -> None:
        """A request's latency since ``started`` (``time.monotonic``), by operation and result."""
        elapsed_ms = (time.monotonic() - started) * 1000
        self.metrics.task_operation_latency.labels(operation, result).observe(elapsed_ms)
