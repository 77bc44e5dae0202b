"""Fluent builders for solver tests, and an independent checker of plans against the raw problem."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from volcano_py.api.meta import LabelSelector, LabelSelectorRequirement, NetworkTopologyMode
from volcano_py.api.topology import (
    ExactMatch,
    HyperNode,
    HyperNodeSpec,
    MemberSelector,
    MemberSpec,
    MemberType,
    RegexMatch,
)
from volcano_py.resources import GPU, Resource
from volcano_py.scheduler.solver import (
    Gang,
    NodeClass,
    PlacementPlan,
    PlacementProblem,
    TaskClass,
)
from volcano_py.scheduler.solver.hypernode_tree import (
    HyperNodeTree,
    NetworkTopology,
    build_tree,
    resolve_highest_tier,
)


def requirement(key: str, operator: str, values: tuple[str, ...] = ()) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key=key, operator=operator, values=list(values))


def selector(
    *,
    exact_name: str | None = None,
    pattern: str | None = None,
    match_labels: dict[str, str] | None = None,
    match_expressions: tuple[LabelSelectorRequirement, ...] = (),
) -> MemberSelector:
    """A HyperNode member selector (the api model) from its parts; several parts make an invalid one."""
    labels = None
    if match_labels is not None or match_expressions:
        labels = LabelSelector(match_labels=match_labels or {}, match_expressions=list(match_expressions))
    return MemberSelector(
        exact_match=ExactMatch(name=exact_name) if exact_name else None,
        regex_match=RegexMatch(pattern=pattern) if pattern else None,
        label_match=labels,
    )


def member(kind: MemberType, **parts: object) -> MemberSpec:
    return MemberSpec(type=kind, selector=selector(**parts))  # type: ignore[arg-type]


def hypernode(
    name: str, tier: int, members: tuple[MemberSpec, ...], tier_name: str | None = None
) -> HyperNode:
    spec = HyperNodeSpec(tier=tier, tier_name=tier_name, members=list(members))
    return HyperNode.model_validate({"metadata": {"name": name}, "spec": spec.to_dict()})


def gpu_node(gpus: int, *, used: int = 0, cpu: int = 64) -> tuple[Resource, Resource]:
    """(free, allocatable) of a GPU node with ``used`` GPUs (and a proportional share of cpu) taken."""
    alloc = Resource.of(cpu=cpu, memory="512Gi", gpu=gpus)
    used_cpu = cpu * used // max(gpus, 1)
    return alloc - Resource.of(cpu=used_cpu, gpu=used), alloc


@dataclass
class ProblemBuilder:
    classes: list[NodeClass] = field(default_factory=list)
    gangs: list[Gang] = field(default_factory=list)
    hypernodes: list[HyperNode] = field(default_factory=list)
    sizes: list[Resource] = field(default_factory=list)

    def nodes(self, prefix: str, count: int, free: Resource, alloc: Resource | None = None) -> ProblemBuilder:
        names = tuple(f"{prefix}-{i}" for i in range(count))
        self.classes.append(NodeClass(prefix, free, alloc if alloc is not None else free, names))
        return self

    def gpu_nodes(self, prefix: str, count: int, gpus: int, *, used: int = 0) -> ProblemBuilder:
        free, alloc = gpu_node(gpus, used=used)
        return self.nodes(prefix, count, free, alloc)

    def rack(self, name: str, *nodes: str, tier: int = 1) -> ProblemBuilder:
        members = tuple(member(MemberType.NODE, exact_name=n) for n in nodes)
        self.hypernodes.append(hypernode(name, tier, members, tier_name="rack" if tier == 1 else None))
        return self

    def spine(self, name: str, *children: str, tier: int = 2) -> ProblemBuilder:
        members = tuple(member(MemberType.HYPERNODE, exact_name=c) for c in children)
        self.hypernodes.append(hypernode(name, tier, members, tier_name="spine"))
        return self

    def gang(
        self,
        name: str,
        pods: int,
        *,
        gpu: int = 1,
        cpu: int = 1,
        min_available: int | None = None,
        priority: int = 0,
        hard_tier: int | None = None,
        soft: bool = False,
        feasible: frozenset[str] | None = None,
    ) -> ProblemBuilder:
        topology = None
        if hard_tier is not None:
            topology = NetworkTopology(NetworkTopologyMode.HARD, highest_tier_allowed=hard_tier)
        elif soft:
            topology = NetworkTopology(NetworkTopologyMode.SOFT)
        task = TaskClass(
            "worker", Resource.of(cpu=cpu, gpu=gpu), pods, pods if min_available is None else 0, feasible
        )
        gang = Gang(name, (task,), min_available or pods, priority, topology)
        self.gangs.append(gang)
        return self

    def likely(self, *gpus: int) -> ProblemBuilder:
        self.sizes.extend(Resource.of(cpu=1, gpu=g) for g in gpus)
        return self

    def tree(self) -> HyperNodeTree | None:
        if not self.hypernodes:
            return None
        names: dict[str, dict[str, str]] = {n: {} for c in self.classes for n in c.nodes}
        return build_tree(self.hypernodes, names)

    def obj(self) -> PlacementProblem:
        return PlacementProblem(tuple(self.classes), tuple(self.gangs), self.tree(), tuple(self.sizes))


def violations(problem: PlacementProblem, plan: PlacementPlan) -> list[str]:
    """Everything wrong with ``plan``, computed from the problem alone (no solver internals)."""
    errors: list[str] = []
    free: dict[str, Resource] = {}
    origin: dict[str, str] = {}
    for c in problem.node_classes:
        for n in c.nodes:
            free[n] = c.free
            origin[n] = c.id
    gangs = {g.name: g for g in problem.gangs}
    for name, placement in plan.placed.items():
        gang = gangs[name]
        tasks = {t.name: t for t in gang.tasks}
        per_task: dict[str, int] = defaultdict(int)
        for a in placement.assignments:
            task = tasks[a.task]
            if a.node not in free:
                errors.append(f"{name}: unknown node {a.node}")
                continue
            if not task.allows(origin[a.node]):
                errors.append(f"{name}: task {a.task} on {a.node} fails predicates")
            free[a.node] = free[a.node] - task.request * a.count
            per_task[a.task] += a.count
        if sum(per_task.values()) < gang.min_available:
            errors.append(f"{name}: {sum(per_task.values())} pods < minAvailable {gang.min_available}")
        for t in gang.tasks:
            if not t.min_member <= per_task[t.name] <= t.count:
                errors.append(f"{name}: task {t.name} has {per_task[t.name]} pods")
        topo = gang.topology
        if topo is not None and topo.mode is NetworkTopologyMode.HARD:
            tree = problem.tree
            assert tree is not None
            bound = resolve_highest_tier(topo, tree)
            where = tree.enclosing(a.node for a in placement.assignments)
            if bound is None or tree.tier(where) > bound:
                errors.append(f"{name}: spans {where} (tier {tree.tier(where)}) above bound {bound}")
    for node, left in free.items():
        negative = [r for r, v in left.items() if v < 0]
        if negative:
            errors.append(f"node {node} overcommitted on {negative}")
    return errors


def stranded_after(problem: PlacementProblem, plan: PlacementPlan) -> int:
    """Stranded milli-GPUs after applying the plan, by the documented definition, computed from scratch."""
    free: dict[str, Resource] = {}
    alloc: dict[str, Resource] = {}
    for c in problem.node_classes:
        for n in c.nodes:
            free[n], alloc[n] = c.free, c.allocatable
    gangs = {g.name: g for g in problem.gangs}
    for name, placement in plan.placed.items():
        tasks = {t.name: t for t in gangs[name].tasks}
        for a in placement.assignments:
            free[a.node] = free[a.node] - tasks[a.task].request * a.count
    likely = [r for r in problem.likely_requests() if r.amount(GPU) > 0]
    total = 0
    for node, left in free.items():
        gpus = left.amount(GPU)
        if left == alloc[node] or gpus <= 0:
            continue
        if not any(r.fits_in(left) for r in likely):
            total += gpus
    return total
