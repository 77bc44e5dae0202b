"""The agent scheduler's feed: what its cache's watches say, turned into its scheduling queue.

The cache is the batch scheduler's (``SchedulerCache``); its watchers call ``AgentFeed.on_change`` with
every change, and the feed keeps the scheduling queue (``scheduler/agent/queue.py``) current: a pod that
waits for this scheduler is active at once; one no node could take waits until an event that can help (a
node added or changed, a pod gone or finished, a shard or queue changed) and its backoff. It also counts the
binds that land on nodes, which tell a worker whether its view lost a race (``scheduler/agent/races.py``),
and keeps every pod of this scheduler as a session sees those it does not place.

The workers take pods from the queue (``agent.py``); nothing here decides.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.kube.kinds import NODES, NODESHARDS, PODS, QUEUES, ResourceKind
from volcano_py.kube.store import Delta, EventType
from volcano_py.scheduler.agent import pods as agent_pods
from volcano_py.scheduler.agent.queue import SchedulingQueue
from volcano_py.scheduler.agent.races import BindVersions
from volcano_py.scheduler.framework.decisions import Bind
from volcano_py.scheduler.runtime.cache import SchedulerCache

Obj = Mapping[str, Any]


class AgentFeed:
    """The scheduling queue of the scheduler ``name`` and what the workers read beside it, fed by ``cache``'s
    watches (``on_change``) and by the binds that fail (``unbound``). ``gone`` is told the key of each pod
    that no longer waits for this scheduler."""

    def __init__(self, name: str, cache: SchedulerCache, *, gone: Callable[[str], None]) -> None:
        self.name = name
        self.cache = cache
        self.gone = gone
        self.queue = SchedulingQueue()
        self.versions = BindVersions()
        # The pods that wait for this scheduler, by key (their newest version).
        self.waiting: dict[str, Obj] = {}
        self.work = asyncio.Event()  # set when a pod becomes active
        self.shard_changed = asyncio.Event()  # a NodeShard changed since the status was last written

    def on_change(self, kind: ResourceKind, delta: Delta) -> None:
        now = time.monotonic()
        new = None if delta.type is EventType.DELETED else delta.new
        if kind is PODS:
            key = delta.key
            if agent_pods.waits(new, self.name):
                assert new is not None
                self.waiting[key] = new
                # A pod whose bind is on its way is not queued again by a change the watch brings meanwhile
                # (its condition written, say); a bind that fails puts it back (``unbound``).
                if self.cache.assumed_node(key) is None and self.queue.add(key, agent_pods.priority_of(new)):
                    self.work.set()
            elif key in self.waiting:
                del self.waiting[key]
                self.gone(key)
                self.queue.remove(key)
            node = agent_pods.landed(delta.old, new)
            # A bind of ours was counted when it was assumed; any other is news to every worker's view.
            if node and self.cache.assumed_node(key) != node:
                self.versions.landed(node)
            if agent_pods.frees_room(delta.old, new):
                self._wake(now)
        elif kind is NODES:
            if new is None:
                self.versions.forget(delta.key)
            elif agent_pods.node_changed(delta.old, new):
                self._wake(now)
        elif kind is NODESHARDS or kind is QUEUES:
            if kind is NODESHARDS:
                self.shard_changed.set()
            self._wake(now)

    def _wake(self, now: float) -> None:
        if self.queue.wake(now):
            self.work.set()

    def unbound(self, bind: Bind) -> None:
        """A bind that failed: its pod, if it still waits, is tried again after its backoff."""
        key = f"{bind.namespace}/{bind.name}"
        pod = self.waiting.get(key) or self.cache.pod(key)
        if pod is None or not agent_pods.waits(pod, self.name):
            return  # gone, or bound after all: the watch says so
        self.waiting[key] = pod
        self.queue.add(key, agent_pods.priority_of(pod))
        self.queue.retry(key, time.monotonic())
