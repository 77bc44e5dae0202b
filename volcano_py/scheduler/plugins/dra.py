"""Dynamic Resource Allocation in a session: which nodes can satisfy a pod's ResourceClaims, and which devices
its claims get when it is placed (predicates' ``predicate.DynamicResourceAllocationEnable``).

At open, the ResourceSlices of complete pools give each node its devices (a slice of one node, of the nodes
its node selector picks, or of every node), and every allocated claim holds its devices. A class of pods
(fresh claims from the same templates, or the same named claims) passes a node when all its claims can be
satisfied there together (``framework.dra.choose_devices``) and the node is one its allocated claims allow.
Placing a pod allocates its claims on its node in the session, so the next pod, a gang mate included, sees
those devices taken; taking the pod back (a gang that does not fit whole) frees them. The allocation and the
reservation ride on the pod's bind (``TaskInfo.claim_writes``), which the binder writes before binding.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import ValidationError

from volcano_py.api import dra as api
from volcano_py.api.objects import name_of
from volcano_py.log import get_logger

from ..framework.classes import TaskClass
from ..framework.decisions import ClaimWrite
from ..framework.dra import (
    Chosen,
    Claim,
    ClassSpec,
    DeviceEntry,
    DeviceId,
    MatchMemo,
    NoFit,
    PodClaim,
    allocation_body,
    choose_devices,
    complete_pools,
    pod_claims,
    read_class,
)
from ..framework.extension import BoolArray, IntArray, NodeVerdict
from ..framework.session import Session
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo
from .matching import NodeLabels, SelectorError

log = get_logger(__name__)
_PLACED = frozenset({TaskStatus.ALLOCATED, TaskStatus.PIPELINED})


@dataclass(slots=True)
class _Allocated:
    """A claim allocated in this session: its devices, its body, and the placed pods using it."""

    results: tuple[tuple[str, DeviceId], ...]
    body: Mapping[str, Any]
    row: int
    users: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _RowFits:
    """Per node, whether a class's claims fit there (``reason`` -1) or which reason they fail with, as of the
    node's ``seen`` version; valid while ``state`` (the shared devices' version, the release view) holds."""

    state: tuple[int, bool]
    seen: IntArray
    reason: IntArray
    reasons: list[str] = field(default_factory=list)

    def index(self, reason: str) -> int:
        if reason not in self.reasons:
            self.reasons.append(reason)
        return self.reasons.index(reason)


@dataclass(frozen=True, slots=True)
class _Needs:
    """A class's claims: each pod's own from a template (the specs of one of its pods: every pod has its own
    copy), named claims still to allocate (shared by the pods), those already allocated (by key); or why the
    pods cannot be placed at all."""

    own: tuple[Claim, ...] = ()
    shared: tuple[Claim, ...] = ()
    allocated: tuple[str, ...] = ()
    blocked: str = ""


class DraSession:
    """One session's devices and claims; the predicates plugin calls it."""

    def __init__(self) -> None:
        self.ssn: Session | None = None
        self.classes: dict[str, ClassSpec] = {}
        self.claims: dict[str, Claim] = {}
        self.local: list[list[DeviceEntry]] = []  # by node row; built only when a pod asks for devices
        self.rows = 0  # the session's nodes
        # Devices of claims allocated before the session, and of those allocated in it.
        self.held: set[DeviceId] = set()
        self.session_held: set[DeviceId] = set()
        self.allocated: dict[str, _Allocated] = {}
        self.placed: dict[str, list[str]] = {}
        self.needs: dict[Hashable, _Needs] = {}
        self.labels = NodeLabels([], [])
        # Pods releasing (terminating, or evicted in this session), and the claims each one holds.
        self.releasing: set[str] = set()
        self.claims_of: dict[str, list[str]] = {}
        self._freeing: set[DeviceId] | None = None
        # Versions for ``_row_fits``: per node, bumped when its own devices are taken or given back; one for
        # the devices many nodes see (and for the release view), bumped likewise.
        self.row_version: IntArray = np.zeros(0, dtype=np.int64)
        self.version = 0
        self.local_ids: set[DeviceId] = set()
        self._fits: dict[Hashable, _RowFits] = {}
        self._slots: dict[Hashable, tuple[tuple[int, bool], IntArray, IntArray]] = {}
        self.memo: MatchMemo = {}

    # --- session ------------------------------------------------------------------------------------------

    def open(self, ssn: Session, labels: NodeLabels) -> None:
        self.ssn, self.labels = ssn, labels
        snapshot = ssn.snapshot
        self.rows = len(ssn.nodes)
        self.local = []
        self.allocated, self.placed, self.needs = {}, {}, {}
        asking = [t for job in ssn.waiting_jobs() for t in job.pending_tasks if t.claims_used]
        if not asking:
            return  # no pod to place claims: devices and claims need not be read
        self.local = [[] for _ in range(self.rows)]
        self.classes = {}
        for obj in snapshot.device_classes:
            try:
                spec = read_class(obj)
            except ValidationError as err:
                log.warning("DeviceClass unreadable; left out", name=_name(obj), error=str(err)[:200])
                continue
            self.classes[spec.name] = spec
        self.claims = snapshot.dra_claims()
        self.held = {d for c in self.claims.values() for d in c.allocated or ()}
        self.session_held = set()
        index = ssn.table.node_index
        pools = complete_pools(snapshot.dra_slices())
        local_slices = [piece for piece in pools if piece.node_name is not None]
        for piece in pools:
            if piece.node_name is not None:
                row = index.get(piece.node_name)
                if row is not None:
                    self.local[row].extend(piece.devices)
                continue
            if piece.all_nodes:
                rows = np.arange(len(ssn.nodes))
            elif piece.node_selector is not None:
                try:
                    rows = np.flatnonzero(labels.terms(piece.node_selector.get("nodeSelectorTerms") or []))
                except SelectorError as err:
                    log.warning("ResourceSlice node selector unreadable", pool=piece.pool, error=str(err))
                    continue
            else:
                continue
            for row in rows.tolist():
                self.local[row].extend(piece.devices)
        self.claims_of = {}
        for claim in self.claims.values():
            for uid in claim.reserved_for if claim.allocated else ():
                self.claims_of.setdefault(uid, []).append(claim.key)
        self.releasing = {
            t.uid
            for n in ssn.nodes
            for t in n.tasks.values()
            if t.status is TaskStatus.RELEASING and t.uid in self.claims_of
        }
        self._freeing = None
        self.row_version = np.zeros(len(ssn.nodes), dtype=np.int64)
        self.version = 0
        self._fits, self._slots, self.memo = {}, {}, {}
        self.local_ids = {d.id for piece in local_slices for d in piece.devices}
        for task in asking:
            klass = ssn.task_class(task)
            if klass.key not in self.needs:
                self.needs[klass.key] = self._needs_of(task)

    def close(self) -> None:
        self.ssn = None
        self.local, self.allocated, self.placed, self.needs = [], {}, {}, {}
        self.rows = 0
        self._fits, self._slots, self.memo = {}, {}, {}

    def _changed(self, row: int, devices: set[DeviceId]) -> None:
        """Devices at ``row`` were taken or given back: answers cached for that node (or, for devices other
        nodes see too, for every node) are stale."""
        self.row_version[row] += 1
        if not devices <= self.local_ids:
            self.version += 1

    # --- what a pod's claims need -------------------------------------------------------------------------

    def _claim(self, ref: PodClaim) -> Claim | str:
        if ref.waiting:
            return f"cannot be used yet: the pod {ref.waiting}"
        claim = self.claims.get(ref.claim)
        if claim is None:
            return f"cannot be used yet: ResourceClaim {ref.claim} does not exist"
        if claim.deleting:
            return f"cannot be used: ResourceClaim {ref.claim} is being deleted"
        if claim.refused:
            return f"cannot be used: {claim.refused}"
        return claim

    def _needs_of(self, task: TaskInfo) -> _Needs:
        own: list[Claim] = []
        shared: list[Claim] = []
        allocated: list[str] = []
        for ref in pod_claims(task.pod):
            claim = self._claim(ref)
            if isinstance(claim, str):
                return _Needs(blocked=claim)
            if ref.template and claim.owner_uid and claim.owner_uid != task.uid:
                why = f"cannot be used: ResourceClaim {claim.key} was not created for the pod"
                return _Needs(blocked=why)
            if claim.allocated is not None:
                allocated.append(claim.key)
            else:
                (own if ref.template else shared).append(claim)
        return _Needs(tuple(own), tuple(shared), tuple(allocated))

    def _taken(self) -> set[DeviceId]:
        """Devices no new claim can have: all allocated ones, less (inside ``ssn.after_releases``) those of
        claims whose every pod is releasing, which kube-controller-manager frees once the pods are gone."""
        if self.ssn is None or not self.ssn.counting_releases or not self.releasing:
            return self.held | self.session_held if self.session_held else self.held
        if self._freeing is None:
            freeing: set[DeviceId] = set()
            for uid in self.releasing:
                for key in self.claims_of.get(uid, ()):
                    claim = self.claims[key]
                    if all(user in self.releasing for user in claim.reserved_for):
                        freeing.update(claim.allocated or ())
            self._freeing = freeing
        return (self.held - self._freeing) | self.session_held

    def asks(self, klass: TaskClass) -> bool:
        return klass.key in self.needs

    def _current(self, needs: _Needs) -> tuple[list[Claim], list[str]]:
        """The class's claims as the session stands: a shared claim a gang mate allocated is pinned now."""
        fresh = [*needs.own, *(c for c in needs.shared if c.key not in self.allocated)]
        pinned = [*needs.allocated, *(c.key for c in needs.shared if c.key in self.allocated)]
        return fresh, pinned

    def _allowed(self, key: str, uid: str | None) -> tuple[BoolArray, str]:
        """Nodes an allocated claim lets its pods run on, and the reason the others fail with."""
        n = self.rows
        done = self.allocated.get(key)
        if done is not None:
            mask = np.zeros(n, dtype=np.bool_)
            mask[done.row] = True
            return mask, f"are not the node ResourceClaim {key} was allocated on in this cycle"
        claim = self.claims[key]
        if len(claim.reserved_for) >= api.RESERVED_FOR_MAX and uid not in claim.reserved_for:
            why = f"cannot be used: ResourceClaim {key} is reserved for too many pods"
            return np.zeros(n, dtype=np.bool_), why
        selector = claim.node_selector
        if not selector:
            return np.ones(n, dtype=np.bool_), ""
        try:
            mask = self.labels.terms(selector.get("nodeSelectorTerms") or [])
        except SelectorError as err:
            return np.zeros(n, dtype=np.bool_), f"cannot be matched: ResourceClaim {key}: {err}"
        return mask, f"are not where ResourceClaim {key} is allocated"

    # --- extension points (through the predicates plugin) ---------------------------------------------------

    def predicate(self, klass: TaskClass) -> NodeVerdict:
        n = self.rows
        needs = self.needs.get(klass.key)
        ok = np.ones(n, dtype=np.bool_)
        if needs is None:
            return NodeVerdict(ok)
        if needs.blocked:
            return NodeVerdict(np.zeros(n, dtype=np.bool_), [(needs.blocked, np.ones(n, dtype=np.bool_))])
        failures: list[tuple[str, BoolArray]] = []
        fresh, pinned = self._current(needs)
        for key in pinned:
            mask, reason = self._allowed(key, None)
            if not mask.all():
                failures.append((reason, ~mask & ok))
                ok &= mask
        if fresh:
            fits = self._row_fits(klass.key, fresh, ok)
            for index in np.unique(fits.reason[ok]).tolist():
                if index < 0:
                    continue
                mask = ok & (fits.reason == index)
                failures.append((fits.reasons[index], mask))
            ok &= fits.reason < 0
        return NodeVerdict(ok, [(r, m) for r, m in failures if m.any()])

    def _row_fits(self, key: Hashable, fresh: list[Claim], rows: BoolArray) -> _RowFits:
        """Whether ``fresh`` claims fit each of ``rows``, computed again only for nodes whose devices changed
        since it was last asked (a pod placed takes devices of one node: the next pod rechecks that node)."""
        ssn = self.ssn
        state = (self.version, ssn.counting_releases if ssn is not None else False)
        cache_key = (key, tuple(c.key for c in fresh))
        fits = self._fits.get(cache_key)
        if fits is None or fits.state != state:
            n = self.rows
            fits = _RowFits(state, np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64))
            self._fits[cache_key] = fits
        stale = np.flatnonzero(rows & (fits.seen != self.row_version))
        if stale.size:
            taken = self._taken()
            for row in stale.tolist():
                chosen = choose_devices(fresh, self.local[row], taken, self.classes, self.memo)
                fits.reason[row] = fits.index(chosen.reason) if isinstance(chosen, NoFit) else -1
            fits.seen[stale] = self.row_version[stale]
        return fits

    def slots(self, klass: TaskClass, cap: int) -> IntArray | None:
        """How many pods of ``klass`` each node's devices can take one after another (at most ``cap``); None
        when its pods share a claim still to allocate (the first pod decides the node: placed pod by pod)."""
        needs = self.needs.get(klass.key)
        if needs is None:
            return None
        out: IntArray = np.zeros(self.rows, dtype=np.int64)
        if needs.blocked:
            return out
        if needs.shared:
            return None
        fresh, pinned = self._current(needs)
        ok = np.ones(self.rows, dtype=np.bool_)
        for key in pinned:
            ok &= self._allowed(key, None)[0]
        if not fresh:
            out[ok] = cap
            return out
        ssn = self.ssn
        state = (self.version, ssn.counting_releases if ssn is not None else False)
        cache_key = (klass.key, tuple(c.key for c in fresh), cap)
        cached = self._slots.get(cache_key)
        if cached is None or cached[0] != state:
            n = self.rows
            cached = (state, np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64))
            self._slots[cache_key] = cached
        _, seen, counts = cached
        stale = np.flatnonzero(ok & (seen != self.row_version))
        taken = self._taken() if stale.size else set()
        for row in stale.tolist():
            devices = self.local[row]
            held = {d.id for d in devices if d.id in taken}
            count = 0
            while count < cap:
                chosen = choose_devices(fresh, devices, held, self.classes, self.memo)
                if isinstance(chosen, NoFit):
                    break
                held |= chosen.devices()
                count += 1
            counts[row] = count
        seen[stale] = self.row_version[stale]
        out[ok] = counts[ok]
        return out

    def on_allocate(self, task: TaskInfo) -> None:
        ssn = self.ssn
        if task.uid in self.releasing and task.status is not TaskStatus.RELEASING:
            self.releasing.discard(task.uid)  # an eviction taken back
            self._freeing = None
            self.version += 1
        if ssn is None or not task.claims_used or task.status not in _PLACED or not task.node_name:
            return
        row = ssn.node_of(task)
        fresh: list[Claim] = []
        using: list[Claim] = []
        for ref in pod_claims(task.pod):
            claim = self._claim(ref)
            if isinstance(claim, str):
                log.warning("a placed pod's claim cannot be used", pod=task.key, why=claim)
                return
            (fresh if claim.allocated is None and claim.key not in self.allocated else using).append(claim)
        taken = self._taken()
        chosen = (
            choose_devices(fresh, self.local[row], taken, self.classes, self.memo) if fresh else Chosen({})
        )
        if isinstance(chosen, NoFit):
            log.warning("no devices fit a placed pod's claims", pod=task.key, why=chosen.reason)
            return
        node = ssn.nodes[row].name
        for claim in fresh:
            results = chosen.results.get(claim.key, ())
            body = allocation_body(claim, results, node, self.classes)
            self.allocated[claim.key] = _Allocated(results, body, row)
            took = {d for _, d in results}
            self.session_held |= took
            self._changed(row, took)
        writes: list[ClaimWrite] = []
        keys: list[str] = []
        for claim in [*fresh, *using]:
            done = self.allocated.get(claim.key)
            if done is not None:
                done.users.add(task.uid)
            writes.append(ClaimWrite(claim.namespace, claim.name, claim.uid, done.body if done else None))
            keys.append(claim.key)
        self.placed[task.uid] = keys
        task.claim_writes = tuple(writes)

    def on_deallocate(self, task: TaskInfo) -> None:
        if task.status is TaskStatus.RELEASING and task.uid in self.claims_of:
            self.releasing.add(task.uid)  # evicted: its claims free their devices once it is gone
            self._freeing = None
            self.version += 1
        keys = self.placed.pop(task.uid, None)
        if keys is None:
            return
        for key in keys:
            done = self.allocated.get(key)
            if done is None:
                continue
            done.users.discard(task.uid)
            if not done.users:
                freed = {d for _, d in done.results}
                self.session_held -= freed
                self._changed(done.row, freed)
                del self.allocated[key]
        task.claim_writes = ()


def _name(obj: Mapping[str, Any]) -> str:
    return name_of(obj)
