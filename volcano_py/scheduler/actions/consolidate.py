"""consolidate (a volcano-py action, not one of Volcano's): move running pods so a gang that waits only
because free room is scattered over nodes gets a place.

Run before ``allocate`` (the conf refuses it elsewhere), each session it:

1. keeps the room of earlier plans: a waiting gang whose pods are nominated to nodes
   (``status.nominatedNodeName``, written for pipelined pods) is put there first -- bound when the room is
   free, pipelined while the moved pods are still leaving -- so allocate cannot hand that room to another
   job. A nomination whose room is gone is dropped and the gang waits as any other;
2. takes the first waiting gang in job order (admitted, short of ``minAvailable``) that is not placeable as
   the nodes stand, and asks CP-SAT for the fewest pods to move (``solver.consolidation``; who may move and
   over which nodes: ``consolidate_plan``). Every moved pod must have a place elsewhere in the same plan,
   placed together with the gang's pods; a gang with a hard ``networkTopology`` is planned inside one
   HyperNode (``consolidate_domains``). Gangs the model cannot plan for (``_refusal``, an unresolvable
   topology, a queue without room, no GPUs asked) are passed over with the reason in their explanation;
3. carries the plan out only when it is complete (the gang pipelined to its nodes, every moved pod's place
   re-checked) and cheaper than waiting: ``costRatio`` x the GPU-minutes the moves give up (each moved pod's
   GPUs x the minutes it has run) must be below the gang's GPUs x ``waitMinutes``. The evictions go through
   the statement like shuffle's (``Evict`` Events, ``pod_evictions{action="consolidate"}``); each moved
   job's PodGroup gets a ``Consolidated`` Event naming the gang, and the gang's explanation says what was
   moved for it, or why nothing was.

Arguments (``configurations: [{name: consolidate, arguments: {...}}]``): ``maxMoves`` (pods, default 8),
``costRatio`` (default 1.0), ``waitMinutes`` (default 60), ``timeLimitSeconds`` (per session, default 1.0),
``maxNodes`` (candidate nodes per model, default 64), ``planner`` (``cpsat``, the default, or ``greedy``: the
baseline of ``solver.consolidation_greedy``, which empties the emptiest nodes and plans no new place for
the pods it moves; the same movable pods, units, cost gate and execution).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from volcano_py.api import constants as k
from volcano_py.api.bodies.pod import pod_nominated_node
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.log import get_logger
from volcano_py.resources import GPU

from ..framework.arguments import Arguments, ConfError
from ..framework.decisions import Explanation, PodGroupEvent
from ..framework.explain import plural
from ..framework.job import JobInfo
from ..framework.session import Session
from ..framework.status import TaskStatus
from ..solver.consolidation import MoveAnswer, plan_moves
from ..solver.consolidation_greedy import plan_greedy
from .consolidate_domains import ANYWHERE, Domain, domains
from .consolidate_plan import (
    BuiltProblem,
    GangShape,
    build_problem,
    carry_out,
    fits_without_moves,
    gang_gpus,
    gang_shape,
    gpus_in_use,
)
from .victims import note, to_place

log = get_logger(__name__)

CONSOLIDATE = "consolidate"
CONSOLIDATED_REASON = "Consolidated"
NAMED = 3  # jobs and nodes named in one message; the rest are counted
# HyperNodes a gang with a hard topology is planned in per session, the roomiest first.
MAX_DOMAINS = 4


CPSAT_PLANNER = "cpsat"
GREEDY_PLANNER = "greedy"
PLANNERS = (CPSAT_PLANNER, GREEDY_PLANNER)
# What only the CP-SAT model reads: with the greedy planner they would be accepted and ignored.
MODEL_ONLY = ("timeLimitSeconds", "maxNodes")


@dataclass(frozen=True, slots=True)
class ConsolidateArgs:
    max_moves: int = 8
    cost_ratio: float = 1.0
    wait_minutes: float = 60.0
    time_limit_s: float = 1.0
    max_nodes: int = 64
    planner: str = CPSAT_PLANNER

    @classmethod
    def parse(cls, arguments: Arguments) -> ConsolidateArgs:
        arguments.check_known(
            {"maxMoves", "costRatio", "waitMinutes", "timeLimitSeconds", "maxNodes", "planner"}
        )
        d = cls()
        args = cls(
            max_moves=arguments.get_int("maxMoves", d.max_moves, minimum=1),
            cost_ratio=arguments.get_float("costRatio", d.cost_ratio, minimum=0.0),
            wait_minutes=arguments.get_float("waitMinutes", d.wait_minutes, minimum=0.0),
            time_limit_s=arguments.get_float("timeLimitSeconds", d.time_limit_s, minimum=0.0),
            max_nodes=arguments.get_int("maxNodes", d.max_nodes, minimum=2),
            planner=arguments.get_str("planner", d.planner),
        )
        if args.time_limit_s <= 0:
            raise ConfError(
                f"{arguments.owner}: argument 'timeLimitSeconds' must be above 0 (the solver's budget per "
                f"session, e.g. 1), got {arguments.values['timeLimitSeconds']!r}"
            )
        if args.planner not in PLANNERS:
            raise ConfError(
                f"{arguments.owner}: argument 'planner' must be one of {', '.join(PLANNERS)} (cpsat: the "
                f"fewest moves, each moved pod re-placed; greedy: empty the emptiest nodes), got "
                f"{arguments.values['planner']!r}"
            )
        ignored = [key for key in MODEL_ONLY if key in arguments.values]
        if args.planner == GREEDY_PLANNER and ignored:
            raise ConfError(
                f"{arguments.owner}: argument(s) {', '.join(ignored)} bound the CP-SAT model and planner "
                "greedy has none (it looks at every node and runs no solver): remove them or use planner "
                "cpsat"
            )
        return args


def _named(items: list[str]) -> str:
    shown = ", ".join(items[:NAMED])
    more = len(items) - NAMED
    return f"{shown} and {more} more" if more > 0 else shown


class Consolidate:
    name = CONSOLIDATE

    def __init__(self, arguments: Arguments) -> None:
        self.args = ConsolidateArgs.parse(arguments)

    def execute(self, ssn: Session) -> None:
        keep_nominated(ssn)
        deadline = time.perf_counter() + self.args.time_limit_s
        for job in ssn.sorted_jobs(ssn.waiting_jobs()):
            if not _waits_for_room(ssn, job):
                continue
            refused = _refusal(ssn, job)
            places = domains(ssn, job) if not refused else []
            if isinstance(places, str):
                refused = places
            if refused or isinstance(places, str):
                note(ssn, job, f"consolidate: not planned: {refused}")
                continue
            shape = gang_shape(ssn, job)
            if shape.need <= 0 or any(fits_without_moves(ssn, shape, mask) for _, mask in places):
                continue  # allocate places it as the nodes stand
            first = shape.parts[0][1][0]
            queue = ssn.queues[job.queue]
            if not ssn.allocatable(queue, first):
                said = ssn.explain_allocatable(queue, first) or f"queue {queue.name} is full"
                note(ssn, job, f"consolidate: not planned: its queue has no room for it ({said})")
                continue
            if not any(t.resreq.get(GPU, 0) for _, tasks in shape.parts for t in tasks):
                note(
                    ssn,
                    job,
                    "consolidate: not planned: it asks no nvidia.com/gpu (moves are weighed in GPU-minutes)",
                )
                continue
            # Only the first gang that needs moves is planned for: a later one must not take the room the
            # first waits for, and one model per session bounds what consolidate costs a busy scheduler.
            self._for_gang(ssn, job, shape, _roomiest(ssn, shape, places), deadline)
            return

    def _for_gang(
        self, ssn: Session, job: JobInfo, shape: GangShape, places: list[Domain], deadline: float
    ) -> bool:
        args = self.args
        best: tuple[tuple[int, int], BuiltProblem, MoveAnswer, str | None] | None = None
        statuses: list[str] = []
        candidates = 0
        greedy = args.planner == GREEDY_PLANNER
        # The greedy planner looks at every node; only the model is kept to a candidate set.
        max_nodes = 2 * len(ssn.table) if greedy else args.max_nodes
        for i, (name, mask) in enumerate(places):
            budget = max((deadline - time.perf_counter()) / (len(places) - i), 0.01)
            built = build_problem(ssn, job, shape, max_moves=args.max_moves, max_nodes=max_nodes, within=mask)
            if built is None:
                continue
            candidates += len(built.rows)
            if greedy:
                answer = plan_greedy(built.problem, gpus_in_use(ssn)[built.rows])
            else:
                answer = plan_moves(built.problem, time_limit_s=budget)
            statuses.append(answer.status)
            plan = answer.plan
            if plan is not None and (best is None or (plan.moves, plan.cost) < best[0]):
                best = ((plan.moves, plan.cost), built, answer, name)
        if best is None:
            note(ssn, job, self._no_plan(statuses, candidates, places))
            return False
        _, built, answer, name = best
        plan = answer.plan
        assert plan is not None  # kept only with a plan
        gpus = gang_gpus(to_place(ssn, job)[: shape.need])
        waiting = gpus * args.wait_minutes
        weighed = plan.cost * args.cost_ratio
        if not weighed < waiting:
            note(
                ssn,
                job,
                f"consolidate: no plan: {plural(plan.moves, 'move')} needed, cost {plan.cost} GPU-minutes "
                f"(x costRatio {args.cost_ratio:g}) >= waiting {waiting:g} GPU-minutes "
                f"({gpus:g} GPUs x waitMinutes {args.wait_minutes:g})",
            )
            return False
        return self._carry(ssn, job, shape, built, answer, waiting, name)

    def _no_plan(self, statuses: list[str], candidates: int, places: list[Domain]) -> str:
        where = "" if places == [ANYWHERE] else f" in any of {plural(len(places), 'HyperNode')} tried"
        if not statuses:
            return f"consolidate: no plan: no running pod may move for it{where}"
        if self.args.planner == GREEDY_PLANNER:
            return (
                f"consolidate: no plan: emptying the emptiest nodes (planner greedy){where} opens no room "
                f"for the gang within {plural(self.args.max_moves, 'move')} (maxMoves)"
            )
        if all(status == "INFEASIBLE" for status in statuses):
            return (
                f"consolidate: no plan: no set of at most {plural(self.args.max_moves, 'move')} (maxMoves) "
                f"over {candidates} candidate nodes{where} opens room for the gang with every moved pod "
                "placed elsewhere"
            )
        return f"consolidate: no plan found within {self.args.time_limit_s:g}s (timeLimitSeconds){where}"

    def _carry(
        self,
        ssn: Session,
        job: JobInfo,
        shape: GangShape,
        built: BuiltProblem,
        answer: MoveAnswer,
        wait: float,
        hypernode: str | None,
    ) -> bool:
        plan = answer.plan
        assert plan is not None  # checked by the caller
        gang = f"{job.namespace}/{job.name}"
        why = f"moved to make room for PodGroup {gang}"
        with ssn.statement() as stmt:
            carried = carry_out(ssn, stmt, job, shape, built, plan, why)
            if carried is None:
                stmt.discard()
                note(ssn, job, "consolidate: no plan: the solver's plan failed the session's own checks")
                return False
            stmt.commit()
        moved_jobs = sorted(carried.evicted)
        for uid in moved_jobs:
            moved = ssn.jobs.get(uid)
            if moved is None or moved.shadow:
                continue
            pods = carried.evicted[uid]
            ssn.podgroup_events.append(
                PodGroupEvent(
                    moved.namespace,
                    moved.name,
                    CONSOLIDATED_REASON,
                    f"{plural(len(pods), 'pod')} moved to make room for PodGroup {gang}: "
                    f"{_named(sorted(t.name for t in pods))}",
                )
            )
        nodes = sorted({ssn.nodes[r].name for r in carried.gang_rows})
        inside = f" in HyperNode {hypernode}" if hypernode else ""
        if self.args.planner == GREEDY_PLANNER:
            proven = " (planner greedy: the emptiest nodes emptied)"
        else:
            proven = "" if answer.proven else " (the fewest found in the time limit)"
        unready = job.min_available - job.ready_task_num
        message = (
            f"{unready}/{len(job.tasks)} tasks in gang unschedulable: consolidate: "
            f"{plural(plan.moves, 'pod')} of {_named(moved_jobs)} moved{proven} to open room on "
            f"{_named(nodes)}{inside}, cost {plan.cost} GPU-minutes (x costRatio {self.args.cost_ratio:g}) "
            f"< waiting {wait:g}; the gang is pipelined there"
        )
        ssn.explanations[job.uid] = Explanation(job.uid, k.REASON_NOT_ENOUGH_RESOURCES, message)
        log.info(
            "consolidated",
            job=job.uid,
            moved=[t.key for ts in carried.evicted.values() for t in ts],
            nodes=nodes,
            cost=plan.cost,
            status=answer.status,
            wall_ms=round(answer.wall_ms, 1),
        )
        return True


def _roomiest(ssn: Session, shape: GangShape, places: list[Domain]) -> list[Domain]:
    """The HyperNodes most likely to need the fewest moves first (most of the gang's first pods fitting in
    their free room), at most ``MAX_DOMAINS`` of them; anywhere stays anywhere."""
    if places == [ANYWHERE]:
        return places
    klass = shape.parts[0][0]
    fits = ssn.table.fit_counts(klass.vec, np.maximum(ssn.table.future_idle, 0))
    ranked = sorted(places, key=lambda place: (-int(fits[place[1]].sum()), place[0] or ""))
    return ranked[:MAX_DOMAINS]


def _waits_for_room(ssn: Session, job: JobInfo) -> bool:
    """Admitted, in a known queue, short of its gang, with pods to place."""
    return (
        not job.shadow
        and job.phase is PodGroupPhase.INQUEUE
        and job.queue in ssn.queues
        and job.uid in ssn.jobs
        and job.is_starving()
        and bool(to_place(ssn, job))
    )


def _refusal(ssn: Session, job: JobInfo) -> str:
    """Why the move model cannot plan for ``job`` (said in its explanation, never silently skipped)."""
    if job.sub_group_policies:
        return "spec.subGroupPolicy sets per-sub-group minimums the move model does not plan"
    pods = to_place(ssn, job)
    if any(t.claims_used for t in pods):
        return "its pods claim DRA devices, which the move model does not place"
    if any(ssn.is_dynamic(ssn.task_class(t)) for t in pods):
        return "its pods' predicates depend on other pods' places (pod affinity, shared GPU cards)"
    return ""


def keep_nominated(ssn: Session) -> None:
    """Put waiting gangs on the nodes their pods are nominated to, before allocate hands room out."""
    table = ssn.table
    for job in ssn.sorted_jobs(ssn.waiting_jobs()):
        if not _waits_for_room(ssn, job):
            continue
        queue = ssn.queues[job.queue]
        nominated = []
        for task in to_place(ssn, job):
            node = pod_nominated_node(task.pod)
            row = table.node_index.get(node) if node else None
            if row is not None:
                nominated.append((task, row))
        if not nominated:
            continue
        with ssn.statement() as stmt:
            rows: list[int] = []
            for task, row in nominated:
                klass = ssn.task_class(task)
                if task.status is not TaskStatus.PENDING or not ssn.predicate(klass).ok[row]:
                    continue
                if not ssn.allocatable(queue, task):
                    continue
                if (table.idle[row] >= klass.vec).all():
                    stmt.allocate(task, row)
                elif (table.future_idle[row] >= klass.vec).all():
                    stmt.pipeline(task, row)
                else:
                    continue
                rows.append(row)
            if ssn.job_ready(job):
                stmt.commit()
                log.info("consolidate: gang placed in the room kept for it", job=job.uid)
            elif ssn.job_pipelined(job):
                stmt.hold()
                nodes = sorted({ssn.nodes[r].name for r in rows})
                unready = job.min_available - job.ready_task_num
                ssn.explanations[job.uid] = Explanation(
                    job.uid,
                    k.REASON_NOT_ENOUGH_RESOURCES,
                    f"{unready}/{len(job.tasks)} tasks in gang unschedulable: consolidate: room kept on "
                    f"{_named(nodes)}, nominated for it, until the pods leaving them are gone",
                )
            else:
                stmt.discard()
