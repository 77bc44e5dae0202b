"""Queue quota limits: the hierarchy of queues and each queue's deserved, guarantee and capability.

This is the arithmetic behind the ``capacity`` plugin, kept apart from the session so that it can be tested
and reasoned about on its own. It answers one question per queue: within what bounds may this queue's
tasks hold resources? Usage against those bounds is ``capacity_ledger``'s job.

The model (Volcano's capacity plugin, stated in ``docs/queues.md``):

* Queues form a tree through ``spec.parent``; a queue without a parent hangs under ``root``. The root is
  virtual unless a Queue named ``root`` exists, and its limit is its own capability or else the cluster.
* ``capability`` is a hard ceiling per resource; a resource it does not name is not limited (so a queue that
  sets only ``nvidia.com/gpu`` is unconstrained on cpu and memory). A child inherits its parent's bound on
  resources it does not name and is capped by its parent on those it does: a child never exceeds its parent.
* ``guarantee`` is reserved for the queue: its siblings can never use it. Guarantees add up: a parent's
  guarantee is at least the sum of its children's, and the root's is that sum.
* ``real_capability`` is what the queue may hold at most right now: its parent's real capability less what
  its siblings are guaranteed, capped by its own capability.
* ``deserved`` is the queue's fair share, what reclaim gives back to it: at least its guarantee, at most its
  real capability. A resource it does not name is deserved as zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from volcano_py.api import constants as k
from volcano_py.resources import Resource, format_quantity, total


class Limit(Mapping[str, int]):
    """Upper bounds per resource. An absent resource is unbounded (in a ``Resource`` it would be zero)."""

    __slots__ = ("_bounds",)

    def __init__(self, bounds: Mapping[str, int] | None = None) -> None:
        self._bounds: dict[str, int] = dict(bounds or {})

    def __getitem__(self, name: str) -> int:
        return self._bounds[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._bounds)

    def __len__(self) -> int:
        return len(self._bounds)

    def bound(self, name: str) -> int | None:
        """The bound on ``name``, or None when it is unbounded."""
        return self._bounds.get(name)

    def min_with(self, other: Mapping[str, int]) -> Limit:
        """The tighter of two limits on every resource either bounds."""
        out = dict(self._bounds)
        for name, value in other.items():
            out[name] = min(out.get(name, value), value)
        return Limit(out)

    def inherit(self, parent: Limit) -> Limit:
        """This limit, taking ``parent``'s bound where it has none, and never above ``parent``."""
        return Limit({**parent._bounds, **self._bounds}).min_with(parent)

    def shifted(self, minus: Mapping[str, int], plus: Mapping[str, int]) -> Limit:
        """``self - minus + plus`` on bounded resources only (an unbounded resource stays unbounded)."""
        return Limit(
            {
                name: max(0, value - minus.get(name, 0) + plus.get(name, 0))
                for name, value in self._bounds.items()
            }
        )

    def cap(self, amounts: Resource) -> Resource:
        """``amounts`` cut down to this limit on every resource."""
        return Resource({name: min(v, self._bounds.get(name, v)) for name, v in amounts.items()})

    def excess(self, used: Mapping[str, int], names: Iterable[str]) -> dict[str, tuple[int, int]]:
        """For each of ``names`` on which ``used`` is above its bound: ``name -> (used, bound)``."""
        out: dict[str, tuple[int, int]] = {}
        for name in names:
            bound = self._bounds.get(name)
            if bound is not None and used.get(name, 0) > bound:
                out[name] = (used.get(name, 0), bound)
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Limit):
            return self._bounds == other._bounds
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._bounds.items()))

    def __repr__(self) -> str:
        body = ", ".join(f"{n}={format_quantity(n, self._bounds[n])}" for n in sorted(self._bounds))
        return f"Limit({body})"


UNLIMITED = Limit()


@dataclass(frozen=True, slots=True)
class QueueQuota:
    """What a Queue's spec says about quota; zero or unset amounts in ``capability`` mean "no bound"."""

    name: str
    parent: str = ""
    deserved: Resource | None = None
    guarantee: Resource = field(default_factory=Resource)
    capability: Resource | None = None
    reclaimable: bool = True
    priority: int = 0
    weight: int = 1


@dataclass(frozen=True, slots=True)
class QueueLimits:
    """One queue's effective bounds after the hierarchy has been applied."""

    name: str
    parent: str | None
    ancestors: tuple[str, ...]  # the root first, the parent last
    children: tuple[str, ...]
    deserved: Resource
    guarantee: Resource
    capability: Limit
    real_capability: Limit
    reclaimable: bool
    priority: int
    weight: int
    deserved_set: bool  # False for a best-effort queue (no deserved, no guarantee)

    @property
    def is_leaf(self) -> bool:
        return not self.children


@dataclass(frozen=True, slots=True)
class QuotaTree:
    """Every queue's limits. ``broken`` queues (bad parent, cycle) and their subtrees may hold nothing."""

    root: str
    queues: Mapping[str, QueueLimits]
    broken: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def chain(self, name: str) -> tuple[QueueLimits, ...]:
        """The queue then its ancestors, up to and including the root."""
        limits = self.queues[name]
        return (limits, *(self.queues[a] for a in reversed(limits.ancestors)))


def _describe(res: Mapping[str, int]) -> str:
    return ", ".join(f"{n}={format_quantity(n, res[n])}" for n in sorted(res)) or "nothing"


def _resolve_parents(specs: Mapping[str, QueueQuota], root: str) -> tuple[dict[str, str], dict[str, str]]:
    """Each queue's parent, and the queues that cannot be placed in the tree with why."""
    parents: dict[str, str] = {}
    broken: dict[str, str] = {}
    for name, spec in specs.items():
        if name == root:
            continue
        parent = spec.parent or root
        if parent == name:
            broken[name] = (
                f"queue {name!r}: spec.parent names the queue itself; set it to another queue or unset it"
            )
        elif parent != root and parent not in specs:
            broken[name] = (
                f"queue {name!r}: spec.parent {parent!r} is not a queue; create it, or unset spec.parent "
                f"to hang the queue under {root!r}"
            )
        else:
            parents[name] = parent
    unplaceable = set(broken)
    for name in list(parents):
        seen = [name]
        current = parents.get(name)
        while current is not None and current != root:
            if current in unplaceable:
                broken[name] = broken.get(name) or f"queue {name!r}: its ancestor {current!r} is broken"
                break
            if current in seen:
                loop = " -> ".join([*seen[seen.index(current) :], current])
                whose = "spec.parent" if current == name else "the spec.parent of its ancestors"
                broken[name] = f"queue {name!r}: {whose} forms a cycle ({loop}); make one a child of {root!r}"
                break
            seen.append(current)
            current = parents.get(current)
    for name in broken:
        parents.pop(name, None)
    return parents, broken


def build_tree(
    specs: Iterable[QueueQuota], cluster_total: Resource, *, root: str = k.ROOT_QUEUE
) -> QuotaTree:
    """Apply the hierarchy to every queue's spec. Configuration mistakes that still leave a usable tree are
    reported in ``problems``; a queue that cannot be placed in the tree at all lands in ``broken``."""
    by_name: dict[str, QueueQuota] = {}
    for spec in specs:
        if spec.name in by_name:
            raise ValueError(f"queue {spec.name!r} is listed twice; queue names are unique")
        by_name[spec.name] = spec
    root_spec = by_name.get(root, QueueQuota(name=root))
    parents, broken = _resolve_parents(by_name, root)
    children: dict[str, list[str]] = {root: []}
    for name in sorted(parents):
        children.setdefault(parents[name], []).append(name)
    problems: list[str] = []

    # Bottom-up: guarantees add up, so a parent's guarantee covers its children's.
    guarantee: dict[str, Resource] = {}

    def sum_guarantees(name: str) -> Resource:
        kids = children.get(name, [])
        own = by_name[name].guarantee if name in by_name else Resource()
        if kids:
            of_kids = total(sum_guarantees(c) for c in kids)
            if name != root and not own.is_zero() and not of_kids <= own:
                problems.append(
                    f"queue {name!r}: its children are guaranteed {_describe(of_kids)}, more than its own "
                    f"spec.guarantee {_describe(own)}; its guarantee is raised to cover them"
                )
            own = own.max_with(of_kids)
        guarantee[name] = own
        return own

    sum_guarantees(root)

    root_cap = Limit(dict(root_spec.capability)) if root_spec.capability else UNLIMITED
    root_real = root_cap.min_with(cluster_total) if root_spec.capability is None else root_cap
    out: dict[str, QueueLimits] = {}

    def place(name: str, ancestors: tuple[str, ...], capability: Limit, real: Limit) -> None:
        spec = by_name.get(name, QueueQuota(name=name))
        kids = tuple(children.get(name, ()))
        if name == root:
            deserved_raw = total(by_name.get(c, QueueQuota(name=c)).deserved or Resource() for c in kids)
            deserved_raw = deserved_raw.max_with(spec.deserved or Resource())
        else:
            deserved_raw = spec.deserved or Resource()
        deserved = real.cap(deserved_raw.max_with(guarantee[name]))
        out[name] = QueueLimits(
            name=name,
            parent=ancestors[-1] if ancestors else None,
            ancestors=ancestors,
            children=kids,
            deserved=deserved,
            guarantee=guarantee[name],
            capability=capability,
            real_capability=real,
            reclaimable=spec.reclaimable,
            priority=spec.priority,
            weight=spec.weight,
            deserved_set=spec.deserved is not None or not guarantee[name].is_zero() or bool(kids),
        )
        kids_guarantee = total(guarantee[c] for c in kids)
        kids_deserved = total(by_name[c].deserved or Resource() for c in kids)
        if kids and name != root and spec.deserved is not None and not kids_deserved <= spec.deserved:
            problems.append(
                f"queue {name!r}: its children deserve {_describe(kids_deserved)}, more than its own "
                f"spec.deserved {_describe(spec.deserved)}; they cannot all get their share at once"
            )
        for child in kids:
            child_spec = by_name[child]
            own = Limit(dict(child_spec.capability)) if child_spec.capability else UNLIMITED
            over = [n for n, v in own.items() if (b := capability.bound(n)) is not None and v > b]
            if over:
                problems.append(
                    f"queue {child!r}: spec.capability {_describe(own)} exceeds its parent {name!r}'s "
                    f"capability on {', '.join(sorted(over))}; the parent's bound applies"
                )
            child_capability = own.inherit(capability)
            child_real = real.shifted(kids_guarantee, guarantee[child]).min_with(child_capability)
            if child_capability.excess(guarantee[child], guarantee[child]):
                problems.append(
                    f"queue {child!r}: spec.guarantee {_describe(guarantee[child])} exceeds its capability "
                    f"{child_capability!r}; lower the guarantee or raise the capability"
                )
            place(child, (*ancestors, name), child_capability, child_real)

    place(root, (), root_cap, root_real)
    return QuotaTree(root=root, queues=out, broken=broken, problems=tuple(problems))
