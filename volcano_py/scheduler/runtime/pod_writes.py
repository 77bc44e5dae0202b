"""The binder's writes on pods other than binds: evictions, nominated nodes and queue-allocation gates.

* Evictions are promised in the cache (the pod counts as releasing), then first set the ``DisruptionTarget``
  condition (so the pod's owner can tell preemption from a crash) and delete with the pod's uid as a
  precondition. One refused or dropped at the fence is taken back from the cache.
* A pipelined pod gets its ``nominatedNodeName``, written once per node: the session repeats the nomination
  every cycle until the pod binds.
* A pod whose queue admitted it past Volcano's queue-allocation gate has that gate removed (a strategic
  merge patch deleting just it), best effort: one that fails is decided again by a later cycle.
"""

from __future__ import annotations

import asyncio
import time

from volcano_py.api import constants as c
from volcano_py.api.bodies.pod import pod_nominated_node
from volcano_py.api.objects import uid_of
from volcano_py.kube import patch
from volcano_py.kube.client import NETWORK_ERRORS, ApiError
from volcano_py.kube.events import NORMAL
from volcano_py.log import get_logger
from volcano_py.scheduler.framework.decisions import EVICTING_ACTIONS, Evict, Pipeline, Ungate
from volcano_py.scheduler.runtime.writes import WriteContext, pod_ref

_log = get_logger(__name__)


class PodWrites:
    """Evictions share ``bind_slots`` with the binds; nominations and gate removals take ``status_slots``."""

    def __init__(
        self, ctx: WriteContext, bind_slots: asyncio.Semaphore, status_slots: asyncio.Semaphore
    ) -> None:
        self.ctx = ctx
        self._bind_slots = bind_slots
        self._status_slots = status_slots
        # Pods whose gate removal is on its way: a cycle that runs before the watch shows it decides it again.
        self._ungating: set[str] = set()

    def evict(self, evict: Evict) -> None:
        self.ctx.cache.mark_evicting(f"{evict.namespace}/{evict.name}", evict.uid)
        self.ctx.spawn(self._evict(evict))

    def nominate(self, pipelined: Pipeline) -> None:
        pod = self.ctx.cache.pod(f"{pipelined.namespace}/{pipelined.name}")
        if pod is not None and pod_nominated_node(pod) != pipelined.node:
            self.ctx.spawn(self._nominate(pipelined))

    def ungate(self, ungate: Ungate) -> None:
        key = f"{ungate.namespace}/{ungate.name}"
        if key not in self._ungating:
            self._ungating.add(key)
            self.ctx.spawn(self._ungate(ungate, key))

    async def _nominate(self, pipelined: Pipeline) -> None:
        key = f"{pipelined.namespace}/{pipelined.name}"
        async with self._status_slots:
            if self.ctx.fence(f"nominate {key}") is None:
                return
            try:
                await patch.set_nominated_node(
                    self.ctx.client, pipelined.namespace, pipelined.name, pipelined.node
                )
            except (ApiError, *NETWORK_ERRORS) as exc:
                if not (isinstance(exc, ApiError) and exc.not_found):
                    _log.warning("nominating a node failed", pod=key, node=pipelined.node, error=repr(exc))

    async def _ungate(self, ungate: Ungate, key: str) -> None:
        started = time.monotonic()
        try:
            async with self._status_slots:
                if self.ctx.fence(f"ungate {key}") is None:
                    return
                await patch.remove_scheduling_gate(
                    self.ctx.client, ungate.namespace, ungate.name, c.QUEUE_ALLOCATION_GATE_KEY
                )
        except (ApiError, *NETWORK_ERRORS) as exc:
            self.ctx.observe("ungate", "error", started)
            if not (isinstance(exc, ApiError) and exc.not_found):
                _log.warning("removing the queue-allocation gate failed", pod=key, error=repr(exc))
            return
        finally:
            self._ungating.discard(key)
        self.ctx.observe("ungate", "success", started)
        _log.info("queue-allocation gate removed", pod=key, job=ungate.job)

    async def _evict(self, evict: Evict) -> None:
        ctx = self.ctx
        key = f"{evict.namespace}/{evict.name}"
        started = time.monotonic()
        message = evict.reason + (f" (preempted for {evict.preemptor})" if evict.preemptor else "")
        if evict.detail:
            message = f"{message}: {evict.detail}"
        # The core's evictions name their action (preempt, reclaim, shuffle, consolidate); any other
        # reason is reclaim's.
        action = (
            evict.reason
            if evict.reason in EVICTING_ACTIONS
            else ("preempt" if evict.preemptor else "reclaim")
        )
        async with self._bind_slots:
            stamp = ctx.fence(f"evict {key}")
            if stamp is None:
                ctx.cache.unmark_evicting(key)
                return
            try:
                await patch.set_pod_condition(
                    ctx.client,
                    evict.namespace,
                    evict.name,
                    patch.condition("DisruptionTarget", "True", "PreemptionByScheduler", message),
                )
                await patch.delete_pod(ctx.client, evict.namespace, evict.name, evict.uid)
            except (ApiError, *NETWORK_ERRORS) as exc:
                ctx.observe("evict", "error", started)
                ctx.cache.unmark_evicting(key)
                if not (isinstance(exc, ApiError) and exc.not_found):
                    _log.warning("eviction failed", pod=key, error=repr(exc), **stamp.fields())
                return
        ctx.observe("evict", "success", started)
        _log.debug("evicted", pod=key, action=action, preemptor=evict.preemptor, **stamp.fields())
        ctx.metrics.evictions.labels(action).inc()
        # By the time the delete answers, the pod's controller may have made a new pod under the same name:
        # the Event names the pod evicted, never its successor.
        cached = ctx.cache.pod(key)
        same = cached is not None and uid_of(cached) == evict.uid
        pod = cached if same and cached is not None else pod_ref(evict.namespace, evict.name, evict.uid)
        ctx.recorder.record(pod, NORMAL, "Evict", f"Pod {key} evicted: {message}")
