"""Device selectors: the CEL expressions of DeviceClasses and claims, evaluated over one device.

A selector sees ``device.driver``, ``device.attributes[domain][name]`` and ``device.capacity[domain][name]``
(attributes and capacities keyed by their domain, an unqualified name being the driver's), as in Kubernetes.
Capacities are quantities and version attributes are semantic versions; Kubernetes' CEL library gives them
methods (``compareTo``, ``isGreaterThan``, ``isLessThan``, ``asInteger``, ``major``, ...) and the
``quantity()`` / ``semver()`` constructors, which are defined here over ``celpy`` (cel-python).

Each expression is compiled once per process and each (expression, device content) evaluated once: a cluster's
devices are mostly alike, so a session over thousands of them evaluates a selector a handful of times.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import celpy
from celpy import celtypes
from celpy.celparser import CELParseError

from volcano_py.resources import QuantityError, parse_quantity


class SelectorCompileError(ValueError):
    """A CEL expression that does not parse; the message names the expression."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A capacity value: exact, compared only through its methods (as Kubernetes' CEL quantity type)."""

    value: Fraction


@dataclass(frozen=True, slots=True, order=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[Any, ...] = ()


_SEMVER = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)


def parse_semver(text: str) -> Semver:
    match = _SEMVER.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a semantic version")
    pre = match.group(4)
    # A release sorts after its pre-releases: an empty pre-release part is the largest.
    pre_key: tuple[Any, ...] = (
        (0, *((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))) if pre else (1,)
    )
    return Semver(int(match.group(1)), int(match.group(2)), int(match.group(3)), pre_key)


def _quantity(text: Any) -> Quantity:
    try:
        return Quantity(parse_quantity(str(text)))
    except QuantityError as err:
        raise ValueError(str(err)) from None


def _is_quantity(text: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(text))
    except QuantityError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _semver(text: Any) -> Semver:
    return parse_semver(str(text))


def _is_semver(text: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_SEMVER.match(str(text)) is not None)


def _ordered(left: Any, right: Any) -> int:
    if isinstance(left, Quantity) and isinstance(right, Quantity):
        return (left.value > right.value) - (left.value < right.value)
    if isinstance(left, Semver) and isinstance(right, Semver):
        return (left > right) - (left < right)
    raise TypeError(f"cannot compare {type(left).__name__} with {type(right).__name__}")


def _compare_to(left: Any, right: Any) -> celtypes.IntType:
    return celtypes.IntType(_ordered(left, right))


def _greater(left: Any, right: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_ordered(left, right) > 0)


def _less(left: Any, right: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_ordered(left, right) < 0)


def _as_integer(value: Any) -> celtypes.IntType:
    if not isinstance(value, Quantity) or value.value.denominator != 1:
        raise TypeError("asInteger() needs a whole quantity")
    return celtypes.IntType(int(value.value))


def _is_integer(value: Any) -> celtypes.BoolType:
    if not isinstance(value, Quantity):
        raise TypeError("isInteger() needs a quantity")
    return celtypes.BoolType(value.value.denominator == 1)


def _as_float(value: Any) -> celtypes.DoubleType:
    if not isinstance(value, Quantity):
        raise TypeError("asApproximateFloat() needs a quantity")
    return celtypes.DoubleType(float(value.value))


def _sign(value: Any) -> celtypes.IntType:
    if not isinstance(value, Quantity):
        raise TypeError("sign() needs a quantity")
    return celtypes.IntType((value.value > 0) - (value.value < 0))


def _add(left: Any, right: Any) -> Quantity:
    other = right.value if isinstance(right, Quantity) else Fraction(int(right))
    return Quantity(left.value + other)


def _sub(left: Any, right: Any) -> Quantity:
    other = right.value if isinstance(right, Quantity) else Fraction(int(right))
    return Quantity(left.value - other)


def _part(index: int) -> Callable[[Any], celtypes.IntType]:
    def part(value: Any) -> celtypes.IntType:
        if not isinstance(value, Semver):
            raise TypeError("major(), minor() and patch() need a semantic version")
        return celtypes.IntType((value.major, value.minor, value.patch)[index])

    return part


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "compareTo": _compare_to,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "asInteger": _as_integer,
    "isInteger": _is_integer,
    "asApproximateFloat": _as_float,
    "sign": _sign,
    "add": _add,
    "sub": _sub,
    "major": _part(0),
    "minor": _part(1),
    "patch": _part(2),
}


@functools.cache
def _environment() -> celpy.Environment:
    # Building CEL's parser tables takes a fifth of a second: every process importing the API paid it at
    # start (a scheduler's restart too), though only clusters with DRA device selectors use it.
    return celpy.Environment()


@functools.lru_cache(maxsize=4096)
def compile_selector(expression: str) -> Any:
    """The runnable program of ``expression``, compiled once; SelectorCompileError names it when it does not
    parse."""
    environment = _environment()
    try:
        ast = environment.compile(expression)
    except CELParseError as err:
        first = str(err).splitlines()[0] if str(err) else "syntax error"
        raise SelectorCompileError(f"CEL selector {expression!r} does not compile: {first}") from None
    return environment.program(ast, functions=_FUNCTIONS)


AttributeValue = int | bool | str | Semver
# A device as selectors see it: (driver, ((domain, name, value), ...), ((domain, name, quantity), ...)),
# hashable so that identical devices share one evaluation.
DeviceView = tuple[str, tuple[tuple[str, str, AttributeValue], ...], tuple[tuple[str, str, Fraction], ...]]


def _cel_value(value: AttributeValue) -> Any:
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    return value


def _nested(items: tuple[tuple[str, str, Any], ...], convert: Callable[[Any], Any]) -> celtypes.MapType:
    out: dict[str, dict[str, Any]] = {}
    for domain, name, value in items:
        out.setdefault(domain, {})[name] = convert(value)
    return celtypes.MapType(
        {
            celtypes.StringType(d): celtypes.MapType({celtypes.StringType(n): v for n, v in names.items()})
            for d, names in out.items()
        }
    )


def _activation(view: DeviceView) -> Mapping[str, Any]:
    driver, attributes, capacity = view
    device = celtypes.MapType(
        {
            celtypes.StringType("driver"): celtypes.StringType(driver),
            celtypes.StringType("attributes"): _nested(attributes, _cel_value),
            celtypes.StringType("capacity"): _nested(capacity, Quantity),
            celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(False),
        }
    )
    return {"device": device}


@dataclass(frozen=True, slots=True)
class Outcome:
    """A selector's answer for one device; ``error`` says why it could not be evaluated (then no match)."""

    matches: bool
    error: str = ""


@functools.lru_cache(maxsize=65536)
def evaluate(expression: str, view: DeviceView) -> Outcome:
    """Whether the device matches ``expression`` (compiled with ``compile_selector``, which must succeed)."""
    program = compile_selector(expression)
    try:
        result = program.evaluate(_activation(view))
    except Exception as err:  # any failure inside an expression is the expression's failure
        return Outcome(False, _error_text(expression, err))
    if isinstance(result, celtypes.BoolType):
        return Outcome(bool(result))
    if isinstance(result, Exception):
        return Outcome(False, _error_text(expression, result))
    return Outcome(False, f"CEL selector {expression!r} returned {type(result).__name__}, not a bool")


def _error_text(expression: str, err: BaseException) -> str:
    args = getattr(err, "args", ())
    detail = str(args[0]) if args else str(err)
    return f"CEL selector {expression!r} failed: {detail[:200]}"
