"""How the implementations of one extension point, tier by tier, combine into the session's answer: each rule
written once (Volcano's tiers: a plugin in an earlier tier speaks first)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

from .extension import Victims, Vote
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


def all_consent(
    tiers: Sequence[Sequence[Victims]], actor: TaskInfo, candidates: Sequence[TaskInfo]
) -> list[TaskInfo]:
    """The victim rule (preemptable, reclaimable): the candidates every implementing plugin lets go, each
    plugin judging what the ones before it let through; no implementer at all means no victims.

    Volcano lets the first tier that names any victim decide, so a quota plugin in a lower tier can be
    bypassed; here a victim needs every plugin's consent.
    """
    remaining = list(candidates)
    judged = False
    for tier in tiers:
        for fn in tier:
            chosen = fn(actor, remaining)
            if chosen is None:
                continue
            judged = True
            keep = {t.uid for t in chosen}
            remaining = [t for t in remaining if t.uid in keep]
            if not remaining:
                return []
    return remaining if judged else []


def reasons(tiers: Sequence[Sequence[Callable[P, str | None]]], *args: P.args, **kwargs: P.kwargs) -> str:
    """Every explaining plugin's words, joined by '; ' (explain_*)."""
    return "; ".join(r for tier in tiers for fn in tier if (r := fn(*args, **kwargs)))


def broadcast(tiers: Sequence[Sequence[Callable[P, None]]], *args: P.args, **kwargs: P.kwargs) -> None:
    """Tell every plugin (job enqueued, events)."""
    for tier in tiers:
        for fn in tier:
            fn(*args, **kwargs)
