"""What plugins answer through the extension points, as typed values: votes, node verdicts, victims, walks.

Typed outcomes rather than Volcano's bare ints (1/0/-1): the Protocols in ``protocols`` return these, and
the combination rules in ``combine`` and the actions read them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from volcano_py.api.subgroups import SubGroupKey

from .task import TaskInfo

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class Vote(enum.Enum):
    """A plugin's say on a yes/no question decided tier by tier."""

    PERMIT = 1
    ABSTAIN = 0
    REJECT = -1


@dataclass(frozen=True, slots=True)
class Invalid:
    """Why a job cannot be scheduled at all this session (``JobValid``)."""

    reason: str
    message: str


@dataclass(slots=True)
class NodeVerdict:
    """Which nodes pass a predicate; for those that fail, why, as (reason text, failing-node mask) pairs."""

    ok: BoolArray
    failures: list[tuple[str, BoolArray]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Victim:
    """A running pod a plugin wants evicted by ``shuffle``, and why (told in the pod's Evict Event)."""

    task: TaskInfo
    why: str


@dataclass(frozen=True, slots=True)
class Placed:
    """What a job placer did for one job (its changes are on the statement)."""

    allocated: int
    pipelined: int


class EvictionKind(enum.Enum):
    """Which gang-aware action asks ``gang_evictable`` (Volcano's EvictionKind)."""

    GANG_PREEMPT = "gangpreempt"
    GANG_RECLAIM = "gangreclaim"


# HyperNodes (name, node mask) grouped by tier, lowest tier first.
Gradients = tuple[tuple[tuple[str, BoolArray], ...], ...]


@dataclass(frozen=True, slots=True)
class HyperNodeWalk:
    """Where to try a job with a network topology, as Volcano's allocate walks it: ``gradients`` are the
    HyperNodes (name, node mask) grouped by tier, lowest first; the job is tried inside each HyperNode of a
    tier and goes to the best by ``score`` of those where it fitted. ``unplaced``: the reason a job that
    fits nowhere waits with (None: it falls to the placement of jobs without topology)."""

    gradients: Gradients
    score: Callable[[Sequence[str]], Mapping[str, float]]
    unplaced: str | None = None
    # When set, the job is placed inside a HyperNode sub-group by sub-group (its partitions), and a
    # HyperNode's score is the sum of its sub-groups' scores.
    subjobs: tuple[SubJobWalk, ...] = ()


@dataclass(frozen=True, slots=True)
class SubJobWalk:
    """One sub-group of a job (a partition of ``subGroupSize`` pods) placed as one: ``gradients(h)`` are the
    HyperNodes under the job's HyperNode ``h`` to try it in, by tier, lowest first; ``score`` as the job's."""

    tasks: tuple[TaskInfo, ...]
    gradients: Callable[[str], Gradients]
    score: Callable[[Sequence[str]], Mapping[str, float]]
    # Which sub-group (None: the job's default one), for its size.
    key: SubGroupKey | None = None
