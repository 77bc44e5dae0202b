"""What a session decides, as frozen values: the runtime's binder and the simulator act on these.

Nothing here refers back to the session, so results can be handed to another thread or serialised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import Resource


@dataclass(frozen=True, slots=True)
class ClaimWrite:
    """A ResourceClaim to reserve for a pod before its bind (``status.reservedFor``), and to allocate first
    when ``allocation`` is given (``status.allocation``, unless the claim already holds that allocation).
    ``allocation`` None: the claim was allocated before this session; it is only reserved."""

    namespace: str
    name: str
    uid: str
    allocation: Mapping[str, Any] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Bind:
    """Bind pod ``namespace/name`` to ``node``. ``job`` is the PodGroup key ``namespace/name``.
    ``annotations`` go on the pod with the bind (the GPU cards chosen for it, for the device plugin);
    ``claims`` are written before it (Dynamic Resource Allocation)."""

    namespace: str
    name: str
    uid: str
    node: str
    job: str
    annotations: Mapping[str, str] = field(default_factory=dict)
    claims: tuple[ClaimWrite, ...] = ()


# The actions that evict; each names itself as its evictions' ``reason`` (the ``pod_evictions`` label).
EVICTING_ACTIONS = ("preempt", "reclaim", "shuffle", "consolidate")


@dataclass(frozen=True, slots=True)
class Evict:
    """Evict a pod; ``preemptor`` is the pod key (``namespace/name``) that needs the room, if any;
    ``detail`` says why this pod when no preemptor does (shuffle's victims: the plugin's reason)."""

    namespace: str
    name: str
    uid: str
    reason: str
    preemptor: str | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A pod nominated to ``node``: it fits there once releasing pods are gone, or it holds room there for
    a gang that waits on releasing pods elsewhere. Not bound this cycle."""

    namespace: str
    name: str
    uid: str
    node: str
    job: str


@dataclass(frozen=True, slots=True)
class PodGroupEvent:
    """A Normal Event to record on PodGroup ``namespace/name`` (``Consolidated``: its pods were moved)."""

    namespace: str
    name: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Ungate:
    """Remove Volcano's queue-allocation scheduling gate from a pod: its queue has room for it now
    (``SchedulingGatesQueueAdmission``). It is placed like any other pod once the gate is gone."""

    namespace: str
    name: str
    uid: str
    job: str


@dataclass(frozen=True, slots=True)
class Condition:
    """A PodGroup condition (Volcano's ``PodGroupCondition``); ``type`` is Unschedulable or Scheduled."""

    type: str
    status: str
    reason: str
    message: str
    last_transition_time: str = ""


@dataclass(frozen=True, slots=True)
class PodGroupUpdate:
    """New PodGroup status, emitted only for PodGroups whose status differs from the snapshot's."""

    namespace: str
    name: str
    phase: PodGroupPhase
    conditions: tuple[Condition, ...]
    running: int
    succeeded: int
    failed: int


@dataclass(frozen=True, slots=True)
class QueueUpdate:
    """A queue's accounting after the session: ``allocated`` is what its tasks hold now."""

    name: str
    allocated: Resource
    deserved: Resource | None = None
    capability: Resource | None = None
    pending_pods: int = 0
    # What its jobs ask for in all (allocated + pending tasks) and its weight: Volcano's queue metrics.
    request: Resource | None = None
    weight: int = 1


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a job was left (partly) unscheduled, in words a person can act on.

    ``reason`` is the PodGroup condition reason (``NotEnoughResources``, ``NotInqueueable``,
    ``NotEnoughTasks``, ...); ``message`` is the aggregated text.
    """

    job: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class SessionResult:
    """Everything one session decided. ``binds`` keep each gang's binds together, in commit order."""

    binds: tuple[Bind, ...] = ()
    evictions: tuple[Evict, ...] = ()
    pipelined: tuple[Pipeline, ...] = ()
    ungates: tuple[Ungate, ...] = ()
    podgroup_events: tuple[PodGroupEvent, ...] = ()
    podgroup_updates: tuple[PodGroupUpdate, ...] = ()
    queue_updates: tuple[QueueUpdate, ...] = ()
    explanations: Mapping[str, Explanation] = field(default_factory=dict)
    # Seconds spent per action and in plugin open/close, for the runtime's latency metrics.
    timings: Mapping[str, float] = field(default_factory=dict)
    # When periodic plugins last acted (``Session.timers``), for the runtime to hand to the next session.
    timers: Mapping[str, float] = field(default_factory=dict)
    # How many of ``binds`` (the first ones) the session already gave its ``HandOver`` while it ran.
    handed_over: int = 0

    def binds_by_job(self) -> dict[str, list[Bind]]:
        """Binds grouped per PodGroup, so a gang is sent to the API together."""
        return binds_by_job(self.binds)

    def binds_left(self) -> tuple[Bind, ...]:
        """The binds not handed over while the session ran: the ones still to send."""
        return self.binds[self.handed_over :]


# Takes binds a session committed while it still runs (a gang's binds together, in commit order). Called on
# the session's own thread; whoever passes one in must make it safe to call from there.
HandOver: TypeAlias = Callable[[Sequence[Bind]], None]


def binds_by_job(binds: Iterable[Bind]) -> dict[str, list[Bind]]:
    """Binds grouped per PodGroup, so a gang is sent to the API together."""
    out: dict[str, list[Bind]] = {}
    for bind in binds:
        out.setdefault(bind.job, []).append(bind)
    return out
