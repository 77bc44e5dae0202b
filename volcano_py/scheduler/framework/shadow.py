"""A blocked FIFO head's shadow: when it is estimated to start, and what it leaves free then.

EASY backfill's two facts about the head of a ``spec.dequeueStrategy: fifo`` queue that cannot be placed now:
its estimated start (the *shadow time*) and, per node, what is still idle at that moment once it has started
(the *spare*). A later job may pass the head only if it ends by the shadow time or fits in the spare
(``actions/fifo.py``). Both come from the position-and-ETA forecast's simulation, which lives above the
scheduler: the runtime hands each session a ``ShadowSource`` bound to the cycle's cluster, and a session
without one (the forecast's own sessions, the simulator, what-ifs) holds the queue strictly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from volcano_py.resources import Resource


@dataclass(frozen=True, slots=True)
class Shadow:
    """``start``: the head's estimated start in seconds since the epoch (None: not found within the
    forecast's bounds, said in ``why_unknown``); ``spare``: node name -> what is idle there once the head has
    started (``pods`` counted, as in a node's idle)."""

    head: str
    start: float | None
    spare: Mapping[str, Resource] = field(default_factory=dict)
    why_unknown: str = ""


# The head's PodGroup key (``namespace/name``) -> its shadow, over the cluster of the session asking.
ShadowSource = Callable[[str], Shadow]
