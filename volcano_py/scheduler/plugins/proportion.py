"""proportion: queues share the cluster by weight (water-filling), within capability and with guarantees.

Queue order: the smallest share of its deserved goes first. Overused: holding at least its deserved on
every resource. Allocatable: one more task must stay within deserved on the resources it asks for.
Enqueueable: ``minResources`` plus what the queue holds and has admitted must fit its real capability.
Preemptive (reclaim): the queue stays within its deserved share; reclaimable: victims' queues hold more
than they deserve and keep their guarantee.

With ``recentUsage.halfLife`` set, shares remember: a queue whose recent usage (``api/recent_usage``)
exceeds its weight's fraction of the cluster keeps only part of its weight (``recentUsage.weight`` is how
strongly), and queues with equal shares go in order of recent usage per weight, least first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from volcano_py.api.recent_usage import read_recent_usage, usage_weight_factor
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import Resource, Tally, count_into, format_quantity

from ..framework.arguments import Arguments, ConfError
from ..framework.extension import Vote
from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo, timestamp
from .shares import QueueDemand, Vec, leq, real_capability, share, water_fill


def _vec(resource: Resource | None) -> Vec:
    return {k: float(v) for k, v in (resource or {}).items()}


def _pairs(task: TaskInfo) -> tuple[tuple[str, int], ...]:
    """The task's request as pairs; its class caches them, which keeps per-pod bookkeeping cheap."""
    klass = task.klass
    return klass.items if klass is not None else tuple(task.resreq.items())


@dataclass(slots=True)
class _Attr:
    queue: QueueInfo
    allocated: Vec = field(default_factory=dict)
    request: Vec = field(default_factory=dict)
    inqueue: Vec = field(default_factory=dict)
    elastic: Vec = field(default_factory=dict)
    deserved: Vec = field(default_factory=dict)
    capability: Vec = field(default_factory=dict)
    share: float = 0.0
    # Recent usage per unit of entitlement (0 with recent usage off): orders queues of equal share.
    recent: float = 0.0


def _add(into: Vec, resource: Resource, sign: int = 1) -> None:
    for k, v in resource.items():
        into[k] = into.get(k, 0.0) + sign * v


class ProportionPlugin:
    name = "proportion"

    def __init__(self, arguments: Arguments) -> None:
        self.memory = RecentUsageArguments.parse(arguments)
        self.attrs: dict[str, _Attr] = {}
        self.jobs: dict[str, JobInfo] = {}
        self.total: Vec = {}

    def on_session_open(self, ssn: Session) -> None:
        total = self.total = _vec(ssn.total)
        attrs = {name: _Attr(queue) for name, queue in ssn.queues.items()}
        self.jobs = ssn.snapshot.jobs
        # Per queue, how many jobs hold each distinct amount: summed as count times amount, exactly.
        held: dict[str, Tally] = {}
        steady = ssn.steady
        for job in ssn.unsettled:  # the steady ones are in the per-queue sums below
            attr = attrs.get(job.queue)
            if attr is None:
                continue
            allocated = job.allocated
            tally = held.get(job.queue)
            if tally is None:
                tally = held[job.queue] = {}
            count_into(tally, allocated)
            # As Volcano: every job's pending pods ask for their queue's share, a Pending PodGroup's too, so a
            # job that enqueue admits can be placed in the same session (when its pods already exist). Only
            # the waiting part is summed per job; what is held is added once per queue below.
            if job.by_status.get(TaskStatus.PENDING):
                _add(attr.request, job.pending_request)
            if job.min_resources is not None:
                if job.phase is PodGroupPhase.INQUEUE:
                    _add(attr.inqueue, job.deduct_gated((job.min_resources - allocated).clamp_min_zero()))
                elif job.phase is PodGroupPhase.RUNNING:
                    _add(attr.elastic, (allocated - job.min_resources).clamp_min_zero())
        if steady is not None:
            for queue_name, counts in steady.held.items():
                if queue_name in attrs:
                    for counted in counts.values():
                        _add(attrs[queue_name].allocated, counted.resource, counted.n)
            for queue_name, counts in steady.elastic.items():
                if queue_name in attrs:
                    for counted in counts.values():
                        _add(attrs[queue_name].elastic, counted.resource, counted.n)
        for queue_name, counts in held.items():
            for counted in counts.values():
                _add(attrs[queue_name].allocated, counted.resource, counted.n)
        for attr in attrs.values():
            if attr.queue.held_elsewhere:  # the other scheduler's pods in this queue (agent or batch)
                _add(attr.allocated, attr.queue.held_elsewhere)
        for attr in attrs.values():
            # Amounts are whole numbers (milli-units and bytes), so the sums are exact in any order.
            for name, amount in attr.allocated.items():
                attr.request[name] = attr.request.get(name, 0.0) + amount
        weights = self.memory.weights(attrs, total, timestamp(ssn.now)) if self.memory.half_life else {}
        demands = [
            QueueDemand(
                a.queue.name,
                weights.get(a.queue.name, a.queue.weight),
                a.request,
                _vec(a.queue.capability),
                _vec(a.queue.guarantee),
            )
            for a in attrs.values()
        ]
        guarantees = {d.name: d.guarantee for d in demands}
        deserved = water_fill(total, demands)
        for demand in demands:
            attr = attrs[demand.name]
            attr.deserved = deserved[demand.name]
            attr.capability = real_capability(total, guarantees, demand)
            attr.share = share(attr.allocated, attr.deserved)
        self.attrs = attrs

    def queue_deserved(self, queue: QueueInfo) -> Resource | None:
        attr = self.attrs.get(queue.name)
        return Resource({k: int(v) for k, v in attr.deserved.items()}) if attr else None

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        la, ra = self.attrs[left.name], self.attrs[right.name]
        ls, rs = (la.share, la.recent), (ra.share, ra.recent)
        return (ls > rs) - (ls < rs)

    def overused(self, queue: QueueInfo) -> bool:
        attr = self.attrs[queue.name]
        return leq(attr.deserved, attr.allocated)

    def _over(self, queue: QueueInfo, request: Resource, base: Vec, limit: Vec) -> list[str]:
        return [k for k, v in request.items() if base.get(k, 0.0) + v > limit.get(k, 0.0) + 1e-6]

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        if not queue.open:
            return False  # as Volcano's proportion: a Closed or Closing queue places no more pods
        attr = self.attrs[queue.name]
        base, limit = attr.allocated, attr.deserved
        for k, v in _pairs(task):  # noqa: SIM110 - a loop, not all(genexpr): asked for every pod placed
            if base.get(k, 0.0) + v > limit.get(k, 0.0) + 1e-6:
                return False
        return True

    def explain_allocatable(self, queue: QueueInfo, task: TaskInfo) -> str | None:
        if not queue.open:
            return f"queue {queue.name} is {queue.state}"
        attr = self.attrs[queue.name]
        parts = []
        for name in self._over(queue, task.resreq, attr.allocated, attr.deserved):
            capped = attr.deserved.get(name, 0.0) >= attr.capability.get(name, 0.0) - 1e-6
            limit = "capability" if capped else "deserved share"
            parts.append(self._say(queue, limit, name, attr.allocated, task.resreq, attr.deserved))
        return "; ".join(parts) or None

    def _say(
        self,
        queue: QueueInfo,
        limit: str,
        name: str,
        base: Vec,
        ask: Resource,
        cap: Vec,
        *,
        held: str = "allocated",
    ) -> str:
        if self.total.get(name, 0.0) <= 0:
            return f"no node in the cluster offers {name}"
        have = format_quantity(name, int(base.get(name, 0.0)))
        asked = format_quantity(name, ask.amount(name))
        most = format_quantity(name, int(cap.get(name, 0.0)))
        return f"queue {queue.name} over {limit} on {name}: {have} {held} + {asked} requested > {most}"

    def _enqueue_base(self, attr: _Attr) -> Vec:
        names = set(attr.allocated) | set(attr.inqueue) | set(attr.elastic)
        return {
            k: attr.allocated.get(k, 0.0) + attr.inqueue.get(k, 0.0) - attr.elastic.get(k, 0.0) for k in names
        }

    def job_enqueueable(self, job: JobInfo) -> Vote:
        attr = self.attrs.get(job.queue)
        if attr is None or job.min_resources is None:
            return Vote.ABSTAIN
        over = self._over(attr.queue, job.min_request, self._enqueue_base(attr), attr.capability)
        return Vote.REJECT if over else Vote.PERMIT

    def explain_enqueue(self, job: JobInfo) -> str | None:
        attr = self.attrs.get(job.queue)
        if attr is None:
            return None
        base = self._enqueue_base(attr)
        over = self._over(attr.queue, job.min_request, base, attr.capability)
        parts = [
            self._say(
                attr.queue,
                "capability",
                n,
                base,
                job.min_request,
                attr.capability,
                held="allocated or admitted",
            )
            for n in over
        ]
        return "; ".join(parts) or None

    def job_enqueued(self, job: JobInfo) -> None:
        attr = self.attrs.get(job.queue)
        if attr is not None:
            _add(attr.inqueue, job.deduct_gated(job.min_request))

    def preemptive(self, queue: QueueInfo, task: TaskInfo) -> bool:
        """May ``queue`` reclaim for one more pod? Only while it stays within its deserved share."""
        attr = self.attrs.get(queue.name)
        return attr is not None and not self._over(queue, task.resreq, attr.allocated, attr.deserved)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        """Of ``reclaimees``, those whose queue holds more than it deserves on a resource the pod uses and
        keeps its guarantee without the pod, judged as if the ones before were already taken."""
        held: dict[str, Vec] = {}
        victims = []
        for task in reclaimees:
            attr = self._attr_of(task)
            if attr is None:
                continue
            has = held.setdefault(attr.queue.name, dict(attr.allocated))
            above = any(has.get(k, 0.0) > attr.deserved.get(k, 0.0) + 1e-6 for k in task.resreq)
            keeps = all(
                has.get(k, 0.0) - task.resreq.amount(k) >= g - 1e-6 for k, g in attr.queue.guarantee.items()
            )
            if above and keeps:
                _add(has, task.resreq, -1)
                victims.append(task)
        return victims

    def _attr_of(self, task: TaskInfo) -> _Attr | None:
        job = self.jobs.get(task.job_id or "")
        return self.attrs.get(job.queue) if job is not None else None

    def _update(self, task: TaskInfo, sign: int) -> None:
        attr = self._attr_of(task)
        if attr is not None:
            allocated = attr.allocated
            for k, v in _pairs(task):
                allocated[k] = allocated.get(k, 0.0) + sign * v
            attr.share = share(allocated, attr.deserved)

    def on_allocate(self, task: TaskInfo) -> None:
        self._update(task, 1)

    def on_deallocate(self, task: TaskInfo) -> None:
        self._update(task, -1)


@dataclass(frozen=True, slots=True)
class RecentUsageArguments:
    """``recentUsage.halfLife`` (a duration; absent: shares forget) and ``recentUsage.weight`` (how strongly
    recent use lowers a queue's weight, default 1: a queue that used twice its entitlement keeps half)."""

    half_life: float = 0.0
    strength: float = 1.0

    @classmethod
    def parse(cls, arguments: Arguments, *known: str) -> RecentUsageArguments:
        arguments.check_known({HALF_LIFE, STRENGTH, *known})
        half_life = arguments.get_duration(HALF_LIFE, None)
        strength = arguments.get_float(STRENGTH, 1.0, minimum=0.0)
        if half_life is None and STRENGTH in arguments.values:
            raise ConfError(f"{arguments.owner}: {STRENGTH} needs {HALF_LIFE}; set both or neither")
        return cls(half_life.total_seconds() if half_life else 0.0, strength)

    def weights(self, attrs: dict[str, _Attr], total: Vec, now: float) -> dict[str, float]:
        """Each queue's weight after its recent usage, and its ``recent`` order key set on ``attrs``."""
        all_weight = sum(a.queue.weight for a in attrs.values()) or 1
        out: dict[str, float] = {}
        for name, attr in attrs.items():
            ledger = read_recent_usage(attr.queue.annotations)
            used = ledger.decayed_to(now, self.half_life).fraction(total, self.half_life) if ledger else 0.0
            entitled = attr.queue.weight / all_weight
            attr.recent = used / entitled
            out[name] = attr.queue.weight * usage_weight_factor(used, entitled, self.strength)
        return out


HALF_LIFE = "recentUsage.halfLife"
STRENGTH = "recentUsage.weight"
