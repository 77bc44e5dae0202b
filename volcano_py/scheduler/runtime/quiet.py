"""The quiet memo: a cycle over a cluster with nothing waiting costs a scan of identities, not a session.

A session can only decide something for a pod that waits (a pending task of ours) or a PodGroup that waits
(phase Pending): every action starts from one of those. When the last session had neither, and decided
nothing, and wrote nothing, the next one over the same inputs would decide nothing again and report the same
queue accounting. Wall time cannot change that either: time-based policies (sla, cdp) only act on a job or
pod that waits. So ``QuietMemo`` keeps that outcome and the objects it came from, and hands the outcome back
while every object is either the same dict or a new version that differs only where the scheduler does not
read (``resourceVersion``, ``managedFields``, a pod's container statuses and conditions, a node's heartbeat
times).

Anything else (a new, changed or deleted object of any kind, a conf reload) means a full session, which is
always the ground truth: the memo never decides, it only recognises a repeat. Its cost is one dict lookup
per object: about 1 ms at 10,000 pods, against 100+ ms for a session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.kube.kinds import object_identity
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.snapshot import Snapshot

from .cache import ClusterState

Obj = Mapping[str, Any]

# Metadata that changes on every write without changing what the object says.
_VOLATILE_METADATA = frozenset({"resourceVersion", "managedFields", "generation"})
# Of a pod's status the scheduler reads its phase (the task status) and its nomination; the rest is the
# kubelet's report (containers, IPs, start time, conditions), read only by preemption's cooldown (cdp),
# which acts only when some pod waits, and then the memo is not in use.
_POD_STATUS_READ = ("phase", "nominatedNodeName")
# A node's conditions are re-stamped on every heartbeat; their type, status and reason are what counts.
_NODE_CONDITION_STAMPS = frozenset({"lastHeartbeatTime", "lastTransitionTime"})

# Every list of ClusterState (a field added there is compared here too); pods first, the most often changed.
_KINDS = tuple(
    sorted((f.name for f in fields(ClusterState) if f.name != "generation"), key=lambda name: name != "pods")
)


def _metadata(obj: Obj) -> dict[str, Any]:
    return {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _VOLATILE_METADATA}


def meaning(kind: str, obj: Obj) -> dict[str, Any]:
    """What the scheduler reads of ``obj`` (one of ClusterState's kinds): two versions with the same
    meaning schedule alike when nothing waits."""
    out = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
    out["metadata"] = _metadata(obj)
    status = obj.get("status")
    if kind == "pods":
        status = {k: status[k] for k in _POD_STATUS_READ if k in status} if status else {}
    elif kind == "nodes" and status and status.get("conditions"):
        status = {
            **status,
            "conditions": [
                {k: v for k, v in cond.items() if k not in _NODE_CONDITION_STAMPS}
                for cond in status["conditions"]
            ],
        }
    out["status"] = status
    return out


class _Seen:
    """One kind's objects as the memo last accepted them: by dict identity, and by uid for a new version."""

    __slots__ = ("by_id", "by_uid")

    def __init__(self, objs: Sequence[Obj]) -> None:
        # The dicts are kept alive here, so an id in ``by_id`` cannot be reused by another object.
        self.by_id: dict[int, Obj] = {id(o): o for o in objs}
        self.by_uid: dict[str, Obj] = {object_identity(o): o for o in objs}

    def same(self, kind: str, objs: Sequence[Obj]) -> bool:
        """True when ``objs`` are the accepted ones, some as new versions with the same meaning (those
        are accepted from now on)."""
        if len(objs) != len(self.by_id):
            return False
        by_id = self.by_id
        renewed: list[tuple[Obj, Obj]] = []
        for obj in objs:
            if by_id.get(id(obj)) is obj:
                continue
            old = self.by_uid.get(object_identity(obj))
            if old is None or meaning(kind, old) != meaning(kind, obj):
                return False
            renewed.append((old, obj))
        # Same count, each one matched to a distinct old one (uids are unique in a store): none went away.
        for old, new in renewed:
            del by_id[id(old)]
            by_id[id(new)] = new
            self.by_uid[object_identity(new)] = new
        return True


def nothing_waits(snapshot: Snapshot, result: SessionResult) -> bool:
    """No task or PodGroup of ours waits, and the session neither decided nor wrote anything."""
    if result.binds or result.evictions or result.pipelined or result.podgroup_updates or result.explanations:
        return False
    if snapshot.orphans:
        return False
    return all(
        not job.pending_tasks and job.phase is not PodGroupPhase.PENDING for job in snapshot.jobs.values()
    )


@dataclass(frozen=True, slots=True)
class _Entry:
    conf: object
    result: SessionResult
    seen: dict[str, _Seen]


class QuietMemo:
    """The last quiet outcome and what it was computed from (the runtime's core keeps one)."""

    __slots__ = ("_entry",)

    def __init__(self) -> None:
        self._entry: _Entry | None = None

    def recall(self, state: ClusterState, conf: object) -> SessionResult | None:
        """The remembered result if ``state`` means what it meant then, under the same conf; else None."""
        entry = self._entry
        if entry is None or entry.conf is not conf:
            return None
        for kind in _KINDS:
            if not entry.seen[kind].same(kind, getattr(state, kind)):
                return None
        # No time was spent in actions or plugins: the latency metrics see nothing from this cycle.
        return SessionResult(queue_updates=entry.result.queue_updates)

    def remember(self, state: ClusterState, conf: object, snapshot: Snapshot, result: SessionResult) -> None:
        """Keep ``result`` if nothing waited in ``snapshot``; forget the last one otherwise."""
        if not nothing_waits(snapshot, result):
            self._entry = None
            return
        seen = {kind: _Seen(getattr(state, kind)) for kind in _KINDS}
        self._entry = _Entry(conf, result, seen)

    def forget(self) -> None:
        self._entry = None
