"""What HTTP scheduler extenders answered before a session, as the session's input.

The session does no I/O, so the runtime asks the conf's extender its questions (predicate per pending task
and node, prioritize per pending task, jobEnqueueable per Pending job, queueOverused per queue) before the
session opens, and hands the answers in on the
``Snapshot`` (``Snapshot.extender``; a conf names a plugin once, so there is at most one extender). The
``extender`` plugin reads them as its predicate and node order. A reader that asks no extender (``vcctl job
why``, the simulator) leaves them out, and the plugin then abstains.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class CallFailed:
    """A call that brought no usable answer. ``answered``: the extender itself answered with an error (its
    ``errorMessage``), which ``extender.ignorable`` does not excuse; otherwise the call failed on the way
    (refused connection, timeout, an HTTP status other than 200, a body that is not the verb's JSON)."""

    message: str
    answered: bool = False


@dataclass(frozen=True, slots=True)
class Refusal:
    """A predicate answer that refuses the node: the extender's message and its status code."""

    message: str
    code: int


@dataclass(frozen=True, slots=True)
class ExtenderAnswers:
    """One extender's answers for one session.

    ``opened``: how the ``onSessionOpen`` call went (None: answered, or no such verb). ``asked``: the uids of
    the tasks the extender was asked about. ``fits``: per task, the nodes its predicate did not pass (a
    node not listed passed); ``scores``: per task, its prioritize answer (node name -> score) or the failure;
    ``enqueueable``: per Pending job, its jobEnqueueable vote (> 0 permit, 0 abstain, < 0 reject);
    ``overused``: per queue, its queueOverused answer.
    """

    opened: CallFailed | None = None
    asked: frozenset[str] = frozenset()
    fits: Mapping[str, Mapping[str, Refusal | CallFailed]] = field(default_factory=dict)
    scores: Mapping[str, Mapping[str, float] | CallFailed] = field(default_factory=dict)
    enqueueable: Mapping[str, int | CallFailed] = field(default_factory=dict)
    overused: Mapping[str, bool | CallFailed] = field(default_factory=dict)
