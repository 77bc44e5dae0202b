"""What the binder has promised and the watches have not shown yet, and the cluster as it is with them.

The informers hold the cluster as the API server last said, seconds behind the binder under load. A cycle
that read only them would place a pod whose bind is on its way a second time, or another pod into its room.
So each promise is kept here until the watch shows it kept (or it is taken back), and every snapshot shows
the stores with the promises in force:

* *assumed* binds: a pod whose bind was sent counts as bound on its node until the watch shows it bound (or
  deleted); a failed bind is ``forget()``-ed and the pod is pending again;
* *evictions* in flight: a pod whose delete was sent counts as releasing until the watch shows it terminating;
* *claims* being written with a bind: a ResourceClaim counts as allocated and reserved for its pod until the
  watch shows it so (or the bind fails), so the next cycle does not hand its devices to another pod;
* *PodGroup statuses* being written: a PodGroup shows the status the binder is writing until the watch
  brings a newer version of it (or the write fails), so the next cycle neither admits a gang again that
  enqueue admitted nor offers the same status again while the write is on its way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.bodies.pod import pod_node_name, with_node_name
from volcano_py.api.bodies.podgroup import with_podgroup_status
from volcano_py.api.common import now_time
from volcano_py.api.objects import (
    annotations_of,
    is_deleting,
    metadata_of,
    name_of,
    namespace_of,
    status_of,
    uid_of,
)
from volcano_py.kube.store import Delta, EventType, Obj, Store
from volcano_py.scheduler.framework.decisions import ClaimWrite
from volcano_py.scheduler.runtime.shown_pods import ShownPods

# A promised status whose write has answered, but which the watch never confirms nor replaces (a lost event),
# is dropped this long after the answer: the next cycle then offers the status again. A write still queued
# keeps its promise however long it waits (a backlog's status writes wait behind its binds).
STATUS_PROMISE_SECONDS = 60.0


def bound_view(pod: Obj, node: str, annotations: Mapping[str, str]) -> Obj:
    """The pod as its bind to ``node`` will leave it: what the cache shows of an assumed pod."""
    bound = with_node_name(pod, node)
    if not annotations:
        return bound
    return {**bound, "metadata": {**metadata_of(pod), "annotations": {**annotations_of(pod), **annotations}}}


def _terminating(pod: Obj) -> Obj:
    return {**pod, "metadata": {**metadata_of(pod), "deletionTimestamp": now_time()}}


@dataclass(slots=True)
class _Assumed:
    uid: str
    node: str
    # What the bind writes on the pod with the node (the chosen GPU cards), so the next snapshot counts them.
    annotations: Mapping[str, str] = field(default_factory=dict)
    # The informer's pod and the bound view made of it: the same view while the pod is unchanged, so the
    # core's records read it once, not once per cycle until the watch shows the bind.
    seen: Obj | None = None
    view: Obj | None = None

    def view_of(self, pod: Obj) -> Obj:
        if self.seen is not pod or self.view is None:
            self.seen, self.view = pod, bound_view(pod, self.node, self.annotations)
        return self.view


@dataclass(slots=True)
class _AssumedClaim:
    """A claim's promised state: its uid, the allocation the binds write (None: it had one), and the pods
    (uid -> name) it is being reserved for."""

    uid: str
    allocation: Mapping[str, Any] | None
    pods: dict[str, str] = field(default_factory=dict)

    def shown_in(self, claim: Obj) -> bool:
        status = status_of(claim)
        reserved = {r.get("uid") for r in status.get("reservedFor") or ()}
        return status.get("allocation") is not None and all(uid in reserved for uid in self.pods)

    def view_of(self, claim: Obj) -> Obj:
        status = dict(status_of(claim))
        if status.get("allocation") is None and self.allocation is not None:
            status["allocation"] = dict(self.allocation)
        reserved = list(status.get("reservedFor") or [])
        have = {r.get("uid") for r in reserved}
        for uid, name in self.pods.items():
            if uid not in have:
                reserved.append({"resource": "pods", "name": name, "uid": uid})
        status["reservedFor"] = reserved
        return {**claim, "status": status}


@dataclass(slots=True)
class _PromisedStatus:
    """A PodGroup status being written, shown on the informer's PodGroup it was promised on (``base``)."""

    base: Obj
    status: Obj
    view: Obj
    # When its write answered (None: still on its way).
    written: float | None = None


class Promises:
    """The promises over the informers' stores of pods, PodGroups and ResourceClaims. ``changed`` is called
    whenever a promise made or taken back changes what a snapshot shows (the cache's generation)."""

    def __init__(
        self,
        pods: Store,
        podgroups: Store,
        claims: Store,
        changed: Callable[[], None],
        shown: ShownPods | None = None,
    ) -> None:
        """``shown``: the pods as the sessions see them before the promises, when not as the store has them
        (the agent scheduler's)."""
        self._pod_store = pods
        self._shown = shown
        self._podgroup_store = podgroups
        self._claim_store = claims
        self._changed = changed
        self._assumed: dict[str, _Assumed] = {}
        # The assumed pods as snapshots show them (bound), kept as binds are assumed and as the watch brings
        # their pods: a backlog assumes tens of thousands at once, and each cycle would look at them all.
        self._assumed_shown: dict[str, Obj] = {}
        self._evicting: dict[str, str] = {}
        # Evicting pods as shown (terminating), by the informer's pod: the same view while it is unchanged.
        self._terminating: dict[str, tuple[Obj, Obj]] = {}
        self._claims: dict[str, _AssumedClaim] = {}
        self._statuses: dict[str, _PromisedStatus] = {}

    # --- made and taken back --------------------------------------------------------------------------------

    def assume(self, pod_key: str, uid: str, node: str, annotations: Mapping[str, str] | None = None) -> None:
        """Count the pod as bound to ``node`` from now on (its bind is being sent)."""
        assumed = self._assumed[pod_key] = _Assumed(uid, node, dict(annotations or {}))
        pod = self._pod_store.get(pod_key)
        if pod is not None and uid_of(pod) == uid and not pod_node_name(pod):
            self._assumed_shown[pod_key] = assumed.view_of(pod)
        else:  # shown once the watch brings it as assumed (or never: it is bound or gone already)
            self._assumed_shown.pop(pod_key, None)
        self._changed()

    def forget(self, pod_key: str) -> None:
        """The bind failed: the pod is pending again and its node's room is free again."""
        self._assumed_shown.pop(pod_key, None)
        if self._assumed.pop(pod_key, None) is not None:
            self._changed()

    def assumed_node(self, pod_key: str) -> str | None:
        assumed = self._assumed.get(pod_key)
        return assumed.node if assumed else None

    def assume_claims(self, pod_name: str, pod_uid: str, writes: Sequence[ClaimWrite]) -> None:
        """Count the claims as allocated and reserved for the pod from now on (its bind is being sent)."""
        for write in writes:
            assumed = self._claims.get(write.key)
            if assumed is None or assumed.uid != write.uid:
                assumed = self._claims[write.key] = _AssumedClaim(write.uid, write.allocation)
            elif assumed.allocation is None:
                assumed.allocation = write.allocation
            assumed.pods[pod_uid] = pod_name
        self._changed()

    def forget_claims(self, pod_uid: str) -> None:
        """The pod's bind failed: its claims are as the API says again."""
        for key, assumed in list(self._claims.items()):
            if assumed.pods.pop(pod_uid, None) is not None and not assumed.pods:
                del self._claims[key]
        self._changed()

    def mark_evicting(self, pod_key: str, uid: str) -> None:
        self._evicting[pod_key] = uid
        self._changed()

    def unmark_evicting(self, pod_key: str) -> None:
        if self._evicting.pop(pod_key, None) is not None:
            self._changed()

    def promise_status(self, key: str, status: Obj) -> None:
        """Show ``status`` on the PodGroup of ``key`` from now on (the binder is writing it)."""
        base = self._podgroup_store.get(key)
        if base is None:
            return
        promised = self._statuses.get(key)
        if promised is not None and promised.base is base and promised.status is status:
            return
        self._statuses[key] = _PromisedStatus(base, status, with_podgroup_status(base, status))
        self._changed()

    def status_written(self, key: str, status: Obj) -> None:
        """The write of ``status`` answered: the watch shows it soon (see ``STATUS_PROMISE_SECONDS``)."""
        promised = self._statuses.get(key)
        if promised is not None and promised.status is status:
            promised.written = time.monotonic()

    def withdraw_status(self, key: str, status: Obj | None = None) -> None:
        """The write of ``status`` (None: any) failed or was dropped: the PodGroup is as the API says."""
        promised = self._statuses.get(key)
        if promised is not None and (status is None or promised.status is status):
            del self._statuses[key]
            self._changed()

    def promised_status(self, key: str) -> Obj | None:
        promised = self._statuses.get(key)
        return promised.status if promised is not None else None

    # --- kept: the watch shows them -------------------------------------------------------------------------
    # Called with each watch event, whose change the cache has counted already: no ``changed`` here.

    def pod_seen(self, delta: Delta) -> None:
        key = delta.key
        pod = delta.new or {}
        assumed = self._assumed.get(key)
        if assumed is not None:
            # The watch has caught up (bound, gone, or a different pod under the same name): stop assuming.
            if delta.type is EventType.DELETED or uid_of(pod) != assumed.uid or pod_node_name(pod):
                del self._assumed[key]
                self._assumed_shown.pop(key, None)
            else:
                self._assumed_shown[key] = assumed.view_of(pod)
        # An eviction is kept once its pod shows terminating (or gone).
        if key in self._evicting and (delta.type is EventType.DELETED or is_deleting(pod)):
            del self._evicting[key]

    def podgroup_seen(self, delta: Delta) -> None:
        promised = self._statuses.get(delta.key)
        if promised is not None and (delta.type is EventType.DELETED or delta.new is not promised.base):
            del self._statuses[delta.key]  # the watch brought our write, or something newer

    def claim_seen(self, delta: Delta) -> None:
        assumed = self._claims.get(delta.key)
        if assumed is None:
            return
        claim = delta.new or {}
        if delta.type is EventType.DELETED or uid_of(claim) != assumed.uid or assumed.shown_in(claim):
            del self._claims[delta.key]

    # --- the stores as they are with them -------------------------------------------------------------------

    def pods(self, placing: Collection[str] = ()) -> list[Obj]:
        """The pods, assumed ones bound and evicting ones terminating; with ``ShownPods``, each as it shows
        it but those of ``placing``, shown as they are."""
        # Only the promised pods are looked at, and the assumed ones are kept as shown (``pod_seen``).
        store = self._pod_store
        base = self._shown
        if not placing and not self._evicting:
            assumed = self._assumed_shown
            return base.listing(assumed) if base is not None else store.values_with(assumed)
        shown = dict(self._assumed_shown)
        for key in placing:
            if base is None:
                shown.pop(key, None)
            elif (pod := store.get(key)) is not None:
                shown[key] = pod
        if self._terminating.keys() - self._evicting.keys():
            self._terminating = {k: v for k, v in self._terminating.items() if k in self._evicting}
        for key in self._evicting:
            pod = store.get(key)
            if pod is None or is_deleting(pod):
                continue
            seen = self._terminating.get(key)
            if seen is None or seen[0] is not pod:
                view = shown.get(key) or (base.view(key) if base is not None else None) or pod
                seen = self._terminating[key] = (pod, _terminating(view))
            shown[key] = seen[1]
        return base.listing(shown) if base is not None else store.values_with(shown)

    def podgroups(self) -> list[Obj]:
        """The PodGroups with the statuses on their way; a promise its write answered long ago is dropped."""
        store = self._podgroup_store
        if not self._statuses:
            return store.values()
        now = time.monotonic()
        stale = [
            key
            for key, p in self._statuses.items()
            if p.written is not None and now - p.written > STATUS_PROMISE_SECONDS
        ]
        for key in stale:
            self.withdraw_status(key)
        return store.values_with({key: promised.view for key, promised in self._statuses.items()})

    def claims(self) -> list[Obj]:
        """The ResourceClaims, allocated and reserved as the binds on their way write them."""
        claims = self._claim_store.values()
        if not self._claims:
            return claims
        out: list[Obj] = []
        for claim in claims:
            assumed = self._claims.get(f"{namespace_of(claim)}/{name_of(claim)}")
            promised = assumed is not None and assumed.uid == uid_of(claim)
            out.append(assumed.view_of(claim) if assumed is not None and promised else claim)
        return out
