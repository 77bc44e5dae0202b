"""The cpsat plugin's placement of a job with ``spec.subGroupPolicy``: every sub-group one gang of the model.

Each sub-group not ready yet is a gang of the pods that make it ready (``subGroupSize``): CP-SAT places all
of them or none, and a hard ``networkTopology`` of its policy keeps them inside one HyperNode of an allowed
tier (soft: a preference). The job's default sub-group (pods of no policy) is one more gang of any size. The
gangs are solved together in Volcano's turn order (sub-groups the job needs for ``minSubGroups`` first), and
the plan is taken sub-group by sub-group until the job is ready, which also counts its ready sub-groups
against ``minSubGroups``. A job still not ready falls to the greedy sub-group placement (which may pipeline
onto releasing pods), unless a hard sub-group topology holds it: then it waits with the solver's reasons.
A hard ``networkTopology`` of the whole job asks for all its sub-groups inside one HyperNode, which these
per-sub-group gangs cannot promise: such a job is refused with the fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from volcano_py.api.meta import NetworkTopologyMode, NetworkTopologySpec
from volcano_py.api.subgroups import SubGroupKey

from ..framework.extension import Placed
from ..framework.job import JobInfo
from ..framework.subgroups import is_hard, placeable, turn_order
from ..framework.task import TaskInfo
from ..solver.hypernode_tree import NetworkTopology, TopologyError

if TYPE_CHECKING:
    from ..framework.session import Session
    from ..framework.statement import Statement
    from ..solver.problem import PlacementPlan
    from .cpsat import CpsatPlugin, Part

JOB_HARD_REFUSAL = (
    "PodGroup spec.networkTopology is hard and spec.subGroupPolicy splits the job: the cpsat plugin places "
    "each sub-group on its own and cannot keep them all inside one HyperNode; use the network-topology-aware "
    "plugin instead of cpsat in the scheduler conf, or set spec.networkTopology.mode to soft"
)


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
    if job_topology is not None and job_topology.mode is NetworkTopologyMode.HARD:
        ssn.fit_failures_of(job).add(len(waiting), [JOB_HARD_REFUSAL])
        return Placed(0, 0)
    parts: list[Part] = []
    keys: dict[str, SubGroupKey | None] = {}
    hard = False
    for key, members in turn_order(job):
        need = job.sub_group_missing(key, members)
        tasks = ssn.sorted_tasks(placeable(job, members))
        if key is not None and (need == 0 or len(tasks) < need):
            continue  # ready: grows pod by pod on the greedy path; short of pods: cannot be ready yet
        topology = job_topology
        if key is not None:
            tasks = tasks[:need]
            spec = job.sub_group_policies[key.policy].network_topology
            if spec is not None:
                try:
                    topology = _topology(spec)
                except TopologyError as err:
                    reason = f"PodGroup spec.subGroupPolicy[{key.policy}].{err}"
                    ssn.fit_failures_of(job).add(len(waiting), [reason])
                    return Placed(0, 0)
            hard = hard or is_hard(job, key)
        name = f"{job.uid}/{key.label(job.sub_group_policies) if key is not None else 'default'}"
        parts.append(Part(name, tasks, max(need, 1) if key is not None else 1, topology))
        keys[name] = key
    if not parts or not any(k is not None for k in keys.values()):
        return None  # nothing to place all at once: pods go one by one
    every = [t for part in parts for t in part.tasks]
    if any(t.host_ports or t.affinity.get("podAffinity") or t.affinity.get("podAntiAffinity") for t in every):
        return None  # their fit depends on their mates' placement: pod by pod (see CpsatPlugin.place_job)
    slots = plugin.device_slots(ssn, every)
    if slots is None:
        return None
    if hard and plugin.tree_error:
        ssn.fit_failures_of(job).add(len(waiting), [f"HyperNodes are invalid: {plugin.tree_error}"])
        return Placed(0, 0)
    plan, by_gang = plugin.solve_parts(ssn, job, parts, slots)
    placed = _take(ssn, job, parts, keys, plan, by_gang)
    if placed is not None:
        return placed
    if not hard:
        return None
    reasons = [
        f"sub-group {name.rsplit('/', 1)[-1]}: {plan.unplaced[name].reason}"
        for name in keys
        if name in plan.unplaced
    ]
    ssn.fit_failures_of(job).add(len(waiting), reasons or ["the sub-groups placed do not make the job ready"])
    return Placed(0, 0)


def _take(
    ssn: Session,
    job: JobInfo,
    parts: list[Part],
    keys: dict[str, SubGroupKey | None],
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
                        if keys[part.name] is None and ssn.job_ready(job):
                            break  # default sub-group pods go one by one: enough once the job is ready
                    else:
                        continue
                    break
                if keys[part.name] is not None and count < part.min_available:
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
