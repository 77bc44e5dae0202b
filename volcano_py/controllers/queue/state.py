"""Queue states Open / Closing / Closed, as Volcano's queue controller moves them.

A closed queue admits no new PodGroups; closing waits until the PodGroups already in the queue are gone.
Closing a parent closes its children (marked ``closed-by-parent``) and reopening it reopens exactly those.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from volcano_py.api import constants as c
from volcano_py.api.bodies.queue import queue_name, queue_parent, written_state
from volcano_py.api.bus import Action
from volcano_py.api.objects import annotation_of
from volcano_py.api.scheduling import PodGroupPhase, QueueState

CLOSED_BY_PARENT_KEY = "volcano.sh/closed-by-parent"


class QueueActionError(ValueError):
    """An action the queue cannot take as asked; the message says what to do first."""


def _state(raw: str | None) -> QueueState:
    if not raw:
        return QueueState.OPEN
    try:
        return QueueState(raw)
    except ValueError:
        return QueueState.UNKNOWN


def _closing_or_closed(podgroups: int) -> QueueState:
    return QueueState.CLOSING if podgroups else QueueState.CLOSED


def next_state(current: str | None, action: Action, podgroups: int) -> QueueState:
    """The state after ``action`` (Open/Close/SyncQueue) with ``podgroups`` PodGroups still in the queue."""
    state = _state(current)
    if action is Action.OPEN_QUEUE:
        return QueueState.OPEN
    if action is Action.CLOSE_QUEUE:
        if state is QueueState.CLOSED:
            return QueueState.CLOSED
        return _closing_or_closed(podgroups)
    if state is QueueState.CLOSING:
        return _closing_or_closed(podgroups)
    return state


@dataclass(frozen=True, slots=True)
class QueueView:
    name: str
    parent: str
    state: QueueState
    closed_by_parent: bool


def read_queue(body: Mapping[str, object]) -> QueueView:
    return QueueView(
        queue_name(body),
        queue_parent(body),
        _state(written_state(body)),
        annotation_of(body, CLOSED_BY_PARENT_KEY) == "true",
    )


def check_action(queue: QueueView, action: Action, queues: Mapping[str, QueueView]) -> None:
    if action is Action.CLOSE_QUEUE and queue.name == c.ROOT_QUEUE:
        raise QueueActionError("the root queue cannot be closed; close its children instead")
    if action is Action.OPEN_QUEUE and queue.parent:
        parent = queues.get(queue.parent)
        if parent is not None and parent.state in (QueueState.CLOSING, QueueState.CLOSED):
            raise QueueActionError(
                f"cannot open queue {queue.name!r}: its parent {parent.name!r} is {parent.state}; "
                "open the parent first"
            )


def hierarchy_actions(queues: Iterable[QueueView]) -> list[tuple[str, Action, bool]]:
    """(queue, action, closed_by_parent mark) for children whose parent's state they must follow."""
    by_name = {q.name: q for q in queues}
    out: list[tuple[str, Action, bool]] = []
    for queue in by_name.values():
        parent = by_name.get(queue.parent)
        if parent is None:
            continue
        parent_closed = parent.state in (QueueState.CLOSING, QueueState.CLOSED)
        child_closed = queue.state in (QueueState.CLOSING, QueueState.CLOSED)
        if parent_closed and not child_closed:
            out.append((queue.name, Action.CLOSE_QUEUE, True))
        elif parent.state is QueueState.OPEN and child_closed and queue.closed_by_parent:
            out.append((queue.name, Action.OPEN_QUEUE, False))
    return sorted(out)


PODGROUP_PHASE_FIELDS: dict[str, str] = {
    PodGroupPhase.PENDING: "pending",
    PodGroupPhase.RUNNING: "running",
    PodGroupPhase.INQUEUE: "inqueue",
    PodGroupPhase.UNKNOWN: "unknown",
    PodGroupPhase.COMPLETED: "completed",
}


def podgroup_counts(phases: Iterable[str]) -> dict[str, int]:
    """Queue status counters: PodGroups of the queue per phase (an unset phase counts as Pending)."""
    counts = dict.fromkeys(PODGROUP_PHASE_FIELDS.values(), 0)
    for phase in phases:
        field = PODGROUP_PHASE_FIELDS.get(phase or PodGroupPhase.PENDING)
        if field:
            counts[field] += 1
    return counts
