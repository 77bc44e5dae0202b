"""Queue usage against quota: what a queue holds, and whether it may take, admit or give up more.

``QuotaLedger`` keeps, per queue, what its tasks hold (``allocated``), what admitted jobs still expect to get
(``inqueue``), what running jobs hold beyond their minimum (``elastic``) and what pods let past their
queue-allocation gate hold until they are placed (``reserved``). A charge to a queue is charged to
its ancestors too, so a parent's figures are the sum of its subtree. Every check walks the queue's chain up
to the root, so a child is never allowed what its parent cannot take.

The checks return a ``QuotaVerdict`` naming the queue and resources that stopped it, by how much, so a
pending PodGroup can say exactly which quota held it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from volcano_py.resources import Resource, format_quantity

from .capacity_math import Limit, QueueLimits, QuotaTree


@dataclass(frozen=True, slots=True)
class Shortfall:
    """One resource of one queue that blocks a decision: ``held`` against ``limit`` of kind ``bound``."""

    queue: str
    resource: str
    held: int
    limit: int
    bound: str

    def __str__(self) -> str:
        held = format_quantity(self.resource, self.held)
        limit = format_quantity(self.resource, self.limit)
        return f"queue {self.queue!r} {self.resource}: would hold {held}, {self.bound} is {limit}"


@dataclass(frozen=True, slots=True)
class QuotaVerdict:
    """The answer of a quota check; when not ``ok``, ``reason`` says why in words a user can act on."""

    ok: bool
    reason: str = ""
    shortfalls: tuple[Shortfall, ...] = ()

    @property
    def resources(self) -> tuple[str, ...]:
        return tuple(sorted({s.resource for s in self.shortfalls}))


ALLOWED = QuotaVerdict(ok=True)


def _refused(prefix: str, shortfalls: list[Shortfall]) -> QuotaVerdict:
    return QuotaVerdict(
        ok=False, reason=f"{prefix}: " + "; ".join(map(str, shortfalls)), shortfalls=tuple(shortfalls)
    )


def _over(
    queue: str, used: Mapping[str, int], limit: Limit, names: Mapping[str, int], bound: str
) -> list[Shortfall]:
    return [
        Shortfall(queue, name, held, cap, bound)
        for name, (held, cap) in sorted(limit.excess(used, [n for n, v in names.items() if v > 0]).items())
    ]


class QuotaLedger:
    """Per-queue usage over a ``QuotaTree``, changed through charge, release, admit and stretch only."""

    def __init__(self, tree: QuotaTree) -> None:
        self.tree = tree
        self._allocated: dict[str, Resource] = {name: Resource() for name in tree.queues}
        self._inqueue: dict[str, Resource] = {name: Resource() for name in tree.queues}
        self._elastic: dict[str, Resource] = {name: Resource() for name in tree.queues}
        self._reserved: dict[str, Resource] = {name: Resource() for name in tree.queues}

    def _chain_names(self, queue: str) -> list[str]:
        limits = self.tree.queues.get(queue)
        return [] if limits is None else [queue, *limits.ancestors]

    def _add(self, book: dict[str, Resource], queue: str, amount: Resource, sign: int) -> None:
        for name in self._chain_names(queue):
            book[name] = book[name] + amount if sign > 0 else book[name] - amount

    def charge(self, queue: str, amount: Resource) -> None:
        """A task of ``queue`` now holds ``amount`` (allocated, pipelined or running)."""
        self._add(self._allocated, queue, amount, 1)

    def release(self, queue: str, amount: Resource) -> None:
        """A task of ``queue`` no longer holds ``amount`` (evicted, or its allocation undone)."""
        self._add(self._allocated, queue, amount, -1)

    def admit(self, queue: str, amount: Resource) -> None:
        """A job of ``queue`` was admitted (Inqueue) and still expects ``amount`` to reach its minimum."""
        self._add(self._inqueue, queue, amount, 1)

    def stretch(self, queue: str, amount: Resource) -> None:
        """A running job of ``queue`` holds ``amount`` beyond its minimum: reclaimable without breaking it."""
        self._add(self._elastic, queue, amount, 1)

    def reserve(self, queue: str, amount: Resource) -> None:
        """A pod of ``queue`` was admitted through its queue-allocation gate and is not placed yet: its room
        is held, so no other pod is let in on it meanwhile."""
        self._add(self._reserved, queue, amount, 1)

    def unreserve(self, queue: str, amount: Resource) -> None:
        self._add(self._reserved, queue, amount, -1)

    def allocated(self, queue: str) -> Resource:
        return self._allocated[queue]

    def inqueue(self, queue: str) -> Resource:
        return self._inqueue[queue]

    def limits(self, queue: str) -> QueueLimits:
        return self.tree.queues[queue]

    # --- derived figures ----------------------------------------------------------------------------

    def share(self, queue: str) -> float:
        """The largest ``allocated / deserved`` over the resources the queue deserves.

        A best-effort queue (nothing deserved) is at 1, so every queue below its share comes before it."""
        limits = self.tree.queues[queue]
        if not limits.deserved_set or limits.deserved.is_zero():
            return 1.0
        held = self._allocated[queue]
        return max(held.amount(n) / v for n, v in limits.deserved.items())

    def over_deserved(self, queue: str) -> bool:
        return self.share(queue) > 1.0

    def headroom_to_deserved(self, queue: str) -> Resource:
        """How much more the queue deserves than it holds, per resource it deserves."""
        return (self.tree.queues[queue].deserved - self._allocated[queue]).clamp_min_zero()

    # --- checks -------------------------------------------------------------------------------------

    def _unusable(self, queue: str) -> QuotaVerdict | None:
        if queue in self.tree.broken:
            return QuotaVerdict(ok=False, reason=self.tree.broken[queue])
        limits = self.tree.queues.get(queue)
        if limits is None:
            return QuotaVerdict(
                ok=False, reason=f"queue {queue!r} does not exist; create it or submit to another"
            )
        if not limits.is_leaf:
            kids = ", ".join(limits.children)
            return QuotaVerdict(
                ok=False, reason=f"queue {queue!r} has child queues ({kids}); submit jobs to a leaf queue"
            )
        return None

    def allocatable(self, queue: str, request: Resource, *, own: Resource | None = None) -> QuotaVerdict:
        """May a task asking ``request`` start in ``queue``? Within real capability up the whole chain, with
        the room reserved for gate-admitted pods counted as held; ``own`` is the task's own reservation, if
        it has one (its room is the one it would take)."""
        unusable = self._unusable(queue)
        if unusable is not None:
            return unusable
        shortfalls: list[Shortfall] = []
        reserved = False
        for limits in self.tree.chain(queue):
            held_back = self._reserved[limits.name] - own if own is not None else self._reserved[limits.name]
            reserved = reserved or not held_back.is_zero()
            would = self._allocated[limits.name] + held_back + request
            shortfalls += _over(limits.name, would, limits.real_capability, request, "capability")
        if not shortfalls:
            return ALLOWED
        verdict = _refused("queue quota exceeded", shortfalls)
        if reserved:
            reason = (
                f"{verdict.reason} (counting the room held for pods let past their queue-allocation gate)"
            )
            return QuotaVerdict(ok=False, reason=reason, shortfalls=verdict.shortfalls)
        return verdict

    def enqueueable(self, queue: str, minimum: Resource) -> QuotaVerdict:
        """May a job needing ``minimum`` to start be admitted?

        Admitted jobs count as if they already held their minimum; what running jobs hold beyond theirs does
        not, as it can be taken back. The job must fit the real capability of the queue and every ancestor,
        except where, on a resource the queue deserves, the queue with the job stays within its deserved
        share: reclaim can make that room, and holding the job back would keep reclaim from ever running
        (a departure from Volcano, where such a job waits forever behind over-served siblings).
        """
        unusable = self._unusable(queue)
        if unusable is not None:
            return unusable
        shortfalls: list[Shortfall] = []
        for limits in self.tree.chain(queue):
            shortfalls += _over(
                limits.name,
                self._expected(limits.name) + minimum,
                limits.real_capability,
                minimum,
                "capability",
            )
        if not shortfalls:
            return ALLOWED
        limits = self.tree.queues[queue]
        would = self._expected(queue) + minimum
        reclaimable = {
            name
            for name, amount in minimum.items()
            if amount > 0
            and limits.deserved.amount(name) > 0
            and would.amount(name) <= limits.deserved.amount(name)
        }
        own = _over(queue, would, limits.real_capability, minimum, "capability")
        if not own and all(s.resource in reclaimable for s in shortfalls):
            return ALLOWED
        return _refused("queue quota insufficient", shortfalls)

    def _expected(self, queue: str) -> Resource:
        return (self._allocated[queue] + self._inqueue[queue] - self._elastic[queue]).clamp_min_zero()

    def can_reclaim(self, queue: str, request: Resource) -> QuotaVerdict:
        """May ``queue`` evict other queues' tasks for ``request``? Only while it stays within its own real
        capability and, on at least one resource it asks for, within what it deserves.

        Its ancestors' capabilities are not checked here: the victims may come from under the same parent,
        so the reclaim action checks ``allocatable`` after it has simulated the evictions.
        """
        unusable = self._unusable(queue)
        if unusable is not None:
            return unusable
        limits = self.tree.queues[queue]
        would = self._allocated[queue] + request
        over = _over(queue, would, limits.real_capability, request, "capability")
        if over:
            return _refused("queue quota exceeded", over)
        for name, amount in request.items():
            if amount > 0 and would.amount(name) <= limits.deserved.amount(name):
                return ALLOWED
        shortfalls = [
            Shortfall(queue, name, would.amount(name), limits.deserved.amount(name), "deserved")
            for name, amount in sorted(request.items())
            if amount > 0
        ]
        return _refused("queue already holds its deserved share", shortfalls)

    def can_give_up(self, victim_queue: str, amount: Resource, reclaimer_queue: str) -> QuotaVerdict:
        """May ``amount`` be reclaimed from ``victim_queue`` for a task of ``reclaimer_queue``?

        Every queue on the victim's side below the two queues' common ancestor must be reclaimable, keep its
        guarantee after giving ``amount`` up, and hold more than it deserves on some resource ``amount``
        uses (a resource the queue deserves nothing of is always above its share).
        """
        if victim_queue not in self.tree.queues or reclaimer_queue not in self.tree.queues:
            return QuotaVerdict(ok=False, reason=f"queue {victim_queue!r} or {reclaimer_queue!r} is unknown")
        shared = {reclaimer_queue, *self.tree.queues[reclaimer_queue].ancestors}
        if victim_queue in shared:
            return QuotaVerdict(
                ok=False, reason=f"queue {victim_queue!r} is the reclaimer's own queue or parent"
            )
        for limits in self.tree.chain(victim_queue):
            if limits.name in shared:
                break
            name = limits.name
            if not limits.reclaimable:
                return QuotaVerdict(ok=False, reason=f"queue {name!r} has spec.reclaimable: false")
            held = self._allocated[name]
            after = held - amount
            below = [
                Shortfall(name, r, after.amount(r), g, "guarantee")
                for r, g in sorted(limits.guarantee.items())
                if amount.amount(r) > 0 and after.amount(r) < g
            ]
            if below:
                return _refused("reclaim would break a guarantee", below)
            relevant = [r for r, v in amount.items() if v > 0 and limits.deserved.amount(r) > 0]
            if relevant and not any(held.amount(r) > limits.deserved.amount(r) for r in relevant):
                at_share = [
                    Shortfall(name, r, held.amount(r), limits.deserved.amount(r), "deserved")
                    for r in relevant
                ]
                return _refused("queue is not above its deserved share", at_share)
        return ALLOWED
