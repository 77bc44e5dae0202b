"""Sentences for a gang that stays pending: which constraint stopped it and by how much."""

from __future__ import annotations

from volcano_py.resources import GPU, PODS, format_quantity
from volcano_py.scheduler.solver.hypernode_tree import ROOT
from volcano_py.scheduler.solver.problem import Gang


def describe_tasks(gang: Gang) -> str:
    parts = []
    for task in gang.tasks:
        request = ", ".join(
            f"{name} {format_quantity(name, value)}"
            for name, value in sorted(task.request.items())
            if name != PODS  # every pod takes one; saying so is noise
        )
        parts.append(f"{task.name} x{task.count} ({request})")
    return "; ".join(parts)


def gpus_needed(gang: Gang) -> int:
    """Milli-GPUs the smallest acceptable gang needs: every minTaskMember, then the cheapest extra pods."""
    base = sum(t.min_member * t.request.amount(GPU) for t in gang.tasks)
    extra = gang.min_available - sum(t.min_member for t in gang.tasks)
    if extra > 0:
        cheapest = sorted(
            amount for t in gang.tasks for amount in [t.request.amount(GPU)] * (t.count - t.min_member)
        )
        base += sum(cheapest[:extra])
    return base


def _gpus(milli: int) -> str:
    return format_quantity(GPU, milli)


def capacity_reason(
    gang: Gang, *, scope_tier: int | None, best_domain: str | None, best_fit: int, best_gpus: int
) -> str:
    """No candidate domain has room for minAvailable pods; name the closest one."""
    need = gang.min_available
    need_gpus = gpus_needed(gang)
    where = "" if best_domain in (None, ROOT) else f"{best_domain}, "
    if scope_tier is None:
        head = f"the cluster has room for {best_fit} of the {need} pods minAvailable requires"
    else:
        head = (
            f"no HyperNode of tier <= {scope_tier} has room for {need} pods (minAvailable); "
            f"the best, {where}has room for {best_fit}"
        )
    if need_gpus:
        head += (
            f"; the gang needs {_gpus(need_gpus)} GPUs on one such domain and it has {_gpus(best_gpus)} free"
        )
        head += " on nodes that pass the predicates"
    return f"{head} [{describe_tasks(gang)}]"


def per_node_reason(gang: Gang, scope_tier: int | None, domains: int) -> str:
    scope = "the cluster" if scope_tier is None else f"{domains} HyperNode(s) of tier <= {scope_tier}"
    return (
        f"{scope} hold enough free resources in total but no per-node split fits every task at once; "
        f"free whole nodes or lower minAvailable [{describe_tasks(gang)}]"
    )
