"""Where Volcano's allocate tries a job (or one of its sub-groups) in the HyperNode tree, as pure functions.

The candidates are grouped by tier, lowest first ("gradients"): the job is tried in every HyperNode of a
tier before any of the next. A job already running stays under the highest allowed HyperNode above its
pods, without a resource pre-filter; a new one is tried only where its ``minResources`` fit what is idle
(or idle once releasing pods are gone). A sub-group is tried only inside the HyperNode its job is tried in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..solver.hypernode_tree import ROOT, HyperNodeTree


def inside(tree: HyperNodeTree, hypernode: str, outer: str) -> bool:
    """Whether ``hypernode`` lies within ``outer`` (the virtual root holds everything)."""
    if outer == ROOT:
        return True
    return hypernode != ROOT and tree.nodes(hypernode) <= tree.nodes(outer)


def search_root(tree: HyperNodeTree, running: Sequence[str], highest: int) -> str | None:
    """For pods running on nodes ``running``: the highest HyperNode of tier <= ``highest`` above the lowest
    one holding them all; None when even that one is above the tier."""
    root: str | None = None
    cursor: str | None = tree.enclosing(running)
    while cursor is not None and tree.tier(cursor) <= highest:
        root = cursor
        cursor = None if cursor == ROOT else tree.parent.get(cursor, ROOT)
    return root


def gradients(
    tree: HyperNodeTree,
    highest: int,
    *,
    running: Sequence[str],
    fits: Callable[[str], bool],
    under: str | None = None,
) -> list[list[str]]:
    """The HyperNodes to try (the virtual root included), by tier up to ``highest``, lowest tier first, by
    name within a tier. ``running``: nodes of the pods already running; ``fits``: the resource pre-filter
    for a job not running yet; ``under``: only HyperNodes within that one."""
    candidates = [*sorted(tree.tiers), ROOT]
    if under is not None:
        candidates = [h for h in candidates if inside(tree, h, under)]
    if running:
        root = search_root(tree, running, highest)
        if root is None:
            return []
        candidates = [h for h in candidates if inside(tree, h, root)]
    else:
        candidates = [h for h in candidates if fits(h)]
    by_tier: dict[int, list[str]] = {}
    for h in candidates:
        if tree.tier(h) <= highest:
            by_tier.setdefault(tree.tier(h), []).append(h)
    return [by_tier[tier] for tier in sorted(by_tier)]
