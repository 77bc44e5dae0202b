"""The cpsat plugin's placement of a job with ``spec.subGroupPolicy``: every sub-group one gang of the model.

Each sub-group not ready yet is a gang of the pods that make it ready (``subGroupSize``): CP-SAT places all
of them or none, and a hard ``networkTopology`` of its policy keeps them inside one HyperNode of an allowed
tier (soft: a preference). The job's default sub-group (pods of no policy) is one more gang of any size. The
gangs are solved together in Volcano's turn order (sub-groups the job needs for ``minSubGroups`` first), and
the plan is taken sub-group by sub-group until the job is ready, which also counts its ready sub-groups
against ``minSubGroups``. A job still not ready falls to the greedy sub-group placement (which may pipeline
onto releasing pods), unless a hard sub-group topology holds it: then it waits with the solver's reasons.
A hard ``networkTopology`` of the whole job keeps all its sub-groups inside one HyperNode: the gangs are
solved with only the nodes of one HyperNode at a time, tier by tier from the lowest up to the job's bound
(by name within a tier; a job with pods running stays in HyperNodes holding them), and the first HyperNode
where the job becomes ready takes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from volcano_py.api.meta import NetworkTopologyMode, NetworkTopologySpec
from volcano_py.log import get_logger

from ..framework.extension import Placed
from ..framework.job import JobInfo
from ..framework.status import ALLOCATED_STATUSES
from ..framework.subgroups import is_hard, placeable, turn_order
from ..framework.task import TaskInfo
from ..solver.hypernode_tree import HyperNodeTree, NetworkTopology, TopologyError, resolve_highest_tier

if TYPE_CHECKING:
    from ..framework.session import Session
    from ..framework.statement import Statement
    from ..solver.problem import PlacementPlan
    from .cpsat import CpsatPlugin, Part

log = get_logger(__name__)


def _topology(spec: NetworkTopologySpec) -> NetworkTopology:
    return NetworkTopology(
        mode=NetworkTopologyMode(spec.mode),
        highest_tier_allowed=spec.highest_tier_allowed,
        highest_tier_name=spec.highest_tier_name,
    )


def place_sub_groups(plugin: CpsatPlugin, ssn: Session, stmt: Statement, job: JobInfo) -> Placed | None:
    """Place ``job`` sub-group by sub-group (see the module docstring); None hands it to the greedy path."""
    from .cpsat import Part

    waiting = [t for t in job.pending_tasks if not t.best_effort]
    try:
        job_topology = NetworkTopology.parse(job.network_topology) if job.network_topology else None
    except TopologyError as err:
        ssn.fit_failures_of(job).add(len(waiting), [f"PodGroup spec.{err}"])
        return Placed(0, 0)
    job_hard = job_topology is not None and job_topology.mode is NetworkTopologyMode.HARD
    parts: list[Part] = []
    one_by_one: set[str] = set()  # parts whose pods are taken one at a time, until the job is ready
    hard = False
    for key, members in turn_order(job):
        need = job.sub_group_missing(key, members)
        tasks = ssn.sorted_tasks(placeable(job, members))
        name = f"{job.uid}/{key.label(job.sub_group_policies) if key is not None else 'default'}"
        if key is not None and need == 0:
            # Ready: it grows pod by pod, here only when the job's hard topology must hold those pods too
            # (a hard topology of its own cannot be kept for them: the greedy path says so).
            if job_hard and not is_hard(job, key):
                parts.append(Part(name, tasks, 1, None))
                one_by_one.add(name)
            continue
        if key is not None and len(tasks) < need:
            continue  # short of pods (not all created, or gated): it cannot be ready this session
        topology = None if job_hard else job_topology  # a hard one bounds the nodes offered instead
        if key is None:
            parts.append(Part(name, tasks, 1, topology))
            one_by_one.add(name)
            continue
        spec = job.sub_group_policies[key.policy].network_topology
        if spec is not None:
            try:
                topology = _topology(spec)
            except TopologyError as err:
                reason = f"PodGroup spec.subGroupPolicy[{key.policy}].{err}"
                ssn.fit_failures_of(job).add(len(waiting), [reason])
                return Placed(0, 0)
        hard = hard or is_hard(job, key)
        parts.append(Part(name, tasks[:need], need, topology))
    if not parts or (len(one_by_one) == len(parts) and not job_hard):
        return None  # nothing to place all at once and no HyperNode to keep: pods go one by one
    every = [t for part in parts for t in part.tasks]
    if any(t.host_ports or t.affinity.get("podAffinity") or t.affinity.get("podAntiAffinity") for t in every):
        return None  # their fit depends on their mates' placement: pod by pod (see CpsatPlugin.place_job)
    slots = plugin.device_slots(ssn, every)
    if slots is None:
        return None
    if (hard or job_hard) and plugin.tree_error:
        ssn.fit_failures_of(job).add(len(waiting), [f"HyperNodes are invalid: {plugin.tree_error}"])
        return Placed(0, 0)
    if job_topology is not None and job_hard:
        domains = _job_domains(plugin.tree, job_topology, job)
        if isinstance(domains, str):
            ssn.fit_failures_of(job).add(len(waiting), [domains])
            return Placed(0, 0)
        names = ssn.table.node_names
        for hypernode, nodes in domains:
            within = np.fromiter((n in nodes for n in names), dtype=np.bool_, count=len(names))
            if not within.any():
                continue
            plan, by_gang = plugin.solve_parts(ssn, job, parts, slots, within=within)
            placed = _take(ssn, job, parts, one_by_one, plan, by_gang)
            if placed is not None:
                log.debug("cpsat placed sub-groups", job=job.uid, hypernode=hypernode)
                return placed
        reason = (
            f"none of the {len(domains)} HyperNodes PodGroup spec.networkTopology (hard) allows holds the "
            "sub-groups the job needs"
        )
        ssn.fit_failures_of(job).add(len(waiting), [reason])
        return Placed(0, 0)
    plan, by_gang = plugin.solve_parts(ssn, job, parts, slots)
    placed = _take(ssn, job, parts, one_by_one, plan, by_gang)
    if placed is not None:
        return placed
    if not hard:
        return None
    reasons = [
        f"sub-group {part.name.rsplit('/', 1)[-1]}: {plan.unplaced[part.name].reason}"
        for part in parts
        if part.name in plan.unplaced
    ]
    ssn.fit_failures_of(job).add(len(waiting), reasons or ["the sub-groups placed do not make the job ready"])
    return Placed(0, 0)


def _job_domains(
    tree: HyperNodeTree | None, topology: NetworkTopology, job: JobInfo
) -> list[tuple[str, frozenset[str]]] | str:
    """The HyperNodes a job with a hard topology may use (name, its nodes), lowest tier first, by name
    within a tier; only those holding every node its pods already hold. A reason when there are none."""
    if tree is None or not tree.tiers:
        return (
            "PodGroup spec.networkTopology is hard but the cluster has no HyperNodes: create them or use soft"
        )
    bound = resolve_highest_tier(topology, tree)
    if bound is None:
        return f"PodGroup spec.networkTopology.highestTierName {topology.highest_tier_name!r} names no tier"
    running = {t.node_name for t in job.tasks_in(*ALLOCATED_STATUSES) if t.node_name}
    out: list[tuple[str, frozenset[str]]] = []
    for tier in [*tree.tier_levels(), tree.root_tier]:
        if tier > bound:
            break
        for name in tree.at_tier(tier):
            nodes = tree.nodes(name)
            if running <= nodes:
                out.append((name, nodes))
    return out or f"no HyperNode up to tier {bound} holds the nodes the job's pods run on"


def _take(
    ssn: Session,
    job: JobInfo,
    parts: list[Part],
    one_by_one: set[str],
    plan: PlacementPlan,
    by_gang: dict[str, dict[str, list[TaskInfo]]],
) -> Placed | None:
    """The plan's sub-groups in turn order until the job is ready (one turn when it was already); None,
    with nothing kept, when the job is still not ready."""
    queue = ssn.queues[job.queue]
    was_ready = ssn.job_ready(job)
    allocated = 0
    with ssn.statement() as trial:
        for part in parts:
            placement = plan.placed.get(part.name)
            if placement is None:
                continue
            pods = by_gang[part.name]
            with ssn.statement() as one:
                count = 0
                for assignment in placement.assignments:
                    row = ssn.table.node_index[assignment.node]
                    for _ in range(assignment.count):
                        task = pods[assignment.task].pop(0)
                        if not ssn.allocatable(queue, task):
                            reason = ssn.explain_allocatable(queue, task) or f"queue {queue.name} is full"
                            ssn.fit_failures_of(job).add(1, [reason])
                            break
                        one.allocate(task, row)
                        count += 1
                        if part.name in one_by_one and ssn.job_ready(job):
                            break  # enough once the job is ready
                    else:
                        continue
                    break
                if part.name not in one_by_one and count < part.min_available:
                    one.discard()  # the queue stopped it part-way: a sub-group is never half placed
                    continue
                one.commit()
                allocated += count
            if was_ready or ssn.job_ready(job):
                break
        if allocated and (was_ready or ssn.job_ready(job)):
            trial.commit()
            return Placed(allocated, 0)
        trial.discard()
    return None
