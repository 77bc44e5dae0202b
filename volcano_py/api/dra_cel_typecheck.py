"""The type check the API server runs on a DRA selector: cel-go's checker, over our expression tree.

cel-python does not type-check, yet the API server refuses a selector that does not, in cel-go's words; so
the checker is ours, resolving identifiers, fields and overloads against the declared environment and
leaving on each node its type and matching overloads for the cost estimate.
"""

from __future__ import annotations

from volcano_py.api.dra_cel_env import (
    BOOL,
    BYTES,
    DECLS,
    DEVICE,
    DOUBLE,
    DURATION,
    DYN,
    ERROR,
    INT,
    NULL,
    OBJECT_FIELDS,
    STRING,
    TIMESTAMP,
    TYPE_NAMES,
    UINT,
    CelType,
    list_of,
    map_of,
    type_of,
)
from volcano_py.api.dra_cel_tree import Node


def _fn_signature(args: list[CelType], member: bool) -> str:
    shown = [a.shown() for a in args]
    if member:
        return f"{shown[0]}.({', '.join(shown[1:])})"
    return f"({', '.join(shown)})"


def _is_dyn(t: CelType) -> bool:
    return t.kind in ("dyn", "any", "error")


def _assignable(actual: CelType, formal: CelType, binds: dict[str, CelType]) -> bool:
    if formal.kind == "param":
        bound = binds.get(formal.name)
        if bound is None:
            binds[formal.name] = actual
            return True
        if _is_dyn(bound) and not _is_dyn(actual):
            binds[formal.name] = actual
            return True
        return _assignable(actual, bound, binds)
    if _is_dyn(actual) or _is_dyn(formal):
        return True
    if actual.kind == "null" or formal.kind == "null":
        other = formal if actual.kind == "null" else actual
        return other.kind in ("null", "object", "opaque") or other in (DURATION, TIMESTAMP)
    if actual.kind != formal.kind or actual.name != formal.name or len(actual.params) != len(formal.params):
        return False
    return all(_assignable(a, f, binds) for a, f in zip(actual.params, formal.params, strict=True))


def _substitute(t: CelType, binds: dict[str, CelType]) -> CelType:
    if t.kind == "param":
        bound = binds.get(t.name)
        return _substitute(bound, binds) if bound is not None and bound.kind != "param" else DYN
    if not t.params:
        return t
    return CelType(t.kind, t.name, tuple(_substitute(p, binds) for p in t.params))


def _join(types: list[CelType]) -> CelType:
    """The element type of a literal list or map: its elements' common type (dyn if they are dyn)."""
    if not types:
        return DYN
    first = next((t for t in types if not _is_dyn(t)), types[0])
    return first


class Checker:
    def __init__(self, text: str) -> None:
        self.text = text
        self.errors: list[tuple[int, str]] = []
        self.scopes: list[dict[str, CelType]] = []

    def error(self, pos: int, message: str) -> None:
        self.errors.append((pos, message))

    def lookup_var(self, name: str) -> CelType | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name == "device":
            return DEVICE
        return TYPE_NAMES.get(name) and type_of(TYPE_NAMES[name])

    def check(self, node: Node) -> CelType:
        node.type = getattr(self, f"_{node.kind}")(node)
        return node.type

    def _lit(self, node: Node) -> CelType:
        v = node.value
        if isinstance(v, bool):
            return BOOL
        if v is None:
            return NULL
        if isinstance(v, tuple):
            return UINT
        if isinstance(v, int):
            return INT
        if isinstance(v, float):
            return DOUBLE
        return BYTES if isinstance(v, bytes) else STRING

    def _ident(self, node: Node) -> CelType:
        found = self.lookup_var(node.value)
        if found is None:
            self.error(node.pos, f"undeclared reference to '{node.value}' (in container '')")
            return ERROR
        return found

    def _qualified(self, node: Node | None) -> str | None:
        """``a.b.c`` as one name when it is a chain of plain selects on an undeclared identifier."""
        if node is None:
            return None
        if node.kind == "ident":
            return None if self.lookup_var(node.value) is not None else str(node.value)
        if node.kind == "select" and not node.test_only:
            inner = self._qualified(node.target)
            return f"{inner}.{node.value}" if inner is not None else None
        return None

    def _select(self, node: Node) -> CelType:
        assert node.target is not None
        operand = self.check(node.target)
        if operand.kind == "map":
            result = operand.params[1]
        elif operand.kind == "object":
            fields = OBJECT_FIELDS.get(operand.name, {})
            if node.value not in fields:
                self.error(node.pos, f"undefined field '{node.value}'")
                return ERROR
            result = fields[node.value]
        elif _is_dyn(operand):
            result = DYN
        else:
            self.error(node.pos, f"type '{operand.shown()}' does not support field selection")
            result = DYN
        return BOOL if node.test_only else result

    def _list(self, node: Node) -> CelType:
        types = [self.check(item) for item in node.args]
        return list_of(self._homogeneous(node.args, types))

    def _map(self, node: Node) -> CelType:
        keys = [self.check(k) for k in node.args[0::2]]
        values = [self.check(v) for v in node.args[1::2]]
        return map_of(self._homogeneous(node.args[0::2], keys), self._homogeneous(node.args[1::2], values))

    def _homogeneous(self, items: list[Node], types: list[CelType]) -> CelType:
        # Kubernetes turns on homogeneous aggregate literals: mixed element types are a type error.
        expected = _join(types)
        for item, t in zip(items, types, strict=True):
            if not _is_dyn(t) and not _is_dyn(expected) and not _assignable(t, expected, {}):
                self.error(item.pos, f"expected type '{expected.shown()}' but found '{t.shown()}'")
        return expected

    def _call(self, node: Node) -> CelType:
        name: str = node.value
        target = node.target
        if target is not None:
            qualified = self._qualified(target)
            if qualified is not None and f"{qualified}.{name}" in DECLS:
                name, target = f"{qualified}.{name}", None
                node.value, node.target = name, None
        decls = DECLS.get(name)
        if decls is None:
            for arg in ([target] if target is not None else []) + node.args:
                self.check(arg)
            self.error(node.pos, f"undeclared reference to '{name}' (in container '')")
            return ERROR
        arg_types = ([self.check(target)] if target is not None else []) + [self.check(a) for a in node.args]
        if name in ("_&&_", "_||_"):
            for arg, t in zip(node.args, arg_types, strict=True):
                if not _assignable(t, BOOL, {}):
                    self.error(arg.pos, f"expected type 'bool' but found '{t.shown()}'")
                    return ERROR
            node.overloads = ["logical_and" if name == "_&&_" else "logical_or"]
            return BOOL
        result: CelType | None = None
        for overload in decls:
            if overload.member != (target is not None) or len(overload.args) != len(arg_types):
                continue
            binds: dict[str, CelType] = {}
            if all(_assignable(a, f, binds) for a, f in zip(arg_types, overload.args, strict=True)):
                node.overloads.append(overload.id)
                this = _substitute(overload.result, binds)
                result = this if result is None or result == this else DYN
        if result is None:
            self.error(node.pos, f"found no matching overload for '{name}' applied to "
                                 f"'{_fn_signature(arg_types, target is not None)}'")  # fmt: skip
            return ERROR
        return result

    def _comp(self, node: Node) -> CelType:
        if node.macro == "bind":
            init, body = node.args
            self.scopes.append({node.iter_vars[0]: self.check(init)})
            try:
                return self.check(body)
            finally:
                self.scopes.pop()
        range_node, *rest = node.args
        rng = self.check(range_node)
        if rng.kind == "list":
            first, second = (INT, rng.params[0]) if len(node.iter_vars) == 2 else (rng.params[0], DYN)
        elif rng.kind == "map":
            first, second = rng.params
        elif _is_dyn(rng):
            first, second = DYN, DYN
        else:
            self.error(
                range_node.pos,
                f"expression of type '{rng.shown()}' cannot be range of a comprehension "
                "(must be list, map, or dynamic)",
            )
            first, second = ERROR, ERROR
        scope = dict(zip(node.iter_vars, (first, second), strict=False))
        self.scopes.append(scope)
        try:
            types = [self.check(r) for r in rest]
        finally:
            self.scopes.pop()
        macro = node.macro
        if macro in ("all", "exists", "exists_one", "existsOne", "filter") or (
            macro in ("map", "transformList", "transformMap", "transformMapEntry") and len(rest) == 2
        ):
            predicate = rest[0]
            if not _assignable(types[0], BOOL, {}):
                self.error(predicate.pos, f"expected type 'bool' but found '{types[0].shown()}'")
        if macro in ("all", "exists", "exists_one", "existsOne"):
            return BOOL
        if macro == "filter":
            return list_of(first)
        if macro in ("map", "transformList"):
            return list_of(types[-1])
        if macro == "transformMap":
            return map_of(first, types[-1])
        return map_of(DYN, DYN)
