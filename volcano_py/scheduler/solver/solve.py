"""``solve(problem, budget) -> plan``: gangs in priority order, each placed by domain decomposition.

For each gang: (1) list the tiers it may span (hard: up to its bound; soft or none: all, then the cluster);
(2) at each tier, bound every HyperNode by arithmetic (sum of per-node fits against minAvailable and
minTaskMember), which prunes most of them at once; (3) rank survivors tightest first, take the greedy
binpack answer in the first that admits one, and give the top few a small CP-SAT model warm-started from
greedy; the best answer of the lowest tier with any answer wins. When the budget is spent the greedy answer
stands. ``greedy(problem)`` runs the same loop without CP-SAT and is the baseline.
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import numpy.typing as npt

from volcano_py.api.meta import NetworkTopologyMode
from volcano_py.log import get_logger
from volcano_py.scheduler.solver import reasons
from volcano_py.scheduler.solver.domain import Choice, GangDomain, build_domain, greedy_choice
from volcano_py.scheduler.solver.fragmentation import StrandedGpus, Vector
from volcano_py.scheduler.solver.hypernode_tree import ROOT, resolve_highest_tier
from volcano_py.scheduler.solver.problem import (
    Assignment,
    Gang,
    GangPlacement,
    PlacementPlan,
    PlacementProblem,
    PlanSource,
    SolverBudget,
    Unplaced,
)
from volcano_py.scheduler.solver.single import best_slot
from volcano_py.scheduler.solver.slots import ClusterView, IntArray

log = get_logger(__name__)


def solve(problem: PlacementProblem, budget: SolverBudget | None = None) -> PlacementPlan:
    return _Session(problem, budget or SolverBudget(), use_solver=True).run()


def greedy(problem: PlacementProblem) -> PlacementPlan:
    return _Session(problem, SolverBudget(time_ms=0), use_solver=False).run()


class _Session:
    def __init__(self, problem: PlacementProblem, budget: SolverBudget, *, use_solver: bool) -> None:
        self.problem = problem
        self.budget = budget
        self.use_solver = use_solver
        self.start = time.perf_counter()
        self.deadline = self.start + budget.time_ms / 1000.0
        self.view = ClusterView(problem)
        self.measure = StrandedGpus(self.view.dims, problem.likely_requests())
        self.measure.weigh_by_scarcity(self.view.alloc_matrix(), self.view.sizes())
        self.stats: Counter[str] = Counter()
        self.allowed_rows: list[tuple[bool, ...]] = []
        self.model_s = 0.0  # time inside CP-SAT so far
        self.reserve_s = 0.0  # time kept back for the greedy work of the gangs still to come

    def run(self) -> PlacementPlan:
        placed: dict[str, GangPlacement] = {}
        unplaced: dict[str, Unplaced] = {}
        gangs = self.problem.gangs
        order = sorted(range(len(gangs)), key=lambda i: (-gangs[i].priority, i))
        for done, i in enumerate(order):
            if done:
                # The budget covers the whole session, so CP-SAT stops early enough for greedy to finish.
                outside = time.perf_counter() - self.start - self.model_s
                self.reserve_s = outside / done * (len(order) - done)
            outcome = self.place(gangs[i])
            if isinstance(outcome, GangPlacement):
                placed[outcome.gang] = outcome
            else:
                unplaced[outcome.gang] = outcome
        solve_ms = (time.perf_counter() - self.start) * 1000.0
        log.debug("placement session", placed=len(placed), unplaced=len(unplaced), ms=round(solve_ms, 2))
        return PlacementPlan(placed, unplaced, solve_ms, dict(self.stats))

    def remaining_s(self) -> float:
        return self.deadline - time.perf_counter() - self.reserve_s

    # Tiers the gang may span, lowest first, or a reason it may span none.
    def tiers_for(self, gang: Gang) -> list[int] | str:
        tree = self.view.tree
        has_tree = tree is not None and bool(tree.tiers)
        topology = gang.topology
        if topology is not None and topology.mode is NetworkTopologyMode.HARD:
            if tree is None or not has_tree:
                return (
                    "networkTopology is hard but the cluster has no HyperNodes; "
                    "create HyperNodes or use mode soft"
                )
            bound = resolve_highest_tier(topology, tree)
            if bound is None:
                known = ", ".join(sorted(tree.tier_names)) or "none"
                return (
                    f"networkTopology.highestTierName {topology.highest_tier_name!r} matches no HyperNode "
                    f"tierName (known: {known})"
                )
            tiers = [t for t in tree.tier_levels() if t <= bound]
            if bound >= tree.root_tier:
                tiers.append(tree.root_tier)
            if not tiers:
                lowest = min(tree.tiers.values())
                return (
                    f"networkTopology.highestTierAllowed is {bound} but the lowest HyperNode tier is {lowest}"
                )
            return tiers
        if tree is not None and has_tree and gang.size > 1:
            return [*tree.tier_levels(), tree.root_tier]
        return [tree.root_tier if tree is not None else 1]

    def place(self, gang: Gang) -> GangPlacement | Unplaced:
        tiers = self.tiers_for(gang)
        if isinstance(tiers, str):
            return Unplaced(gang.name, tiers)
        view = self.view
        view.compact()
        sizes = view.sizes()
        requests = [tuple(t.request.amount(d) for d in view.dims) for t in gang.tasks]
        fits = [view.fits(r, t.feasible, t.count) for r, t in zip(requests, gang.tasks, strict=True)]
        caps = [f * sizes for f in fits]
        if gang.size == 1:
            slot = best_slot(
                view, requests[0], self.single_candidates(tiers, caps[0]), self.measure, exact=self.use_solver
            )
            if slot is not None:
                source = PlanSource.EXACT if self.use_solver else PlanSource.GREEDY
                return self.finish(gang, [(slot, 1, requests[0], (1,))], source)
        self.allowed_rows = [tuple(row) for row in np.stack(fits, axis=1).__gt__(0).tolist()]
        for task, cap in zip(gang.tasks, caps, strict=True):
            if cap.sum() == 0:
                passing = view.fits(tuple(0 for _ in view.dims), task.feasible, 1) * sizes
                why = (
                    "no node passes its predicates" if passing.sum() == 0 else "no node has room for one pod"
                )
                return Unplaced(gang.name, f"task {task.name!r}: {why} [{reasons.describe_tasks(gang)}]")
        hard = gang.topology is not None and gang.topology.mode is NetworkTopologyMode.HARD
        gpu_col = view.dims.index("nvidia.com/gpu") if "nvidia.com/gpu" in view.dims else -1
        gpu_free = (
            (view.free_matrix()[:, gpu_col] * sizes) if gpu_col >= 0 else np.zeros(len(sizes), np.int64)
        )
        usable = np.zeros(len(sizes), dtype=bool)
        for cap in caps:
            usable |= cap > 0
        best_miss = (-1, ROOT, 0)
        per_node_misses = 0
        for tier in tiers:
            domain_of, names = view.domains_at(tier)
            valid = domain_of >= 0
            count = len(names)
            upper = np.zeros(count, dtype=np.int64)
            ok = np.ones(count, dtype=bool)
            slack = np.zeros(count, dtype=np.int64)
            for task, cap in zip(gang.tasks, caps, strict=True):
                per_domain = np.bincount(domain_of[valid], weights=cap[valid], minlength=count).astype(
                    np.int64
                )
                ok &= per_domain >= task.min_member
                upper += np.minimum(per_domain, task.count)
                slack += per_domain
            ok &= upper >= gang.min_available
            survivors = np.flatnonzero(ok)
            self.stats["domains_pruned"] += int(count - len(survivors))
            if len(survivors) == 0:
                # Domains nest as tiers rise, so the last tier tried holds the closest miss.
                d = int(np.argmax(upper))
                gpus = np.bincount(
                    domain_of[valid & usable], weights=gpu_free[valid & usable], minlength=count
                )
                best_miss = (int(upper[d]), names[d], int(gpus[d]))
                continue
            order = survivors[np.lexsort((survivors, slack[survivors]))].tolist()
            chosen = self.best_in_tier(gang, order, domain_of)
            if chosen is not None:
                domain, choice, source = chosen
                return self.apply(gang, domain, choice, source)
            per_node_misses += len(order)
        if per_node_misses:
            return Unplaced(
                gang.name, reasons.per_node_reason(gang, tiers[-1] if hard else None, per_node_misses)
            )
        fit, where, miss_gpus = best_miss
        return Unplaced(
            gang.name,
            reasons.capacity_reason(
                gang,
                scope_tier=tiers[-1] if hard else None,
                best_domain=where,
                best_fit=max(fit, 0),
                best_gpus=miss_gpus,
            ),
        )

    def best_in_tier(
        self, gang: Gang, order: list[int], domain_of: IntArray
    ) -> tuple[GangDomain, Choice, PlanSource] | None:
        def build(d: int) -> GangDomain:
            slots = np.flatnonzero(domain_of == d).tolist()
            return build_domain(self.view, gang, slots, self.measure, self.allowed_rows)

        built: dict[int, GangDomain] = {}
        best: tuple[GangDomain, Choice, PlanSource] | None = None
        best_key: tuple[int, int, int, int, int] | None = None
        greedy_domain: int | None = None
        for d in order:
            built[d] = build(d)
            choice = greedy_choice(built[d])
            if choice is not None:
                greedy_domain = d
                best, best_key = (built[d], choice, PlanSource.GREEDY), built[d].score(choice)
                break
        if not self.use_solver:
            return best
        if (
            best_key is not None
            and best_key[2] <= 0
            and best_key[3] <= 0
            and gang.topology is None
            and not gang.pair_scores
        ):
            # Greedy strands no GPU and fragments nothing, and no topology or pair score asks for better: a
            # model could only save nodes touched, which is not worth a solve per gang (most gangs land here).
            self.stats["models_skipped_greedy_clean"] += 1
            return best
        candidates = [d for d in order[: self.budget.max_domains] if d != greedy_domain]
        if greedy_domain is not None:
            candidates.insert(0, greedy_domain)
        candidates = candidates[: max(self.budget.max_domains, 1)]
        solved: set[tuple[object, ...]] = set()
        # CP-SAT (and the pandas it loads) only once a model may be wanted: a second of start-up otherwise,
        # spent here once, before the budget left is read.
        from volcano_py.scheduler.solver.model import solve_domain

        for i, d in enumerate(candidates):
            left = self.remaining_s()
            if left * 1000.0 < self.budget.min_solve_ms:
                self.stats["budget_exhausted"] += 1
                break
            domain = built.get(d) or build(d)
            built[d] = domain
            signature = domain.signature()
            if signature in solved:
                # Same classes as a domain already solved: same optimum, so the model would add nothing.
                self.stats["models_skipped_same_domain"] += 1
                continue
            solved.add(signature)
            hint = best[1] if best is not None and d == greedy_domain else greedy_choice(domain)
            began = time.perf_counter()
            result = solve_domain(
                domain, hint, time_limit_s=left / (len(candidates) - i), seed=self.budget.seed
            )
            self.model_s += time.perf_counter() - began
            self.stats["models"] += 1
            self.stats[f"status_{result.status.lower()}"] += 1
            if result.choice is None:
                continue
            key = domain.score(result.choice)
            if best_key is None or key <= best_key:
                best, best_key = (domain, result.choice, PlanSource.CPSAT), key
        return best

    def single_candidates(self, tiers: list[int], cap: IntArray) -> npt.NDArray[np.bool_]:
        """Slots a one-pod gang may use: room for the pod, inside some domain of an allowed tier."""
        inside = np.zeros(len(cap), dtype=bool)
        for tier in tiers:
            inside |= self.view.domains_at(tier)[0] >= 0
        out: npt.NDArray[np.bool_] = inside & (cap > 0)
        return out

    def apply(self, gang: Gang, domain: GangDomain, choice: Choice, source: PlanSource) -> GangPlacement:
        view = self.view
        left = {i: len(view.slots[i].nodes) for cls in domain.classes for i in cls.slots}
        picks: list[tuple[int, int, int, int]] = []  # slot, count, class, pattern
        for (m, p), n in sorted(choice.items()):
            need = n
            for i in domain.classes[m].slots:
                q = min(need, left[i])
                if q:
                    picks.append((i, q, m, p))
                    left[i] -= q
                    need -= q
                if not need:
                    break
            if need:
                raise AssertionError(f"gang {gang.name}: class {m} has fewer nodes than the plan uses")
        moves = [(slot, q, domain.used(m, p), domain.classes[m].patterns[p]) for slot, q, m, p in picks]
        return self.finish(gang, moves, source)

    def finish(
        self, gang: Gang, moves: list[tuple[int, int, Vector, Vector]], source: PlanSource
    ) -> GangPlacement:
        """Take the nodes: each move is (slot, node count, resources per node, pods per task per node)."""
        view = self.view
        assignments: list[Assignment] = []
        for slot, q, used, pattern in moves:
            for node in view.take(slot, q, used):
                assignments.extend(
                    Assignment(task.name, node, k) for task, k in zip(gang.tasks, pattern, strict=True) if k
                )
        self.stats[f"placed_{source.value}"] += 1
        tree = view.tree
        where = tree.enclosing(a.node for a in assignments) if tree is not None else ROOT
        tier = tree.tier(where) if tree is not None else 1
        return GangPlacement(gang.name, tuple(assignments), where, tier, source)
