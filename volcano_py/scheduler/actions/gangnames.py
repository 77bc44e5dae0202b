"""Volcano's ``gangpreempt`` and ``gangreclaim`` actions, answered by this scheduler's preempt and reclaim.

Their semantics are what preempt and reclaim here already do: a starving gang evicts victims only as part
of one plan that makes the whole gang placeable (committed, or discarded with nothing evicted), within its
queue for preempt and across queues for reclaim, and a victim job may go whole. Volcano's versions search
at most ``maxDomains`` HyperNode domains; the plan here weighs every node, a superset, so ``maxDomains`` is
accepted and validated. ``allowWholeBundle: false`` (never take a victim job whole) is refused: the gang
plugin here lets a whole gang go as one victim, and that cannot be switched off. One difference: preempt
here also lets a pending pod replace a lower-priority pod of its own job, which gangpreempt does not.
"""

from __future__ import annotations

from ..framework.arguments import Arguments, ConfError
from .preempt import Preempt, check_victim_action_arguments, refuse_topology_aware
from .reclaim import Reclaim

_GANG_ARGUMENTS = ("maxDomains", "allowWholeBundle")


def _check(arguments: Arguments) -> None:
    check_victim_action_arguments(arguments, _GANG_ARGUMENTS)
    refuse_topology_aware(arguments)
    arguments.get_int("maxDomains", 8, minimum=1)
    if not arguments.get_bool("allowWholeBundle", True):
        raise ConfError(
            f"{arguments.owner}: allowWholeBundle: false is not supported: a victim job may always be taken "
            "whole here (the gang plugin offers a whole gang as one victim); remove it"
        )


class GangPreempt(Preempt):
    name = "gangpreempt"

    def __init__(self, arguments: Arguments) -> None:
        _check(arguments)
        super().__init__(Arguments(arguments.owner, {}))


class GangReclaim(Reclaim):
    name = "gangreclaim"

    def __init__(self, arguments: Arguments) -> None:
        _check(arguments)
        super().__init__(Arguments(arguments.owner, {}))
