"""How many bound pods get a ``Scheduled`` Event of their own: a budget per second, and a summary beyond it.

Volcano and kube-scheduler write one ``Scheduled`` Event per bound pod. For the API server each is a write
about half as dear as creating the pod (1.1 ms of its CPU here, see docs/performance-log.md), and a 5,000-pod
gang binds in seconds. kube-scheduler's Events go through a client held to 50 requests per second (burst
100), and client-go's recorder drops what queues up behind that; Volcano's recorder writes one at a time and
drops beyond 1,000 queued. So a large gang's pods already go without their Event there, silently.

Here the budget is explicit: pods bound within it get their own Event; the pods of a gang bound beyond it are
told in one Event on their PodGroup when the gang's binds have answered, with how many pods went to how many
nodes. A summary of a single pod would cost what that pod's own Event costs, so it is written only if the
budget has room again by then; otherwise the pod goes without (counted in ``scheduled_events_skipped``): in a
backlog of 50,000 one-pod jobs a summary per job was an Event per pod beside each bind. A pod
without a PodGroup has no summary to join, so it always gets its own. ``qps`` 0 turns the budget off (an Event
for every pod, as Volcano writes).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Final

# kube-scheduler's client connection defaults, which its Events are held to.
SCHEDULED_EVENT_QPS: Final = 50.0
SCHEDULED_EVENT_BURST: Final = 100


@dataclass(slots=True)
class EventBudget:
    """A token bucket of ``qps`` per second holding at most ``burst``; ``qps`` 0 is no limit."""

    qps: float
    burst: int
    clock: Callable[[], float]
    _tokens: float = field(init=False)
    _at: float = field(init=False)

    def __post_init__(self) -> None:
        if self.qps < 0:
            raise ValueError(
                f"--scheduled-event-qps must be >= 0 (0 gives every bound pod its Event), got {self.qps}"
            )
        if self.burst < 1:
            raise ValueError(f"--scheduled-event-burst must be at least 1, got {self.burst}")
        self._tokens = float(self.burst)
        self._at = self.clock()

    def take(self) -> bool:
        """Whether one more pod gets its own Event now."""
        if self.qps == 0:
            return True
        now = self.clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.qps)
        self._at = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True


def summary(nodes: Collection[str], qps: float) -> str:
    """The message of a PodGroup's ``Scheduled`` Event for its pods bound beyond the budget (one per node)."""
    count, spread = len(nodes), len(set(nodes))
    pods = "1 pod" if count == 1 else f"{count} pods"
    on = "1 node" if spread == 1 else f"{spread} nodes"
    return (
        f"Successfully assigned {pods} to {on} without an Event each: per-pod Scheduled Events are held "
        f"to {qps:g} per second (--scheduled-event-qps)"
    )
