"""The solver's own input and output records, independent of the scheduler's snapshot types.

Nodes come grouped into classes (same free vector, same allocatable, same predicate outcome for every task
that lists them): pods of one task class are interchangeable, and so are the nodes of one class, so the
solver reasons about counts, never about single pods or single nodes. A plan answers per gang with
``(task, node, count)`` triples, or with a sentence saying why the gang stays pending.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from volcano_py.resources import Resource
from volcano_py.scheduler.solver.hypernode_tree import HyperNodeTree, NetworkTopology


class ProblemError(ValueError):
    """A PlacementProblem that cannot be solved as written (a programming error in the caller)."""


@dataclass(frozen=True, slots=True)
class NodeClass:
    """Nodes with identical free and allocatable vectors; ``id`` is what task classes cite as feasible."""

    id: str
    free: Resource
    allocatable: Resource
    nodes: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.nodes:
            raise ProblemError(f"node class {self.id!r} has no nodes; drop it or list its node names")
        negative = [name for name, value in self.free.items() if value < 0]
        if negative:
            raise ProblemError(f"node class {self.id!r}: free {', '.join(negative)} is negative")


@dataclass(frozen=True, slots=True)
class TaskClass:
    """Identical pods of one gang: ``count`` of them, ``min_member`` required (the task's minTaskMember)."""

    name: str
    request: Resource
    count: int
    min_member: int = 0
    # Node class ids that pass every predicate for this task; None means every class does.
    feasible: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ProblemError(f"task {self.name!r}: count is {self.count}; it must be >= 1")
        if not 0 <= self.min_member <= self.count:
            raise ProblemError(
                f"task {self.name!r}: minTaskMember is {self.min_member}; "
                f"it must be between 0 and count {self.count}"
            )
        if self.request.is_zero():
            raise ProblemError(f"task {self.name!r}: request is empty; give it at least a cpu or pods amount")

    def allows(self, node_class: str) -> bool:
        return self.feasible is None or node_class in self.feasible


@dataclass(frozen=True, slots=True)
class Gang:
    """A PodGroup waiting for placement: all-or-nothing at ``min_available`` pods."""

    name: str
    tasks: tuple[TaskClass, ...]
    min_available: int
    priority: int = 0
    topology: NetworkTopology | None = None
    # (task, task, score): per pair of pods of these tasks on one node, > 0 together, < 0 apart (a soft wish,
    # task-topology's); the same task twice scores pairs of its own pods.
    pair_scores: tuple[tuple[str, str, int], ...] = ()

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ProblemError(f"gang {self.name!r} has no tasks")
        names = [t.name for t in self.tasks]
        if len(set(names)) != len(names):
            raise ProblemError(f"gang {self.name!r}: task names repeat ({', '.join(names)})")
        for left, right, _ in self.pair_scores:
            for name in (left, right):
                if name not in names:
                    raise ProblemError(f"gang {self.name!r}: pair score names unknown task {name!r}")
        total = sum(t.count for t in self.tasks)
        if not 1 <= self.min_available <= total:
            raise ProblemError(
                f"gang {self.name!r}: minAvailable is {self.min_available}; it must be between 1 and the "
                f"{total} pods its tasks declare"
            )

    @property
    def size(self) -> int:
        return sum(t.count for t in self.tasks)


@dataclass(frozen=True, slots=True)
class PlacementProblem:
    """One session's placement question: gangs in priority order get nodes from the classes."""

    node_classes: tuple[NodeClass, ...]
    gangs: tuple[Gang, ...]
    tree: HyperNodeTree | None = None
    # Request vectors seen in the queue; a GPU left where none of these fits counts as stranded.
    request_sizes: tuple[Resource, ...] = ()

    def __post_init__(self) -> None:
        ids = [c.id for c in self.node_classes]
        if len(set(ids)) != len(ids):
            raise ProblemError("node class ids repeat; give each class a distinct id")
        seen: set[str] = set()
        for c in self.node_classes:
            dup = seen.intersection(c.nodes)
            if dup:
                raise ProblemError(
                    f"node {sorted(dup)[0]} is in two node classes; a node belongs to one class"
                )
            seen.update(c.nodes)
        known = set(ids)
        gang_names = [g.name for g in self.gangs]
        if len(set(gang_names)) != len(gang_names):
            raise ProblemError("gang names repeat; name each gang once (namespace/name)")
        for gang in self.gangs:
            for task in gang.tasks:
                unknown = sorted((task.feasible or frozenset()) - known)
                if unknown:
                    raise ProblemError(
                        f"gang {gang.name!r} task {task.name!r}: "
                        f"feasible names unknown node class {unknown[0]!r}"
                    )

    def likely_requests(self) -> tuple[Resource, ...]:
        if self.request_sizes:
            return self.request_sizes
        return tuple(sorted({t.request for g in self.gangs for t in g.tasks}, key=repr))


@dataclass(frozen=True, slots=True)
class SolverBudget:
    """How long one session may spend in CP-SAT, and how it searches.

    ``min_solve_ms``: when less than this is left, the model is not even built and greedy answers stand.
    ``max_domains``: how many candidate HyperNodes of the winning tier get a CP-SAT model each.
    """

    time_ms: float = 200.0
    seed: int = 0
    max_domains: int = 3
    min_solve_ms: float = 5.0

    def __post_init__(self) -> None:
        if self.time_ms < 0:
            raise ProblemError(f"solver budget time_ms is {self.time_ms}; it must be >= 0")
        if self.max_domains < 1:
            raise ProblemError(f"solver budget max_domains is {self.max_domains}; it must be >= 1")


class PlanSource(enum.Enum):
    """Which method produced a gang's placement."""

    CPSAT = "cpsat"
    GREEDY = "greedy"
    EXACT = "exact"  # a single pod: every node class scored, no model needed


@dataclass(frozen=True, slots=True)
class Assignment:
    task: str
    node: str
    count: int


@dataclass(frozen=True, slots=True)
class GangPlacement:
    gang: str
    assignments: tuple[Assignment, ...]
    hypernode: str  # the lowest HyperNode holding every assigned node (topology.ROOT when none)
    tier: int
    source: PlanSource

    def pods(self) -> int:
        return sum(a.count for a in self.assignments)

    def nodes(self) -> frozenset[str]:
        return frozenset(a.node for a in self.assignments)


@dataclass(frozen=True, slots=True)
class Unplaced:
    gang: str
    reason: str


@dataclass(frozen=True, slots=True)
class PlacementPlan:
    placed: Mapping[str, GangPlacement]
    unplaced: Mapping[str, Unplaced]
    solve_ms: float = 0.0
    # Counters a benchmark or a metric may read: models built, domains pruned by the bound, etc.
    stats: Mapping[str, int] = field(default_factory=dict)
