"""Kubernetes quantities and resource vectors, exact.

Every amount is held as an ``int`` in a canonical unit so that arithmetic never rounds:

* ``cpu`` in millicores;
* ``memory``, ``ephemeral-storage`` and ``hugepages-*`` in bytes;
* ``pods`` as a count;
* any other (extended) resource, such as ``nvidia.com/gpu``, in milli-units, so that a fractional request
  (``500m`` of a GPU, as the openb trace has) is representable;
* a ResourceQuota name (``requests.memory``, ``limits.cpu``) in the unit of the resource it names, and an
  object count (``count/pods``) as a count.

Parsing follows ``k8s.io/apimachinery/pkg/api/resource``: a value with a finer precision than the unit is
rounded *up*, as ``Quantity.MilliValue`` does, so a request is never under-counted.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from fractions import Fraction
from typing import Any, Final

CPU: Final = "cpu"
MEMORY: Final = "memory"
PODS: Final = "pods"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
GPU: Final = "nvidia.com/gpu"
COUNT_PODS: Final = "count/pods"
REQUESTS_PREFIX: Final = "requests."
LIMITS_PREFIX: Final = "limits."
HUGEPAGES_PREFIX: Final = "hugepages-"
_COUNT_PREFIX: Final = "count/"

_BINARY_SUFFIX: Final[dict[str, int]] = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_DECIMAL_SUFFIX: Final[dict[str, Fraction]] = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY_RE: Final = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a Kubernetes quantity exactly: ``"100m"`` -> 1/10, ``"4Gi"`` -> 4294967296, ``"1e3"`` -> 1000."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        # YAML can hand us anything (a list, a mapping, a boolean); none of them is a quantity.
        raise QuantityError(
            f"{value!r} is not a quantity (write one value like '500m', '2' or '4Gi', not a "
            f"{type(value).__name__})"
        )
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"quantity {value!r} is not finite")
        # A YAML float such as 0.5 means the decimal the user wrote, not its binary approximation.
        return parse_quantity(repr(value))
    text = value.strip()
    match = _QUANTITY_RE.match(text)
    if match is None:
        raise QuantityError(
            f"{value!r} is not a Kubernetes quantity "
            "(use forms like '500m', '2', '1.5', '4Gi', '512Mi' or '1e3')"
        )
    number = Fraction(match["num"])
    if match["exp"]:
        number *= Fraction(10) ** int(match["exp"][1:])
    else:
        suffix = match["suffix"] or ""
        number *= _BINARY_SUFFIX[suffix] if suffix in _BINARY_SUFFIX else _DECIMAL_SUFFIX[suffix]
    return -number if match["sign"] == "-" else number


def _quota_base(name: str) -> str:
    """The resource a quota name counts: ``requests.memory`` and ``limits.memory`` count ``memory``."""
    if name.startswith(REQUESTS_PREFIX):
        return name[len(REQUESTS_PREFIX) :]
    if name.startswith(LIMITS_PREFIX):
        return name[len(LIMITS_PREFIX) :]
    return name


def _is_byte_resource(name: str) -> bool:
    base = _quota_base(name)
    return base in (MEMORY, EPHEMERAL_STORAGE) or base.startswith(HUGEPAGES_PREFIX)


def unit_scale(name: str) -> int:
    """How many canonical units one whole unit of ``name`` is (1000 for cpu and extended resources)."""
    if _is_byte_resource(name) or name == PODS or name.startswith(_COUNT_PREFIX):
        return 1
    return 1000


def is_quota_only(name: str) -> bool:
    """A name that only a ResourceQuota counts (``pods``, ``count/*``, ``requests.*``, ``limits.*``).

    A PodGroup's ``minResources`` carries them (Volcano writes a pod's quota usage there) but no pod asks a
    node for them: the scheduler weighs such a minimum without them, as Volcano's does (it skips object
    counts and prefixed names when reading the list, and ``pods`` when comparing).
    """
    return name == PODS or name.startswith((_COUNT_PREFIX, REQUESTS_PREFIX, LIMITS_PREFIX))


def _is_extended(name: str) -> bool:
    # Kubernetes' extended resources: a domain-qualified name outside kubernetes.io.
    return "/" in name and "kubernetes.io/" not in name and not name.startswith(REQUESTS_PREFIX)


@functools.lru_cache(maxsize=65536, typed=True)
def to_canonical(name: str, value: str | int | float) -> int:
    """A quantity of resource ``name`` in its canonical integer unit, rounded up.

    Cached: a cluster repeats a handful of quantity strings ("8", "96", "768Gi") across thousands of
    pods and nodes, and every snapshot reads them again, so parsing happens once per distinct string; and the
    common spellings ("4", "500m", "512Mi") skip the exact general parser even then.
    """
    if isinstance(value, str):
        fast = _fast_canonical(name, value)
        if fast is not None:
            return fast
    return canonical_exact(name, value)


def canonical_exact(name: str, value: str | int | float) -> int:
    """``to_canonical`` by the general parser alone: no cache, no fast path (the reference for both)."""
    return math.ceil(parse_quantity(value) * unit_scale(name))


def _fast_canonical(name: str, value: str) -> int | None:
    # Plain ASCII digits with no suffix, a milli suffix or a binary suffix: exact integer arithmetic
    # without building a Fraction. Anything else (decimals, exponents, signs) is left to the exact parser.
    if not value.isascii():
        return None
    if value.isdigit():
        return int(value) * unit_scale(name)
    if value[-1:] == "m" and value[:-1].isdigit():
        return -(-int(value[:-1]) * unit_scale(name) // 1000)  # rounded up, as the exact parser does
    if value[-2:] in _BINARY_SUFFIX and value[:-2].isdigit():
        return int(value[:-2]) * _BINARY_SUFFIX[value[-2:]] * unit_scale(name)
    return None


def amount_of(name: str, value: object) -> int:
    """One entry of a Kubernetes resource list in canonical units; an error names the resource."""
    try:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            parse_quantity(value)  # type: ignore[arg-type]  # raises, saying what was written instead
        return to_canonical(name, value)
    except QuantityError as err:
        raise QuantityError(f"resource {name!r}: {err}") from None


def pod_request(spec: Mapping[str, Any]) -> Resource:
    """What a pod asks of a node: its containers summed, at least its largest init container, + overhead.

    The one reading of a pod's request, used by the scheduler's snapshot (for every pod, every cycle), the
    controllers' PodGroup ``minResources`` and admission.
    """
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        for name, value in _request_amounts(container.get("resources")).items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers") or ():
        for name, value in _request_amounts(container.get("resources")).items():
            total[name] = max(total.get(name, 0), value)
    for name, value in (spec.get("overhead") or {}).items():
        if value is not None:
            total[name] = total.get(name, 0) + amount_of(name, value)
    return Resource(total)


def pod_limits(spec: Mapping[str, Any]) -> Resource:
    """A pod's limits as the quota controller sums them: containers summed, at least its largest init
    container, and the overhead added only where a limit is set."""
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        for name, value in _limit_amounts(container.get("resources")).items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers") or ():
        for name, value in _limit_amounts(container.get("resources")).items():
            total[name] = max(total.get(name, 0), value)
    for name, value in (spec.get("overhead") or {}).items():
        if value is not None and name in total:
            total[name] += amount_of(name, value)
    return Resource(total)


def pod_quota_usage(spec: Mapping[str, Any]) -> Resource:
    """What one pod of ``spec`` counts against ResourceQuotas, under the quota controller's names.

    ``pods`` and ``count/pods``; ``cpu``, ``memory`` and ``ephemeral-storage`` both bare and as
    ``requests.*``, with ``limits.*`` where limits are set; hugepages bare and as ``requests.*``; extended
    resources as ``requests.*`` and, as Volcano adds for the scheduler, bare. This is what Volcano writes as
    a PodGroup's ``minResources`` (per pod), so quota-minded tools read the same keys from ours.
    """
    requests, limits = pod_request(spec), pod_limits(spec)
    usage: dict[str, int] = {PODS: 1, COUNT_PODS: 1}
    for name in (CPU, MEMORY, EPHEMERAL_STORAGE):
        if name in requests:
            usage[name] = usage[REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            usage[LIMITS_PREFIX + name] = limits[name]
    for name, amount in requests.items():
        if name.startswith(HUGEPAGES_PREFIX) or _is_extended(name):
            usage[name] = usage[REQUESTS_PREFIX + name] = amount
    return Resource(usage)


def _limit_amounts(resources: Mapping[str, Any] | None) -> dict[str, int]:
    limits = (resources or {}).get("limits") or {}
    return {name: amount_of(name, value) for name, value in limits.items() if value is not None}


def _request_amounts(resources: Mapping[str, Any] | None) -> dict[str, int]:
    # Per resource, as the API server defaults it: a limit with no request counts as the request. Read for
    # every pod of every cycle, so the common case (cached quantity strings) takes no detour.
    if not resources:
        return {}
    limits = resources.get("limits")
    requests = resources.get("requests")
    merged = dict(limits) if limits else {}
    if requests:
        merged.update(requests)
    out: dict[str, int] = {}
    for name, value in merged.items():
        if value is None:
            continue  # ``cpu:`` with no value: the API server drops the null, so do we
        try:
            out[name] = to_canonical(name, value)
        except (QuantityError, TypeError):  # TypeError: a list or mapping where a quantity belongs
            out[name] = amount_of(name, value)  # raises, naming the resource
    return out


def format_quantity(name: str, amount: int) -> str:
    """The shortest exact Kubernetes quantity string for a canonical amount of ``name``."""
    if _is_byte_resource(name):
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            base = _BINARY_SUFFIX[suffix]
            if amount and amount % base == 0:
                return f"{amount // base}{suffix}"
        return str(amount)
    if unit_scale(name) == 1:
        return str(amount)
    if amount % 1000 == 0:
        return str(amount // 1000)
    return f"{amount}m"


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
