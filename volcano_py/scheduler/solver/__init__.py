"""CP-SAT gang placement: a pure function from a PlacementProblem to a PlacementPlan.

``solve`` decomposes by HyperNode domain, prunes by arithmetic, and solves a small CP-SAT model per
surviving domain, warm-started from ``greedy`` (Volcano-style binpack), which is also the fallback.
"""

from volcano_py.scheduler.solver.problem import (
    Assignment,
    Gang,
    GangPlacement,
    NodeClass,
    PlacementPlan,
    PlacementProblem,
    PlanSource,
    ProblemError,
    SolverBudget,
    TaskClass,
    Unplaced,
)
from volcano_py.scheduler.solver.solve import greedy, solve

__all__ = [
    "Assignment",
    "Gang",
    "GangPlacement",
    "NodeClass",
    "PlacementPlan",
    "PlacementProblem",
    "PlanSource",
    "ProblemError",
    "SolverBudget",
    "TaskClass",
    "Unplaced",
    "greedy",
    "solve",
]
