"""How the implementations of one extension point, tier by tier, combine into the session's answer: each rule
written once (Volcano's tiers: a plugin in an earlier tier speaks first)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

from .extension import Victim, Victims, Vote
from .task import TaskInfo

P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R")


def first_nonzero(tiers: Sequence[Sequence[Callable[[T, T], int]]], left: T, right: T) -> int:
    """Order: the first plugin (tier by tier) that tells the two apart decides."""
    for tier in tiers:
        for fn in tier:
            result: int = fn(left, right)
            if result:
                return result
    return 0


def all_pass(tiers: Sequence[Sequence[Callable[P, bool]]], *args: P.args, **kwargs: P.kwargs) -> bool:
    """Every plugin must agree (predicates, job ready, allocatable)."""
    for tier in tiers:  # loops, not all(genexpr): asked several times for every pod placed
        for fn in tier:
            if not fn(*args, **kwargs):
                return False
    return True


def any_true(tiers: Sequence[Sequence[Callable[P, bool]]], *args: P.args, **kwargs: P.kwargs) -> bool:
    """One plugin saying yes is enough (overused)."""
    return any(fn(*args, **kwargs) for tier in tiers for fn in tier)


def first_failure(
    tiers: Sequence[Sequence[Callable[P, R | None]]], *args: P.args, **kwargs: P.kwargs
) -> R | None:
    """The first non-None answer, or None (job valid)."""
    for tier in tiers:
        for fn in tier:
            result = fn(*args, **kwargs)
            if result is not None:
                return result
    return None


def vote_by_tier(tiers: Sequence[Sequence[Callable[P, Vote]]], *args: P.args, **kwargs: P.kwargs) -> bool:
    """Any REJECT refuses; otherwise the first tier with a PERMIT allows; all abstaining allows."""
    for tier in tiers:
        permitted = False
        for fn in tier:
            vote = fn(*args, **kwargs)
            if vote is Vote.REJECT:
                return False
            permitted = permitted or vote is Vote.PERMIT
        if permitted:
            return True
    return True


def first_tier_all(tiers: Sequence[Sequence[Callable[P, bool]]], *args: P.args, **kwargs: P.kwargs) -> bool:
    """The first tier with any implementer decides, all of its plugins agreeing; no implementer: False."""
    for tier in tiers:
        if tier:
            return all(fn(*args, **kwargs) for fn in tier)
    return False


def first_deciding_tier(
    tiers: Sequence[Sequence[Victims]], actor: TaskInfo, candidates: Sequence[TaskInfo]
) -> list[TaskInfo]:
    """The victim rule (preemptable, reclaimable), Volcano's: tier by tier, each implementing plugin judges
    every candidate and the tier's victims are what all of them let go; the first tier with victims decides,
    and later tiers are not asked. A plugin that lets none go leaves its tier undecided; one that answers
    None abstains; no victims from any tier means none.

    So in Volcano's confs, where priority, gang and conformance sit in the first tier, a job's own share
    (proportion, capacity, in the second) does not protect its pods from reclaim once the first tier agrees.
    """
    for tier in tiers:
        victims: list[TaskInfo] | None = None
        for fn in tier:
            chosen = fn(actor, candidates)
            if chosen is None:
                continue
            if not chosen:
                victims = None
                break
            if victims is None:
                victims = list(chosen)
            else:
                keep = {t.uid for t in chosen}
                # As Volcano's: an empty intersection is no decision, and the next plugin starts afresh.
                victims = [t for t in victims if t.uid in keep] or None
        if victims is not None:
            return victims
    return []


def union_first_tier(
    tiers: Sequence[Sequence[Callable[P, list[Victim]]]], *args: P.args, **kwargs: P.kwargs
) -> list[Victim]:
    """Volcano's VictimTasks rule: tier by tier, the union of what every plugin of the tier names (a pod
    named twice keeps its first reason); the first tier naming any decides."""
    for tier in tiers:
        chosen: dict[str, Victim] = {}
        for fn in tier:
            for victim in fn(*args, **kwargs):
                chosen.setdefault(victim.task.uid, victim)
        if chosen:
            return list(chosen.values())
    return []


def narrowed(tiers: Sequence[Sequence[Callable[[Sequence[T]], list[T]]]], candidates: Sequence[T]) -> list[T]:
    """Every plugin's filter applied in turn, each to what the previous ones kept (eviction guards)."""
    kept = list(candidates)
    for tier in tiers:
        for fn in tier:
            if not kept:
                return kept
            kept = fn(kept)
    return kept


def reasons(tiers: Sequence[Sequence[Callable[P, str | None]]], *args: P.args, **kwargs: P.kwargs) -> str:
    """Every explaining plugin's words, joined by '; ' (explain_*)."""
    return "; ".join(r for tier in tiers for fn in tier if (r := fn(*args, **kwargs)))


def broadcast(tiers: Sequence[Sequence[Callable[P, None]]], *args: P.args, **kwargs: P.kwargs) -> None:
    """Tell every plugin (job enqueued, events)."""
    for tier in tiers:
        for fn in tier:
            fn(*args, **kwargs)
