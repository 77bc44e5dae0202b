"""Resource vectors: the immutable ``Resource`` and the sums the scheduler takes of many of them.

Amounts are canonical integers (see ``quantities``), so adding, subtracting and comparing never round, and a
vector can key a dict: the session's task classes are keyed by their request. Jobs intern what they hold, so
the ``Tally`` helpers sum thousands of holdings as a few counted vectors.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Final

from .quantities import CPU, GPU, MEMORY, PODS, amount_of, format_quantity, is_quota_only


class Resource(Mapping[str, int]):
    """An immutable vector of resource amounts in canonical units; absent names are zero.

    ``a <= b`` holds when every amount of ``a`` is at most the same amount of ``b``, which is what "fits"
    means. Zero entries are never stored, so two equal vectors compare and hash equal.
    """

    __slots__ = ("_amounts", "_hash")

    def __init__(self, amounts: Mapping[str, int] | None = None) -> None:
        self._amounts: dict[str, int] = {k: v for k, v in (amounts or {}).items() if v}
        # Requests key the session's task classes and are hashed on every lookup: hash once (immutable).
        self._hash: int | None = None

    @classmethod
    def parse(cls, quantities: Mapping[str, str | int | float | None] | None) -> Resource:
        """From a Kubernetes resource list such as ``{"cpu": "500m", "nvidia.com/gpu": 8}``."""
        # ``cpu:`` with no value: the API server drops the null, so do we.
        return cls(
            {name: amount_of(name, value) for name, value in (quantities or {}).items() if value is not None}
        )

    @classmethod
    def of(
        cls,
        *,
        cpu: str | int | float = 0,
        memory: str | int | float = 0,
        pods: int = 0,
        gpu: str | int | float = 0,
        **scalars: str | int | float,
    ) -> Resource:
        """Build from human quantities: ``Resource.of(cpu="500m", memory="4Gi", gpu=8)``."""
        quantities: dict[str, str | int | float] = {CPU: cpu, MEMORY: memory, PODS: pods, GPU: gpu}
        quantities.update(scalars)
        return cls.parse(quantities)

    def to_quantities(self) -> dict[str, str]:
        """Back to a Kubernetes resource list, names sorted."""
        return {name: format_quantity(name, self._amounts[name]) for name in sorted(self._amounts)}

    # Mapping protocol: missing names read as zero through ``get`` and ``amount``.
    def __getitem__(self, name: str) -> int:
        return self._amounts[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._amounts)

    def __len__(self) -> int:
        return len(self._amounts)

    # The dict's own views and lookups: Mapping's generic ones go through __getitem__ per entry, and these
    # are read for every task of every snapshot (the views are read-only, so immutability holds).
    def items(self) -> ItemsView[str, int]:
        return self._amounts.items()

    def keys(self) -> KeysView[str]:
        return self._amounts.keys()

    def values(self) -> ValuesView[int]:
        return self._amounts.values()

    def __contains__(self, name: object) -> bool:
        return name in self._amounts

    def amount(self, name: str) -> int:
        return self._amounts.get(name, 0)

    def __add__(self, other: Mapping[str, int]) -> Resource:
        out = dict(self._amounts)
        for name, value in other.items():
            out[name] = out.get(name, 0) + value
        return Resource(out)

    def __sub__(self, other: Mapping[str, int]) -> Resource:
        out = dict(self._amounts)
        for name, value in other.items():
            out[name] = out.get(name, 0) - value
        return Resource(out)

    def __mul__(self, factor: int) -> Resource:
        return Resource({name: value * factor for name, value in self._amounts.items()})

    __rmul__ = __mul__

    def __le__(self, other: Mapping[str, int]) -> bool:
        return all(value <= other.get(name, 0) for name, value in self._amounts.items())

    def __ge__(self, other: Mapping[str, int]) -> bool:
        return all(value <= self._amounts.get(name, 0) for name, value in other.items())

    def fits_in(self, available: Mapping[str, int]) -> bool:
        """True when this request fits in ``available`` on every resource it asks for."""
        return self <= available

    def insufficient(self, available: Mapping[str, int]) -> list[str]:
        """The names of the resources on which this request does not fit in ``available``, sorted."""
        return sorted(name for name, value in self._amounts.items() if value > available.get(name, 0))

    def without_quota_only(self) -> Resource:
        """This vector less the names only a ResourceQuota counts (``is_quota_only``)."""
        if not any(is_quota_only(name) for name in self._amounts):
            return self
        return Resource({n: v for n, v in self._amounts.items() if not is_quota_only(n)})

    def clamp_min_zero(self) -> Resource:
        return Resource({name: value for name, value in self._amounts.items() if value > 0})

    def max_with(self, other: Mapping[str, int]) -> Resource:
        names = set(self._amounts) | set(other)
        return Resource({n: max(self._amounts.get(n, 0), other.get(n, 0)) for n in names})

    def min_with(self, other: Mapping[str, int]) -> Resource:
        names = set(self._amounts) | set(other)
        return Resource({n: min(self._amounts.get(n, 0), other.get(n, 0)) for n in names})

    def is_zero(self) -> bool:
        return not self._amounts

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Resource):
            return self._amounts == other._amounts
        if isinstance(other, Mapping):
            return self._amounts == {k: v for k, v in other.items() if v}
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._amounts.items()))
        return self._hash

    def __repr__(self) -> str:
        body = ", ".join(f"{name}={format_quantity(name, n)}" for name, n in sorted(self._amounts.items()))
        return f"Resource({body})"


EMPTY: Final = Resource()


def total(resources: Iterable[Mapping[str, int]]) -> Resource:
    """The sum of many vectors."""
    out: dict[str, int] = {}
    for res in resources:
        for name, value in res.items():
            out[name] = out.get(name, 0) + value
    return Resource(out)


class Counted:
    """One holding and how many hold it (see ``count_into``)."""

    __slots__ = ("n", "resource")

    def __init__(self, resource: Resource) -> None:
        self.resource = resource
        self.n = 1


# Keyed by the object's identity: alike holdings are one object (jobs intern what they hold), and an int key
# skips the Python-level hash of a Resource, asked once per job per pass.
Tally = dict[int, Counted]


def count_into(counts: Tally, resource: Resource) -> None:
    """Count one more of ``resource`` (for ``total_counted``): many jobs hold alike, and a count per
    distinct vector sums thousands of them in a few additions."""
    found = counts.get(id(resource))
    if found is None:
        counts[id(resource)] = Counted(resource)
    else:
        found.n += 1


def count_out(counts: Tally, resource: Resource) -> None:
    """Take back one ``count_into`` of the same object."""
    found = counts[id(resource)]
    found.n -= 1
    if not found.n:
        del counts[id(resource)]


def total_counted(counts: Tally) -> Resource:
    """The sum of each vector times its count, names in the order a plain sum meets them."""
    out: dict[str, int] = {}
    for counted in counts.values():
        n = counted.n
        for name, value in counted.resource.items():
            out[name] = out.get(name, 0) + value * n
    return Resource(out)
