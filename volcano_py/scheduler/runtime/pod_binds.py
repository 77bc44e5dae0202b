"""The binder's binds: a gang's pods bound through ``pods/binding``, their ResourceClaims first.

A bind is assumed in the cache when it is submitted, so the next snapshot already counts the pod on its node.
A pod's ResourceClaims are allocated and reserved for it before its bind, as kube-scheduler's PreBind does
(the kubelet prepares only claims reserved for the pod), and taken back when the bind fails. A bound pod gets
its ``Scheduled`` Event within a budget per second; a gang's pods bound beyond it are told in one Event on
their PodGroup once the gang's binds have answered (see ``scheduled``). A refused bind (or one dropped at
the fence) rolls back the assumption and tells ``unbound``; a refused one also marks the pod
``PodScheduled=False`` with reason ``SchedulerError`` and records ``FailedScheduling``: the pod is pending
again in the next cycle.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from volcano_py.api.objects import creation_timestamp_of
from volcano_py.kube import binding, claims, patch
from volcano_py.kube.claims import ClaimError
from volcano_py.kube.client import NETWORK_ERRORS, ApiError
from volcano_py.kube.events import NORMAL, WARNING
from volcano_py.kube.leader import WriteStamp
from volcano_py.log import get_logger
from volcano_py.scheduler.framework.decisions import Bind, ClaimWrite
from volcano_py.scheduler.framework.task import timestamp
from volcano_py.scheduler.runtime.scheduled import EventBudget, summary
from volcano_py.scheduler.runtime.writes import WriteContext, pod_ref

_log = get_logger(__name__)


class PodBinds:
    """Binds through ``slots`` (shared with evictions); ``events``: the budget of ``Scheduled`` Events."""

    def __init__(
        self,
        ctx: WriteContext,
        slots: asyncio.Semaphore,
        events: EventBudget,
        unbound: Callable[[Bind], None],
    ) -> None:
        self.ctx = ctx
        self._slots = slots
        self.scheduled_events = events
        self._unbound = unbound
        # Binds assumed whose answer has not come back yet (queued behind the slots, or in flight).
        self.unanswered = 0

    def assume(self, binds: Sequence[Bind]) -> None:
        """Promise the binds in the cache: from now on every snapshot shows their pods bound."""
        cache = self.ctx.cache
        for bind in binds:
            cache.assume(f"{bind.namespace}/{bind.name}", bind.uid, bind.node, bind.annotations)
            if bind.claims:
                cache.assume_claims(bind.name, bind.uid, bind.claims)

    async def bind_gang(self, job: str, binds: Sequence[Bind]) -> None:
        """Bind a gang's pods (assumed already) all at once, then tell those beyond the Event budget."""
        # The nodes of the pods bound beyond the Event budget; a pod without a PodGroup gets its own anyway.
        untold: list[str] | None = [] if self.ctx.cache.podgroup(job) is not None else None
        if len(binds) == 1:  # a one-pod job, most of a backlog: no gathering future per bind
            results = [await self._counted(self._bind_one(binds[0], untold))]
        else:
            results = await asyncio.gather(*(self._counted(self._bind_one(b, untold)) for b in binds))
        failed = results.count(False)
        if failed:
            _log.warning("gang partly unbound", job=job, bound=len(binds) - failed, failed=failed)
        # Looked up again: the PodGroup may have gone while its pods were bound.
        if untold and (podgroup := self.ctx.cache.podgroup(job)) is not None:
            # A summary of one pod is that pod's own Event under another name (a backlog of one-pod jobs
            # would write one per pod): the budget that refused the one refuses the other.
            if len(untold) == 1 and not self.scheduled_events.take():
                self.ctx.metrics.scheduled_events_skipped.inc()
                return
            message = summary(untold, self.scheduled_events.qps)
            self.ctx.recorder.record(dict(podgroup), NORMAL, "Scheduled", message)

    async def _counted(self, bind: Coroutine[Any, Any, bool]) -> bool:
        self.unanswered += 1
        try:
            return await bind
        finally:
            self.unanswered -= 1

    async def _bind_one(self, bind: Bind, untold: list[str] | None = None) -> bool:
        ctx = self.ctx
        key = f"{bind.namespace}/{bind.name}"
        started = time.monotonic()
        async with self._slots:
            written: list[tuple[ClaimWrite, bool]] = []
            binding_sent = False
            stamp = ctx.fence(f"bind {key}")
            if stamp is None:
                self._take_back(bind, key)
                return False
            try:
                for write in bind.claims:
                    wrote = await claims.reserve_claim(
                        ctx.client,
                        write.namespace,
                        write.name,
                        write.uid,
                        write.allocation,
                        bind.name,
                        bind.uid,
                    )
                    written.append((write, wrote))
                binding_sent = True
                await binding.bind_pod(
                    ctx.client, bind.namespace, bind.name, bind.uid, bind.node, bind.annotations
                )
            except (ApiError, ClaimError, *NETWORK_ERRORS) as exc:
                ctx.observe("bind", "error", started)
                # A pod already bound (by a previous leader) runs with its claims: they stay reserved for it.
                already_bound = binding_sent and isinstance(exc, ApiError) and exc.conflict
                if not already_bound:
                    await self._undo_claims(bind, written)
                await self._bind_failed(bind, key, exc, stamp)
                return False
        ctx.observe("bind", "success", started)
        ctx.metrics.bound_pods.inc()
        # Per pod, so at debug only: a gang's progress, which the chaos suite times its mid-bind kills from;
        # ``checked``/``sent`` (WriteStamp) place the write in a leader's term.
        _log.debug("bound", pod=key, node=bind.node, **stamp.fields())
        pod = ctx.cache.pod(key)
        created = timestamp(creation_timestamp_of(pod or {}))
        if created:
            ctx.metrics.task_scheduling_latency.observe(max(0.0, time.time() - created) * 1000)
        if not self.scheduled_events.take() and untold is not None:
            untold.append(bind.node)  # told on its PodGroup once the gang's binds have answered
            return True
        ctx.recorder.record(
            pod or pod_ref(bind.namespace, bind.name, bind.uid),
            NORMAL,
            "Scheduled",
            f"Successfully assigned {key} to {bind.node}",
        )
        return True

    def _take_back(self, bind: Bind, key: str) -> None:
        """The bind was not made: its pod and claims are as the API says again."""
        self.ctx.cache.forget(key)
        self.ctx.cache.forget_claims(bind.uid)
        self._unbound(bind)

    async def _undo_claims(self, bind: Bind, written: list[tuple[ClaimWrite, bool]]) -> None:
        """Take back the reservations (and the allocations this bind made) of a pod that was not bound."""
        for write, wrote in reversed(written):
            try:
                await claims.unreserve_claim(
                    self.ctx.client, write.namespace, write.name, write.uid, bind.uid, deallocate=wrote
                )
            except (ApiError, ClaimError, *NETWORK_ERRORS) as exc:
                # The resourceclaim controller removes a reservation of a pod that is gone; one of a pending
                # pod stays until the pod is placed again, with the same devices.
                _log.warning("could not take back a claim's reservation", claim=write.key, error=repr(exc))

    async def _bind_failed(self, bind: Bind, key: str, exc: Exception, stamp: WriteStamp) -> None:
        ctx = self.ctx
        self._take_back(bind, key)
        ctx.metrics.bind_failures.inc()
        ctx.metrics.schedule_attempts.labels("error").inc()
        message = f"failed to bind {key} to {bind.node}: {exc}"
        _log.warning(
            "bind failed; pod returns to the queue",
            pod=key,
            node=bind.node,
            error=repr(exc),
            **stamp.fields(),
        )
        if isinstance(exc, ApiError) and (exc.not_found or exc.conflict):
            # Gone, or already bound (e.g. by a previous leader whose bind the watch had not shown yet):
            # nothing to mark, and the watch will show where it runs.
            return
        try:
            await patch.set_pod_condition(
                ctx.client,
                bind.namespace,
                bind.name,
                patch.condition("PodScheduled", "False", "SchedulerError", message),
            )
        except (ApiError, *NETWORK_ERRORS) as mark_exc:
            _log.warning("could not mark the pod unscheduled", pod=key, error=repr(mark_exc))
        pod = ctx.cache.pod(key) or pod_ref(bind.namespace, bind.name, bind.uid)
        ctx.recorder.record(pod, WARNING, "FailedScheduling", message)
