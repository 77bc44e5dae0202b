"""Volcano's ``gangpreempt`` and ``gangreclaim`` actions: this scheduler's preempt and reclaim, planned with
Volcano's gang-aware victim rule.

Both plan as preempt and reclaim do here: a starving gang evicts victims only as part of one plan that makes
the whole gang placeable (committed, or discarded with nothing evicted), within its queue for gangpreempt
and across queues for gangreclaim. Victims come in Volcano's bundles: single pods a victim gang can lose and
stay ready (its surplus above ``minAvailable``, each role's ``minTaskMember`` and each sub-group policy's
``minSubGroups``), tried first, then whole gangs, the fewest broken. Which pods may go at all is asked of
the plugins' ``gang_evictable`` (Volcano's UnifiedEvictable), not of ``preemptable``/``reclaimable``: there
the gang plugin lets every pod go, since the bundles keep gangs whole, where legacy reclaim's gang rule
offers only surplus pods and so can never take a tight gang whole.

Volcano's versions search at most ``maxDomains`` HyperNode domains; the plan here weighs every node, a
superset, so ``maxDomains`` is accepted and validated. ``allowWholeBundle: false`` (never take a victim job
whole) is refused: whole gangs are always among the units a plan may take here, and that cannot be switched
off. One difference: gangpreempt here also lets a pending pod replace a lower-priority pod of its own job,
as preempt does, which Volcano's gangpreempt does not.
"""

from __future__ import annotations

from ..framework.arguments import Arguments, ConfError
from ..framework.extension import EvictionKind
from ..framework.session import Session
from .preempt import Preempt, check_victim_action_arguments, refuse_topology_aware
from .reclaim import Reclaim
from .victims import Permits

_GANG_ARGUMENTS = ("maxDomains", "allowWholeBundle")


def _check(arguments: Arguments) -> None:
    check_victim_action_arguments(arguments, _GANG_ARGUMENTS)
    refuse_topology_aware(arguments)
    arguments.get_int("maxDomains", 8, minimum=1)
    if not arguments.get_bool("allowWholeBundle", True):
        raise ConfError(
            f"{arguments.owner}: allowWholeBundle: false is not supported: a victim job may always be taken "
            "whole here (whole gangs are among the units every eviction plan may take); remove it"
        )


def _gang_rule(ssn: Session, kind: EvictionKind) -> Permits:
    return lambda actor, candidates: ssn.gang_evictable(kind, actor, candidates)


class GangPreempt(Preempt):
    name = "gangpreempt"

    def __init__(self, arguments: Arguments) -> None:
        _check(arguments)
        super().__init__(Arguments(arguments.owner, {}))

    def permits(self, ssn: Session) -> Permits:
        return _gang_rule(ssn, EvictionKind.GANG_PREEMPT)


class GangReclaim(Reclaim):
    name = "gangreclaim"

    def __init__(self, arguments: Arguments) -> None:
        _check(arguments)
        super().__init__(Arguments(arguments.owner, {}))

    def permits(self, ssn: Session) -> Permits:
        return _gang_rule(ssn, EvictionKind.GANG_RECLAIM)
