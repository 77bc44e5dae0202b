"""The worst-case cost the API server estimates for a DRA selector, which it refuses above a limit.

A selector that type-checks may still be refused as too complex, by cel-go's estimate with sizes bounded by
the device's declared limits as Kubernetes bounds them. The estimator is ours (cel-python has none) and is
the largest part of the check, so it stands apart from the type checker it follows.
"""

from __future__ import annotations

import math
import re
from typing import Any

from volcano_py.api.dra_cel_env import (
    BOOL,
    BYTES,
    CIDR,
    DOUBLE,
    DURATION,
    INT,
    IP,
    QUANTITY,
    SEMVER,
    STRING,
    TIMESTAMP,
    UINT,
)
from volcano_py.api.dra_cel_tree import Node

_U64 = 2**64 - 1

# The most attributes or capacities a device has, and the longest domain, name, driver and attribute value:
# bounds the cost estimator multiplies by (resource.k8s.io/v1 limits).
_PER_DEVICE = 32
_SIZES = {"domain": 63, "id": 32, "driver": 63, "attribute": 64}
# Size bounds along a path from ``device`` (for the cost estimate): a map's entry count, a string's length.
_DEVICE_SIZE_TREE: dict[str, Any] = {
    "driver": _SIZES["driver"],
    "attributes": (_PER_DEVICE, _SIZES["domain"], (_PER_DEVICE, _SIZES["id"], _SIZES["attribute"])),
    "capacity": (_PER_DEVICE, _SIZES["domain"], (_PER_DEVICE, _SIZES["id"], None)),
}

# ---------------------------------------------------------------------------------------------------------
# The cost estimate: cel-go's worst case, sizes bounded by the device's declared limits as Kubernetes does.

_Est = tuple[int, int]


def _add(a: _Est, b: _Est) -> _Est:
    return min(a[0] + b[0], _U64), min(a[1] + b[1], _U64)


def _mul(a: _Est, b: _Est) -> _Est:
    return min(a[0] * b[0], _U64), min(a[1] * b[1], _U64)


def _factor(a: _Est, f: float) -> _Est:
    def one(x: int) -> int:
        if x >= _U64:
            return _U64
        return min(math.ceil(x * f), _U64)

    return one(a[0]), one(a[1])


def _union(a: _Est, b: _Est) -> _Est:
    return min(a[0], b[0]), max(a[1], b[1])


_UNKNOWN: _Est = (0, _U64)
_TRAVERSE = 0.1
_REGEX = 0.25
_SCALARS = (BOOL, INT, UINT, DOUBLE, DURATION, TIMESTAMP)


class _Coster:
    def __init__(self) -> None:
        self.locals: dict[str, list[tuple[tuple[str, ...] | None, _Est | None, Node | None]]] = {}
        self.entry: dict[int, tuple[str, _Est, _Est]] = {}  # id(node) -> (container kind, key size, val size)

    def size(self, node: Node) -> _Est:
        found = self.computed(node)
        return found if found is not None else _UNKNOWN

    def computed(self, node: Node) -> _Est | None:
        if node.size is not None:
            return node.size
        if node.kind == "lit":
            v = node.value
            if isinstance(v, str | bytes):
                return (len(v), len(v))
            return (1, 1)
        if node.kind in ("list", "map"):
            n = len(node.args) if node.kind == "list" else len(node.args) // 2
            return (n, n)
        bound = _path_size(node.path)
        if bound is not None:
            node.size = (0, bound)
            return node.size
        if node.type in _SCALARS or (node.type.kind == "opaque" and node.type.name == "optional_type"
                                     and node.type.params[0] in _SCALARS):  # fmt: skip
            return (1, 1)
        if node.kind == "ident" and self.locals.get(node.value):
            return self.locals[node.value][-1][1]
        return None

    def entry_of(self, node: Node) -> tuple[str, _Est, _Est] | None:
        if id(node) in self.entry:
            return self.entry[id(node)]
        if node.kind == "ident" and self.locals.get(node.value):
            holder = self.locals[node.value][-1][2]
            if holder is not None:
                return self.entry_of(holder)
        return None

    def cost(self, node: Node) -> _Est:
        estimate: _Est = getattr(self, f"_{node.kind}")(node)
        return estimate

    def _lit(self, node: Node) -> _Est:
        return (0, 0)

    def _ident(self, node: Node) -> _Est:
        stack = self.locals.get(node.value)
        node.path = stack[-1][0] if stack else (node.value,)
        return (1, 1)

    def _select(self, node: Node) -> _Est:
        assert node.target is not None
        if node.test_only:
            return self.cost(node.target)
        total = self.cost(node.target)
        if node.target.type.kind in ("map", "object", "param"):
            total = _add(total, (1, 1))
        if node.target.path is not None:
            node.path = (*node.target.path, node.value)
        return total

    def _list(self, node: Node) -> _Est:
        total: _Est = (0, 0)
        item: _Est = (_U64, 0) if node.args else (0, 0)
        for e in node.args:
            total = _add(total, self.cost(e))
            item = _union(item, self.size(e))
        self.entry[id(node)] = ("list", (1, 1), item)
        return _add(total, (10, 10))

    def _map(self, node: Node) -> _Est:
        total: _Est = (0, 0)
        keys: _Est = (_U64, 0) if node.args else (0, 0)
        values = keys
        for k, v in zip(node.args[0::2], node.args[1::2], strict=True):
            total = _add(_add(total, self.cost(k)), self.cost(v))
            keys, values = _union(keys, self.size(k)), _union(values, self.size(v))
        self.entry[id(node)] = ("map", keys, values)
        return _add(total, (30, 30))

    def _call(self, node: Node) -> _Est:
        if node.value == "dyn" and node.target is None and len(node.args) == 1:
            inner = self.cost(node.args[0])
            node.path, node.size = node.args[0].path, self.computed(node.args[0])
            return _add((1, 1), inner)
        costs = [self.cost(a) for a in node.args]
        total: _Est = (0, 0)
        if node.target is not None:
            total = self.cost(node.target)
        fn: _Est = (_U64, 0)
        for overload in node.overloads:
            fn = _union(fn, self.function(node, overload, costs))
            if overload in ("index_list", "index_map") and node.args[0].path is not None:
                node.path = (*node.args[0].path, "@items" if overload == "index_list" else "@values")
                entry = self.entry_of(node.args[0])
                if entry is not None:
                    node.size = entry[2]
        if not node.overloads:
            return (0, 0)
        return _add(total, fn)

    def function(self, node: Node, overload: str, costs: list[_Est]) -> _Est:
        args = node.args
        target = node.target
        summed: _Est = (0, 0)
        for c in costs:
            summed = _add(summed, c)
        name = node.value
        known = _k8s_cost(self, name, overload, target, args)
        if known is not None:
            return _add(known, summed)
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return _add(_factor(self.size(args[0]), _TRAVERSE), summed)
        if overload in ("in_list",) and len(args) == 2:
            return _add(_factor(self.size(args[1]), 1), summed)
        if overload == "matches_string" and target is not None:
            text = _factor(_add(self.size(target), (1, 1)), _TRAVERSE)
            return _add(_mul(text, _factor(self.size(args[0]), _REGEX)), summed)
        if overload == "contains_string" and target is not None:
            return _add(
                _mul(_factor(self.size(target), _TRAVERSE), _factor(self.size(args[0]), _TRAVERSE)), summed
            )
        if overload in ("logical_and", "logical_or"):
            return (costs[0][0], _add(costs[0], costs[1])[1])
        if overload == "conditional":
            node.size = _union(self.size(args[1]), self.size(args[2]))
            return _add(costs[0], _union(costs[1], costs[2]))
        if overload in ("add_string", "add_bytes", "add_list"):
            result = _add(self.size(args[0]), self.size(args[1]))
            node.size = result
            if overload == "add_list":
                return _add((1, 1), summed)
            return _add(_factor(result, _TRAVERSE), summed)
        if overload in ("equals", "not_equals") or re.fullmatch(
            r"(less|greater)(_equals)?_(string|bytes)", overload
        ):
            left, right = self.size(args[0]), self.size(args[1])
            smallest = min(left[1], right[1])
            return _add(_factor((1 if smallest > 0 else 0, smallest), _TRAVERSE), summed)
        return _add((1, 1), summed)

    def _comp(self, node: Node) -> _Est:
        if node.macro == "bind":
            init, inner = node.args
            total = _add((10, 10), self.cost(init))
            self.locals.setdefault(node.iter_vars[0], []).append((init.path, self.computed(init), init))
            total = _add(total, self.cost(inner))
            self.locals[node.iter_vars[0]].pop()
            node.path, node.size = inner.path, self.computed(inner)
            return total
        range_node, *rest = node.args
        total = self.cost(range_node)
        entry = self.entry_of(range_node)
        container = entry[0] if entry is not None else range_node.type.kind
        base = range_node.path
        key_size = entry[1] if entry is not None else None
        val_size = entry[2] if entry is not None else None

        def sub(part: str) -> tuple[str, ...] | None:
            return (*base, part) if base is not None else (part,)

        if len(node.iter_vars) == 2:
            key_part = "@indices" if container == "list" else "@keys"
            val_part = "@items" if container == "list" else "@values"
            bindings = [
                (node.iter_vars[0], sub(key_part), key_size),
                (node.iter_vars[1], sub(val_part), val_size),
            ]
        elif container == "list":
            bindings = [(node.iter_vars[0], sub("@items"), val_size)]
        else:
            bindings = [(node.iter_vars[0], sub("@keys"), key_size)]
        for var, path, size in bindings:
            self.locals.setdefault(var, []).append((path, size, None))
        body = [self.cost(r) for r in rest]
        for var, _, _ in bindings:
            self.locals[var].pop()
        # The parts cel-go's macro expansion adds around the user's expressions: the accumulator's start, the
        # loop condition, the step combining the accumulator with each result, and the final result.
        start, condition, result, step = _expansion_costs(node.macro, len(rest))
        last = body[-1]
        if node.macro in ("all", "exists"):
            step_cost: _Est = (1, 1 + last[1])
        elif node.macro in ("exists_one", "existsOne"):
            step_cost = _add(body[0], (1, 2))
        elif node.macro == "filter":  # predicate ? accu + [element] : accu
            step_cost = _add(last, (1, 13))
        elif len(rest) == 2:  # predicate ? <step with the value> : accu
            step_cost = _add(body[0], _union(_add(last, step), (1, 1)))
        else:
            step_cost = _add(last, step)
        total = _add(total, _add(start, result))
        count = self.size(range_node)
        total = _add(total, _mul(count, _add(step_cost, condition)))
        if node.macro not in ("all", "exists", "exists_one", "existsOne"):
            node.size = count
        return total


def _expansion_costs(macro: str, parts: int) -> tuple[_Est, _Est, _Est, _Est]:
    """(accumulator start, loop condition, result, step around the value) of cel-go's expansion of a macro."""
    if macro == "all":
        return (0, 0), (2, 2), (1, 1), (0, 0)
    if macro == "exists":
        return (0, 0), (3, 3), (1, 1), (0, 0)
    if macro in ("exists_one", "existsOne"):
        return (0, 0), (0, 0), (2, 2), (0, 0)
    if macro == "transformMap":  # cel.@mapInsert(accu, key, value)
        return (30, 30), (0, 0), (1, 1), (3, 3)
    if macro == "transformMapEntry":  # cel.@mapInsert(accu, entry)
        return (30, 30), (0, 0), (1, 1), (2, 2)
    # map and filter append one-element lists to a list: accu + [value]
    return (10, 10), (0, 0), (1, 1), (12, 12)


def _path_size(path: tuple[str, ...] | None) -> int | None:
    """The most entries (map) or characters (string) at ``path`` from ``device``; None when not bounded.

    Kubernetes bounds a name selected on a map only for the attribute values (all alike); a capacity's
    quantity, or a domain selected as a field, has no bound.
    """
    if not path or path[0] != "device" or len(path) < 2:
        return None
    node: Any = _DEVICE_SIZE_TREE.get(path[1])
    for part in path[2:]:
        if not isinstance(node, tuple):
            return None
        _, key, value = node
        if part == "@keys":
            node = key
        elif part in ("@values", "@items") or (not part.startswith("@") and isinstance(value, int)):
            node = value
        else:
            return None
    if isinstance(node, tuple):
        return int(node[0])
    return node if isinstance(node, int) else None


def _k8s_cost(
    coster: _Coster, name: str, overload: str, target: Node | None, args: list[Node]
) -> _Est | None:
    """Kubernetes' own estimates for its library functions (without the arguments' costs)."""
    size = coster.size
    if name in ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
                "compareTo", "add", "sub", "major", "minor", "patch", "getScheme", "getHostname", "getHost",
                "getPort", "getEscapedPath", "getQuery", "format.named", "masked", "prefixLength", "family",
                "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
                "isGlobalUnicast"):  # fmt: skip
        if name in ("add", "sub") and overload.startswith("list"):
            return None
        return (1, 1)
    if name in ("quantity", "isQuantity", "semver", "isSemver", "cidr", "isIP", "isCIDR", "url") and args:
        return _factor(size(args[0]), _TRAVERSE)
    if name == "ip" and overload == "cidr_ip":
        return (1, 1)
    if name == "ip" and args:
        return _factor(size(args[0]), _TRAVERSE)
    if name == "ip.isCanonical" and args:
        return _factor(size(args[0]), 2 * _TRAVERSE)
    if (
        overload == "equals"
        and len(args) == 2
        and args[0].type == args[1].type in (QUANTITY, SEMVER, IP, CIDR)
    ):
        return (1, 1)
    if target is None:
        return None
    if name in ("lowerAscii", "upperAscii", "substring", "trim"):
        return _factor(size(target), _TRAVERSE)
    if name in ("replace", "split"):
        return _factor(size(target), 2 * _TRAVERSE)
    if name in ("find", "findAll") and args:
        text = _factor(_add(size(target), (1, 1)), _TRAVERSE)
        return _mul(text, _factor(size(args[0]), _REGEX))
    if name in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
        if target.type.kind == "list":
            each: _Est = (1, 1)
            if target.type.params[0] in (STRING, BYTES):
                entry = coster.entry_of(target)
                each = _add(each, _factor(entry[2] if entry is not None else _UNKNOWN, _TRAVERSE))
            return _mul(size(target), each)
        return _factor(size(target), _TRAVERSE)
    return None


def estimated_cost(root: Node) -> int:
    return _Coster().cost(root)[1]
