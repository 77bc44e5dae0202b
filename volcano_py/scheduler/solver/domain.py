"""One gang inside one candidate domain: node classes, per-node fill patterns, the objective, greedy binpack.

Inside a domain, slots with the same free and allocatable vectors and the same predicate outcome for each of
the gang's tasks merge into one class, since any of their nodes will do. A pattern is what one node receives
(a pod count per task); a choice is "n nodes of class m get pattern p". Everything the solver optimises is
linear in those counts: pods placed, stranded and fragmented GPUs (each pattern's deltas are known up
front) and nodes touched. The greedy binpack here is Volcano's default behaviour and the CP-SAT warm start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from volcano_py.resources import CPU, GPU, MEMORY
from volcano_py.scheduler.solver.fragmentation import StrandedGpus, Vector
from volcano_py.scheduler.solver.problem import Gang
from volcano_py.scheduler.solver.slots import ClusterView

# Beyond this many mixed patterns per class, only single-task patterns are offered (still exact per node).
PATTERN_LIMIT = 96
BINPACK_DIMS = (CPU, MEMORY, GPU)


class _TooMany(Exception):
    pass


def fit_count(free: Vector, request: Vector) -> int:
    best: int | None = None
    for have, want in zip(free, request, strict=True):
        if want > 0:
            n = have // want
            best = n if best is None or n < best else best
    return best if best is not None else 0


@dataclass(slots=True)
class MergedClass:
    slots: list[int]
    size: int
    free: Vector
    alloc: Vector
    allowed: tuple[bool, ...]
    patterns: list[Vector] = field(default_factory=list)
    pattern_index: dict[Vector, int] = field(default_factory=dict)
    strand_delta: list[int] = field(default_factory=list)
    frag_delta: list[int] = field(default_factory=list)
    # The gang's pair scores earned by the pods of each pattern (0 without pair scores).
    pair_gain: list[int] = field(default_factory=list)
    base_stranded: int = 0
    base_fragmented: int = 0

    @property
    def idle(self) -> bool:
        return self.free == self.alloc


# A choice: (merged class index, pattern index) -> number of nodes.
Choice = dict[tuple[int, int], int]


@dataclass(slots=True)
class GangDomain:
    """The gang's view of one domain: merged classes with their patterns and stranded deltas."""

    gang: Gang
    requests: list[Vector]
    classes: list[MergedClass]
    measure: StrandedGpus
    dims: Sequence[str]
    # (task index, task index, score), each unordered pair once.
    pairs: Sequence[tuple[int, int, int]] = ()

    def gain(self, pattern: Vector) -> int:
        """What a node receiving ``pattern`` earns from the pair scores: per pair of pods there."""
        total = 0
        for i, j, score in self.pairs:
            together = pattern[i] * (pattern[i] - 1) // 2 if i == j else pattern[i] * pattern[j]
            total += score * together
        return total

    def add_pattern(self, m: int, pattern: Vector) -> int:
        cls = self.classes[m]
        index = cls.pattern_index.get(pattern)
        if index is None:
            used = [
                sum(k * r[d] for k, r in zip(pattern, self.requests, strict=True))
                for d in range(len(self.dims))
            ]
            after = tuple(f - u for f, u in zip(cls.free, used, strict=True))
            index = len(cls.patterns)
            cls.patterns.append(pattern)
            cls.pattern_index[pattern] = index
            cls.strand_delta.append(self.measure.of(after, True) - cls.base_stranded)
            cls.frag_delta.append(self.measure.fragmented(after) - cls.base_fragmented)
            cls.pair_gain.append(self.gain(pattern))
        return index

    def signature(self) -> tuple[object, ...]:
        """Equal for two domains whose nodes are interchangeable class by class."""
        return tuple(sorted((c.free, c.alloc, c.allowed, c.size) for c in self.classes))

    def used(self, m: int, p: int) -> Vector:
        pattern = self.classes[m].patterns[p]
        return tuple(
            sum(k * r[d] for k, r in zip(pattern, self.requests, strict=True)) for d in range(len(self.dims))
        )

    def score(self, choice: Choice) -> tuple[int, int, int, int, int]:
        """Lower is better: (-pods placed, -pair scores earned, stranded delta, fragmented delta, nodes
        touched + idle opened)."""
        pods = gained = stranded = fragmented = nodes = 0
        for (m, p), n in choice.items():
            cls = self.classes[m]
            pods += n * sum(cls.patterns[p])
            gained += n * cls.pair_gain[p]
            stranded += n * cls.strand_delta[p]
            fragmented += n * cls.frag_delta[p]
            nodes += n * (2 if cls.idle else 1)
        return (-pods, -gained, stranded, fragmented, nodes)

    def satisfies_gang(self, choice: Choice) -> bool:
        per_task = [0] * len(self.requests)
        for (m, p), n in choice.items():
            for t, k in enumerate(self.classes[m].patterns[p]):
                per_task[t] += n * k
        tasks = self.gang.tasks
        return (
            sum(per_task) >= self.gang.min_available
            and all(per_task[t] >= tasks[t].min_member for t in range(len(tasks)))
            and all(per_task[t] <= tasks[t].count for t in range(len(tasks)))
        )


def _enumerate(free: Vector, requests: list[Vector], caps: list[int]) -> list[Vector]:
    out: list[Vector] = []
    count = len(requests)

    def rec(t: int, remaining: Vector, current: tuple[int, ...]) -> None:
        if t == count:
            if any(current):
                out.append(current)
                if len(out) > PATTERN_LIMIT:
                    raise _TooMany
            return
        top = min(caps[t], fit_count(remaining, requests[t])) if caps[t] else 0
        for k in range(top + 1):
            left = tuple(f - k * r for f, r in zip(remaining, requests[t], strict=True))
            rec(t + 1, left, (*current, k))

    try:
        rec(0, free, ())
    except _TooMany:
        out = []
        for t in range(count):
            for k in range(1, min(caps[t], fit_count(free, requests[t])) + 1):
                out.append(tuple(k if i == t else 0 for i in range(count)))
    return out


def build_domain(
    view: ClusterView,
    gang: Gang,
    slot_indices: Sequence[int],
    measure: StrandedGpus,
    allowed_rows: Sequence[tuple[bool, ...]],
) -> GangDomain:
    """Merge the domain's slots into classes; ``allowed_rows[slot]`` says which tasks fit one pod there."""
    requests = [tuple(t.request.amount(d) for d in view.dims) for t in gang.tasks]
    groups: dict[tuple[Vector, Vector, tuple[bool, ...]], MergedClass] = {}
    for i in slot_indices:
        slot = view.slots[i]
        if not slot.nodes:
            continue
        allowed = allowed_rows[i]
        if not any(allowed):
            continue
        key = (slot.free, slot.alloc, allowed)
        cls = groups.get(key)
        if cls is None:
            cls = MergedClass([], 0, slot.free, slot.alloc, allowed)
            cls.base_stranded = measure.of(slot.free, slot.free != slot.alloc)
            cls.base_fragmented = measure.fragmented(slot.free)
            groups[key] = cls
        cls.slots.append(i)
        cls.size += len(slot.nodes)
    index = {t.name: i for i, t in enumerate(gang.tasks)}
    merged: dict[tuple[int, int], int] = {}
    for left, right, score in gang.pair_scores:
        i, j = sorted((index[left], index[right]))
        merged[(i, j)] = score  # (a, b) and (b, a) state one wish
    pairs = [(i, j, score) for (i, j), score in sorted(merged.items()) if score]
    domain = GangDomain(gang, requests, list(groups.values()), measure, view.dims, pairs)
    for m, cls in enumerate(domain.classes):
        caps = [t.count if ok else 0 for t, ok in zip(gang.tasks, cls.allowed, strict=True)]
        for pattern in _enumerate(cls.free, requests, caps):
            domain.add_pattern(m, pattern)
    return domain


def _binpack_score(free: Vector, alloc: Vector, request: Vector, dims_idx: Sequence[int]) -> float:
    total = 0.0
    weight = 0
    for d in dims_idx:
        if alloc[d] > 0:
            total += (alloc[d] - free[d] + request[d]) / alloc[d]
            weight += 1
    return total / weight if weight else 0.0


def greedy_choice(domain: GangDomain) -> Choice | None:
    """Volcano-style binpack: each pod to the feasible node that ends up most used, until the gang is placed.

    Filling one node to capacity before moving on is the same as placing pod by pod, because the node that
    just received a pod only becomes more used and so stays the best-scored node while it still fits.
    """
    dims_idx = [i for i, d in enumerate(domain.dims) if d in BINPACK_DIMS]
    classes = domain.classes
    untouched = [c.size for c in classes]
    touched: list[tuple[int, list[int], Vector]] = []  # (class, pattern so far, free now), one per node
    for t, task in enumerate(domain.gang.tasks):
        request = domain.requests[t]
        ranked = sorted(
            (m for m, c in enumerate(classes) if c.allowed[t] and fit_count(c.free, request) > 0),
            key=lambda m: (-_binpack_score(classes[m].free, classes[m].alloc, request, dims_idx), m),
        )
        remaining = task.count
        # Touched nodes that still take a pod of this task, in the order they were touched; a node filled up
        # leaves the list, so a gang of n pods costs O(n) node visits, not O(n^2).
        fitting = [
            j
            for j, (m, _, free) in enumerate(touched)
            if classes[m].allowed[t] and fit_count(free, request) > 0
        ]
        while remaining > 0:
            best_score = -1.0
            best: tuple[str, int, int] | None = None
            for j in fitting:
                m, _, free = touched[j]
                k = fit_count(free, request)
                s = _binpack_score(free, classes[m].alloc, request, dims_idx)
                if s > best_score:
                    best_score, best = s, ("touched", j, k)
            for m in ranked:
                if untouched[m] > 0:
                    s = _binpack_score(classes[m].free, classes[m].alloc, request, dims_idx)
                    if s > best_score:
                        best_score, best = s, ("new", m, fit_count(classes[m].free, request))
                    break
            if best is None:
                break
            kind, where, k = best
            q = min(k, remaining)
            if kind == "new":
                untouched[where] -= 1
                touched.append((where, [0] * len(domain.requests), classes[where].free))
                where = len(touched) - 1
                if q < k:
                    fitting.append(where)
            elif q == k:
                fitting.remove(where)
            m, pattern, free = touched[where]
            pattern[t] += q
            touched[where] = (m, pattern, tuple(f - q * r for f, r in zip(free, request, strict=True)))
            remaining -= q
    choice: Choice = {}
    for m, pattern, _ in touched:
        p = domain.add_pattern(m, tuple(pattern))
        choice[(m, p)] = choice.get((m, p), 0) + 1
    return choice if choice and domain.satisfies_gang(choice) else None
