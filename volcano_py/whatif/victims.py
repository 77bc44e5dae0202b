"""Which jobs a what-if proposes to end for a pending job, and how many: arithmetic that orders the trials
(each is then proved by a real session)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass

from volcano_py.resources import Resource, total
from volcano_py.scheduler.core import ALLOCATED_STATUSES, HyperNodeTree, NodeInfo, Snapshot


def holdings_of(view: Snapshot, target: str) -> dict[str, dict[str, Resource]]:
    """Job uid -> node -> what its tasks hold there; only jobs a person could end for the target."""
    out: dict[str, dict[str, Resource]] = {}
    for uid, job in view.jobs.items():
        if uid == target:
            continue
        for task in job.tasks.values():
            if task.status not in ALLOCATED_STATUSES or not task.node_name or task.system_critical:
                continue
            per_node = out.setdefault(uid, {})
            per_node[task.node_name] = per_node.get(task.node_name, Resource()) + task.resreq
    return out


@dataclass(frozen=True, slots=True)
class Domain:
    name: str  # as shown: "node n1", "HyperNode rack-a", "the cluster"
    nodes: frozenset[str]


def domains(view: Snapshot, tree: HyperNodeTree | None, need: Resource) -> list[Domain]:
    domains = [Domain("the cluster", frozenset(n.name for n in view.nodes))]
    if tree is not None:
        domains += [
            Domain(f"HyperNode {name}", tree.nodes(name)) for name in sorted(tree.tiers) if tree.nodes(name)
        ]
    domains += [Domain(f"node {n.name}", frozenset({n.name})) for n in view.nodes if need <= n.allocatable]
    return domains


def by_node(holdings: Mapping[str, Mapping[str, Resource]], main: str) -> dict[str, dict[str, int]]:
    """Node -> job uid -> how much of ``main`` the job holds there: a domain's holders are then read from its
    own nodes, not found among every job of the cluster once per domain (a node is a domain)."""
    out: dict[str, dict[str, int]] = {}
    for uid, per_node in holdings.items():
        for node, held in per_node.items():
            amount = held.amount(main)
            if amount > 0:
                out.setdefault(node, {})[uid] = amount
    return out


def pick_victims(
    domain: Domain,
    nodes: dict[str, NodeInfo],
    holders: Mapping[str, Mapping[str, int]],
    view: Snapshot,
    need: Resource,
    main: str,
    priority: int,
    queue: str,
) -> list[str]:
    """Victims for ``domain`` in the order to try: lower priority first; the smallest job that covers the
    remaining shortfall of ``main``, else the largest. ``holders`` is :func:`by_node`'s."""
    free = total(nodes[n].idle for n in domain.nodes if n in nodes)
    deficit = max(0, need.amount(main) - free.amount(main))
    pool: dict[str, int] = {}
    for node in domain.nodes:
        for uid, amount in holders.get(node, {}).items():
            pool[uid] = pool.get(uid, 0) + amount
    order: list[str] = []
    # Lower-priority jobs first; within those, jobs of the target's own queue (ending them also frees the
    # queue's share and capability).
    for lower, same in ((True, True), (True, False), (False, True), (False, False)):
        # Ascending by (amount, uid): the smallest cover is the first at or above the shortfall, the largest
        # is the last; a sort and a search per pick, where a scan per pick was quadratic in the jobs.
        tier = sorted(
            (a, uid)
            for uid, a in pool.items()
            if (view.jobs[uid].priority < priority) == lower and (view.jobs[uid].queue == queue) == same
        )
        while tier:
            if deficit == 0:
                order += [uid for _, uid in tier]  # every one covers: smallest first
                break
            at = bisect_left(tier, (deficit, ""))
            amount, uid = tier.pop(at if at < len(tier) else -1)
            order.append(uid)
            deficit = max(0, deficit - amount)
    return order


def covering_prefix(
    order: list[str],
    domain: Domain,
    holdings: dict[str, dict[str, Resource]],
    nodes: dict[str, NodeInfo],
    need: Resource,
    main: str,
    share: tuple[set[str], int],
) -> int:
    """How many of ``order`` to end so the domain has room for the job and, when its queue is over its
    deserved share by ``share[1]``, the queue's own jobs among them (``share[0]``) give back that much."""
    free = total(nodes[n].idle for n in domain.nodes if n in nodes).amount(main)
    same, over = share
    count = 0
    for uid in order:
        if free >= need.amount(main) and over <= 0:
            break
        free += sum(r.amount(main) for node, r in holdings[uid].items() if node in domain.nodes)
        if uid in same:
            over -= sum(r.amount(main) for r in holdings[uid].values())
        count += 1
    return max(count, 1)
