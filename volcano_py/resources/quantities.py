"""Kubernetes quantities, exact: parsing, the canonical unit of each resource name, and formatting back.

Every amount is held as an ``int`` in a canonical unit so that arithmetic never rounds:

* ``cpu`` in millicores;
* ``memory``, ``ephemeral-storage`` and ``hugepages-*`` in bytes;
* ``pods`` as a count;
* any other (extended) resource, such as ``nvidia.com/gpu``, in milli-units, so that a fractional request
  (``500m`` of a GPU, as the openb trace has) is representable;
* a ResourceQuota name (``requests.memory``, ``limits.cpu``) in the unit of the resource it names, and an
  object count (``count/pods``) as a count.

Parsing follows ``k8s.io/apimachinery/pkg/api/resource``: a value with a finer precision than the unit is
rounded *up*, as ``Quantity.MilliValue`` does, so a request is never under-counted. The vectors built from
these amounts are in ``vector``; what a pod asks for, in ``pods``.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from typing import Final

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


def is_extended(name: str) -> bool:
    """Kubernetes' extended resources: a domain-qualified name outside kubernetes.io."""
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
    if is_extended(name):
        # Devices (GPUs) are counted whole: a share of 76.8 GPUs reads as that, not as 76800m.
        whole, thousandths = divmod(abs(amount), 1000)
        sign = "-" if amount < 0 else ""
        return f"{sign}{whole}.{thousandths:03d}".rstrip("0")
    return f"{amount}m"
