"""The CP-SAT model for one gang in one domain: how many nodes of each class get each fill pattern.

Variables ``n[m, p]`` count the nodes of merged class ``m`` that receive pattern ``p``. Per-node resource
limits hold by construction (every pattern fits one node of its class), so the only constraints are class
sizes and the gang's minimums. The objective is lexicographic, folded into one integer sum with weights
that no lower term can overturn: pods placed, then stranded GPUs, then GPUs fragmented for the likely
request sizes, then nodes touched (an idle node opened counts twice). Each term only changes on nodes the
gang touches, and a gang touches at most as many nodes as it has pods, which keeps the weights small. The
tier of the domain is compared outside the model, between domains.
"""

from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from volcano_py.scheduler.solver.domain import Choice, GangDomain


class LeanModel(cp_model.CpModel):
    """CpModel minus the camelCase aliases ortools 9.15 attaches to every instance (~1.6 ms per model).

    A session builds hundreds of small models; the aliases are never used here.
    """

    def _add_pre_pep8_methods(self) -> None:
        return None


def new_solver(time_limit_s: float, seed: int) -> cp_model.CpSolver:
    """A single-worker (deterministic) solver bounded by ``time_limit_s``."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    # CP-SAT's own SIGINT catcher leaves SIGINT at SIG_DFL when a solve ends, so the next Ctrl-C would kill
    # the scheduler outright, skipping its shutdown (and `volcano-py up`'s cluster teardown).
    solver.parameters.catch_sigint_signal = False
    solver.parameters.random_seed = seed
    solver.parameters.max_time_in_seconds = max(time_limit_s, 0.001)
    return solver


@dataclass(frozen=True, slots=True)
class ModelResult:
    choice: Choice | None
    status: str
    wall_ms: float


def solve_domain(domain: GangDomain, hint: Choice | None, *, time_limit_s: float, seed: int) -> ModelResult:
    model = LeanModel()
    gang = domain.gang
    variables: dict[tuple[int, int], cp_model.IntVar] = {}
    per_task: list[list[tuple[int, cp_model.IntVar]]] = [[] for _ in gang.tasks]
    max_strand = max_frag = 0
    for m, cls in enumerate(domain.classes):
        class_vars = []
        for p, pattern in enumerate(cls.patterns):
            var = model.new_int_var(0, cls.size, f"n_{m}_{p}")
            variables[(m, p)] = var
            class_vars.append(var)
            for t, k in enumerate(pattern):
                if k:
                    per_task[t].append((k, var))
            max_strand = max(max_strand, abs(cls.strand_delta[p]))
            max_frag = max(max_frag, abs(cls.frag_delta[p]))
        if class_vars:
            model.add(sum(class_vars) <= cls.size)
    totals = []
    for t, task in enumerate(gang.tasks):
        placed = sum(k * var for k, var in per_task[t]) if per_task[t] else 0
        model.add(placed >= task.min_member)
        model.add(placed <= task.count)
        totals.append(placed)
    model.add(sum(totals) >= gang.min_available)

    pods_max = gang.size
    nodes_cost = sum(var * (2 if domain.classes[m].idle else 1) for (m, _), var in variables.items())
    stranded = sum(domain.classes[m].strand_delta[p] * var for (m, p), var in variables.items())
    fragmented = sum(domain.classes[m].frag_delta[p] * var for (m, p), var in variables.items())
    gained = sum(domain.classes[m].pair_gain[p] * var for (m, p), var in variables.items())
    # Every pair of the gang's pods earns its score at most once.
    max_gain = sum(abs(s) for _, _, s in domain.pairs) * pods_max * pods_max
    w_frag = 2 * pods_max + 1
    w_strand = w_frag * (2 * max_frag * pods_max + 1)
    w_pair = w_strand * (2 * max_strand * pods_max + 1)
    w_pods = w_pair * (2 * max_gain + 1)
    if w_pods * (pods_max + 1) >= 2**62:
        # Too wide to fold exactly (huge gangs with many sizes): drop fragmentation, keep the other terms.
        w_frag, w_strand = 0, 2 * pods_max + 1
        w_pair = w_strand * (2 * max_strand * pods_max + 1)
        w_pods = w_pair * (2 * max_gain + 1)
    objective = w_strand * stranded + w_frag * fragmented + nodes_cost
    if domain.pairs:
        objective = objective - w_pair * gained
    if gang.size > gang.min_available:
        # Extra pods beyond minAvailable only matter when the gang may grow past it.
        objective = objective - w_pods * sum(totals)
    model.minimize(objective)
    if hint:
        for key, var in variables.items():
            model.add_hint(var, hint.get(key, 0))

    solver = new_solver(time_limit_s, seed)
    status = solver.solve(model)
    name = solver.status_name(status)
    wall_ms = solver.wall_time * 1000.0
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return ModelResult(None, name, wall_ms)
    choice: Choice = {}
    for key, var in variables.items():
        value = int(solver.value(var))
        if value:
            choice[key] = value
    return ModelResult(choice, name, wall_ms)
