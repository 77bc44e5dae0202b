"""The API server's compile-time verdict on a DRA CEL device selector, reproduced offline.

Kubernetes (v1.34, the version of our control plane) refuses a selector when it is longer than 10 KiB, when
it does not parse, when it does not type-check against the environment it declares (a ``device`` object with
``driver``, ``attributes`` and ``capacity``; the Kubernetes CEL libraries), when its result is neither
``bool`` nor the attribute values' unknown type, and when its estimated worst-case cost exceeds 1,000,000.
cel-python only parses, so the type checker and the cost estimator are ours, written over cel-python's parse
tree: the declarations, messages and cost model follow cel-go and Kubernetes' DRA compiler, so that
``volcano-py validate`` refuses what ``kubectl create`` would, in the words it would use.

Not reproduced (parsed by cel-go, not by cel-python, so refused here as syntax errors): optional field
selection ``a.?b`` / ``a[?b]`` and backquoted identifiers. Syntax errors are placed where cel-python stops,
in our words, not cel-go's.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any

from celpy.celparser import CELParseError

# Limits of resource.k8s.io/v1: CELSelectorExpressionMaxLength, CELSelectorExpressionMaxCost.
MAX_LENGTH = 10 * 1024
MAX_COST = 1_000_000

_U64 = 2**64 - 1


@dataclass(frozen=True, slots=True)
class CelType:
    kind: str  # prim, dyn, any, error, null, list, map, object, opaque, type, param
    name: str
    params: tuple[CelType, ...] = ()

    def __str__(self) -> str:
        """As cel-go's ``Type.String`` (the "must evaluate to bool" message)."""
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    def shown(self) -> str:
        """As cel-go's checker formats a type in its errors."""
        if self.kind == "any":
            return "any"
        if self.kind == "error":
            return "!error!"
        if self.kind == "null":
            return "null"
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(p.shown() for p in self.params)})"


def _prim(name: str) -> CelType:
    return CelType("prim", name)


BOOL, INT, UINT, DOUBLE = _prim("bool"), _prim("int"), _prim("uint"), _prim("double")
STRING, BYTES, DURATION, TIMESTAMP = _prim("string"), _prim("bytes"), _prim("duration"), _prim("timestamp")
DYN = CelType("dyn", "dyn")
ANY = CelType("any", "google.protobuf.Any")
ERROR = CelType("error", "*error*")
NULL = CelType("null", "null_type")
QUANTITY = CelType("object", "kubernetes.Quantity")
SEMVER = CelType("object", "kubernetes.Semver")
URL = CelType("object", "kubernetes.URL")
IP = CelType("opaque", "net.IP")
CIDR = CelType("opaque", "net.CIDR")
A, B = CelType("param", "A"), CelType("param", "B")


def list_of(elem: CelType) -> CelType:
    return CelType("list", "list", (elem,))


def map_of(key: CelType, value: CelType) -> CelType:
    return CelType("map", "map", (key, value))


def optional_of(value: CelType) -> CelType:
    return CelType("opaque", "optional_type", (value,))


def type_of(value: CelType) -> CelType:
    return CelType("type", "type", (value,))


# The most attributes or capacities a device has, and the longest domain, name, driver and attribute value:
# bounds the cost estimator multiplies by (resource.k8s.io/v1 limits).
_PER_DEVICE = 32
_SIZES = {"domain": 63, "id": 32, "driver": 63, "attribute": 64}

# The device as Kubernetes v1.34 declares it with the DRAConsumableCapacity gate off (its default): no
# ``allowMultipleAllocations`` field, so a selector using it is refused there.
DEVICE = CelType("object", "kubernetes.DRADevice")
_DEVICE_FIELDS: dict[str, CelType] = {
    "driver": STRING,
    "attributes": map_of(STRING, map_of(STRING, ANY)),
    "capacity": map_of(STRING, map_of(STRING, QUANTITY)),
}
# Size bounds along a path from ``device`` (for the cost estimate): a map's entry count, a string's length.
_DEVICE_SIZE_TREE: dict[str, Any] = {
    "driver": _SIZES["driver"],
    "attributes": (_PER_DEVICE, _SIZES["domain"], (_PER_DEVICE, _SIZES["id"], _SIZES["attribute"])),
    "capacity": (_PER_DEVICE, _SIZES["domain"], (_PER_DEVICE, _SIZES["id"], None)),
}
_OBJECT_FIELDS: dict[str, dict[str, CelType]] = {DEVICE.name: _DEVICE_FIELDS}

_TYPE_NAMES: dict[str, CelType] = {
    "bool": BOOL, "int": INT, "uint": UINT, "double": DOUBLE, "string": STRING, "bytes": BYTES,
    "list": list_of(DYN), "map": map_of(DYN, DYN), "null_type": NULL, "type": type_of(DYN),
    "dyn": DYN, "google.protobuf.Duration": DURATION, "google.protobuf.Timestamp": TIMESTAMP,
}  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# Declarations: the functions of cel-go's standard environment and of the Kubernetes libraries a new selector
# may use in v1.34 (its compatibility version is 1.33: semver yes, lists v3 not yet).


@dataclass(frozen=True, slots=True)
class Overload:
    id: str
    member: bool
    args: tuple[CelType, ...]
    result: CelType


_DECLS: dict[str, list[Overload]] = {}


def _fn(name: str, oid: str, args: tuple[CelType, ...], result: CelType, member: bool = False) -> None:
    _DECLS.setdefault(name, []).append(Overload(oid, member, args, result))


def _declare() -> None:
    numbers = (("int", INT), ("uint", UINT), ("double", DOUBLE))
    for op, word in (("_+_", "add"), ("_-_", "subtract"), ("_*_", "multiply"), ("_/_", "divide")):
        for n, t in numbers:
            _fn(op, f"{word}_{n}64", (t, t), t)
    for n, t in numbers[:2]:
        _fn("_%_", f"modulo_{n}64", (t, t), t)
    _fn("_+_", "add_string", (STRING, STRING), STRING)
    _fn("_+_", "add_bytes", (BYTES, BYTES), BYTES)
    _fn("_+_", "add_list", (list_of(A), list_of(A)), list_of(A))
    _fn("_+_", "add_timestamp_duration", (TIMESTAMP, DURATION), TIMESTAMP)
    _fn("_+_", "add_duration_timestamp", (DURATION, TIMESTAMP), TIMESTAMP)
    _fn("_+_", "add_duration_duration", (DURATION, DURATION), DURATION)
    _fn("_-_", "subtract_timestamp_timestamp", (TIMESTAMP, TIMESTAMP), DURATION)
    _fn("_-_", "subtract_timestamp_duration", (TIMESTAMP, DURATION), TIMESTAMP)
    _fn("_-_", "subtract_duration_duration", (DURATION, DURATION), DURATION)
    _fn("-_", "negate_int64", (INT,), INT)
    _fn("-_", "negate_double", (DOUBLE,), DOUBLE)
    _fn("!_", "logical_not", (BOOL,), BOOL)
    _fn("_&&_", "logical_and", (BOOL, BOOL), BOOL)
    _fn("_||_", "logical_or", (BOOL, BOOL), BOOL)
    _fn("_?_:_", "conditional", (BOOL, A, A), A)
    _fn("@not_strictly_false", "not_strictly_false", (BOOL,), BOOL)
    _fn("_==_", "equals", (A, A), BOOL)
    _fn("_!=_", "not_equals", (A, A), BOOL)
    ordered = (("bool", BOOL), ("string", STRING), ("bytes", BYTES), ("timestamp", TIMESTAMP),
               ("duration", DURATION))  # fmt: skip
    for op, word in (
        ("_<_", "less"),
        ("_<=_", "less_equals"),
        ("_>_", "greater"),
        ("_>=_", "greater_equals"),
    ):
        for n, t in ordered:
            _fn(op, f"{word}_{n}", (t, t), BOOL)
        # Cross-type numeric comparisons are on in Kubernetes' environment.
        for n1, t1 in numbers:
            for n2, t2 in numbers:
                _fn(op, f"{word}_{n1}64_{n2}64" if n1 != n2 else f"{word}_{n1}64", (t1, t2), BOOL)
    _fn("@in", "in_list", (A, list_of(A)), BOOL)
    _fn("@in", "in_map", (A, map_of(A, B)), BOOL)
    _fn("_[_]", "index_list", (list_of(A), INT), A)
    _fn("_[_]", "index_map", (map_of(A, B), A), B)
    for member in (False, True):
        tag = "_" if not member else ""
        _fn("size", f"{tag}size_string", (STRING,), INT, member)
        _fn("size", f"{tag}size_bytes", (BYTES,), INT, member)
        _fn("size", f"{tag}size_list", (list_of(A),), INT, member)
        _fn("size", f"{tag}size_map", (map_of(A, B),), INT, member)
    _fn("contains", "contains_string", (STRING, STRING), BOOL, True)
    _fn("startsWith", "starts_with_string", (STRING, STRING), BOOL, True)
    _fn("endsWith", "ends_with_string", (STRING, STRING), BOOL, True)
    _fn("matches", "matches", (STRING, STRING), BOOL)
    _fn("matches", "matches_string", (STRING, STRING), BOOL, True)
    for target, sources in (
        ("int", (INT, UINT, DOUBLE, STRING, TIMESTAMP)),
        ("uint", (INT, UINT, DOUBLE, STRING)),
        ("double", (INT, UINT, DOUBLE, STRING)),
        ("string", (INT, UINT, DOUBLE, BOOL, BYTES, STRING, TIMESTAMP, DURATION)),
        ("bytes", (BYTES, STRING)),
        ("bool", (BOOL, STRING)),
        ("duration", (DURATION, STRING)),
        ("timestamp", (TIMESTAMP, STRING, INT)),
    ):
        for src in sources:
            _fn(target, f"{src.name}_to_{target}", (src,), _TYPE_NAMES.get(target, _prim(target)))
    _fn("dyn", "to_dyn", (A,), DYN)
    _fn("type", "type", (A,), type_of(A))
    for part in ("getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek",
                 "getHours", "getMinutes", "getSeconds", "getMilliseconds"):  # fmt: skip
        _fn(part, f"timestamp_to_{part}", (TIMESTAMP,), INT, True)
        _fn(part, f"timestamp_to_{part}_with_tz", (TIMESTAMP, STRING), INT, True)
        if part in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
            _fn(part, f"duration_to_{part}", (DURATION,), INT, True)
    # Strings extension (version 2).
    _fn("charAt", "string_char_at_int", (STRING, INT), STRING, True)
    for name in ("indexOf", "lastIndexOf"):
        _fn(name, f"string_{name}_string", (STRING, STRING), INT, True)
        _fn(name, f"string_{name}_string_int", (STRING, STRING, INT), INT, True)
    for name in ("lowerAscii", "upperAscii", "trim"):
        _fn(name, f"string_{name}", (STRING,), STRING, True)
    _fn("replace", "string_replace_string_string", (STRING, STRING, STRING), STRING, True)
    _fn("replace", "string_replace_string_string_int", (STRING, STRING, STRING, INT), STRING, True)
    _fn("split", "string_split_string", (STRING, STRING), list_of(STRING), True)
    _fn("split", "string_split_string_int", (STRING, STRING, INT), list_of(STRING), True)
    _fn("substring", "string_substring_int", (STRING, INT), STRING, True)
    _fn("substring", "string_substring_int_int", (STRING, INT, INT), STRING, True)
    _fn("join", "list_join", (list_of(STRING),), STRING, True)
    _fn("join", "list_join_string", (list_of(STRING), STRING), STRING, True)
    _fn("format", "string_format", (STRING, list_of(DYN)), STRING, True)
    _fn("strings.quote", "strings_quote", (STRING,), STRING)
    # Kubernetes lists and regex libraries.
    _fn("isSorted", "list_is_sorted", (list_of(A),), BOOL, True)
    for name in ("sum", "min", "max"):
        _fn(name, f"list_{name}", (list_of(A),), A, True)
    _fn("indexOf", "list_a_index_of_int", (list_of(A), A), INT, True)
    _fn("lastIndexOf", "list_a_last_index_of_int", (list_of(A), A), INT, True)
    _fn("find", "string_find_n", (STRING, STRING), STRING, True)
    _fn("findAll", "string_find_all", (STRING, STRING), list_of(STRING), True)
    _fn("findAll", "string_find_all_n", (STRING, STRING, INT), list_of(STRING), True)
    # Quantities and semantic versions.
    _fn("quantity", "string_to_quantity", (STRING,), QUANTITY)
    _fn("isQuantity", "is_quantity_string", (STRING,), BOOL)
    _fn("sign", "quantity_sign", (QUANTITY,), INT)
    for name, word in (("isGreaterThan", "is_greater_than"), ("isLessThan", "is_less_than")):
        _fn(name, f"quantity_{word}", (QUANTITY, QUANTITY), BOOL, True)
        _fn(name, f"semver_{word}", (SEMVER, SEMVER), BOOL, True)
    _fn("compareTo", "quantity_compare_to", (QUANTITY, QUANTITY), INT, True)
    _fn("compareTo", "semver_compare_to", (SEMVER, SEMVER), INT, True)
    _fn("asApproximateFloat", "quantity_get_float", (QUANTITY,), DOUBLE, True)
    _fn("asInteger", "quantity_get_int", (QUANTITY,), INT, True)
    _fn("isInteger", "quantity_is_integer", (QUANTITY,), BOOL, True)
    for name in ("add", "sub"):
        _fn(name, f"quantity_{name}", (QUANTITY, QUANTITY), QUANTITY, True)
        _fn(name, f"quantity_{name}_int", (QUANTITY, INT), QUANTITY, True)
    _fn("semver", "string_to_semver", (STRING,), SEMVER)
    _fn("semver", "string_bool_to_semver", (STRING, BOOL), SEMVER)
    _fn("isSemver", "is_semver_string", (STRING,), BOOL)
    _fn("isSemver", "is_semver_string_bool", (STRING, BOOL), BOOL)
    for name in ("major", "minor", "patch"):
        _fn(name, f"semver_{name}", (SEMVER,), INT, True)
    # URLs, IPs and CIDRs.
    _fn("url", "string_to_url", (STRING,), URL)
    _fn("isURL", "is_url_string", (STRING,), BOOL)
    for name in ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"):
        _fn(name, f"url_{name}", (URL,), STRING, True)
    _fn("getQuery", "url_get_query", (URL,), map_of(STRING, list_of(STRING)), True)
    _fn("ip", "string_to_ip", (STRING,), IP)
    _fn("ip", "cidr_ip", (CIDR,), IP, True)
    _fn("isIP", "is_ip", (STRING,), BOOL)
    _fn("ip.isCanonical", "ip_is_canonical", (STRING,), BOOL)
    _fn("family", "ip_family", (IP,), INT, True)
    for name in (
        "isUnspecified",
        "isLoopback",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
    ):
        _fn(name, f"ip_{name}", (IP,), BOOL, True)
    _fn("string", "ip_to_string", (IP,), STRING)
    _fn("string", "cidr_to_string", (CIDR,), STRING)
    _fn("cidr", "string_to_cidr", (STRING,), CIDR)
    _fn("isCIDR", "is_cidr", (STRING,), BOOL)
    _fn("containsIP", "cidr_contains_ip_string", (CIDR, STRING), BOOL, True)
    _fn("containsIP", "cidr_contains_ip_ip", (CIDR, IP), BOOL, True)
    _fn("containsCIDR", "cidr_contains_cidr_string", (CIDR, STRING), BOOL, True)
    _fn("containsCIDR", "cidr_contains_cidr", (CIDR, CIDR), BOOL, True)
    _fn("masked", "cidr_masked", (CIDR,), CIDR, True)
    _fn("prefixLength", "cidr_prefix_length", (CIDR,), INT, True)
    # Sets and optionals.
    for name in ("sets.contains", "sets.equivalent", "sets.intersects"):
        _fn(name, name.replace(".", "_"), (list_of(A), list_of(A)), BOOL)
    _fn("optional.of", "optional_of", (A,), optional_of(A))
    _fn("optional.ofNonZeroValue", "optional_ofNonZeroValue", (A,), optional_of(A))
    _fn("optional.none", "optional_none", (), optional_of(DYN))
    _fn("hasValue", "optional_hasValue", (optional_of(A),), BOOL, True)
    _fn("value", "optional_value", (optional_of(A),), A, True)
    _fn("or", "optional_or_optional", (optional_of(A), optional_of(A)), optional_of(A), True)
    _fn("orValue", "optional_orValue_value", (optional_of(A), A), A, True)


_declare()

# Named formats (format.dns1123Label() and kin): each is a nullary global returning a format value.
_FORMAT = CelType("object", "kubernetes.NamedFormat")
for _name in ("dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "dns1123LabelPrefix",
              "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date",
              "datetime"):  # fmt: skip
    _fn(f"format.{_name}", f"format_{_name}", (), _FORMAT)
_fn("format.named", "format_named", (STRING,), optional_of(_FORMAT))
_fn("validate", "format_validate", (_FORMAT, STRING), optional_of(list_of(STRING)), True)

# Receiver-style macros: (name, argument count) -> how many of the arguments name iteration variables.
_MACROS: dict[tuple[str, int], int] = {
    ("all", 2): 1, ("exists", 2): 1, ("exists_one", 2): 1, ("map", 2): 1, ("map", 3): 1, ("filter", 2): 1,
    ("all", 3): 2, ("exists", 3): 2, ("existsOne", 3): 2,
    ("transformList", 3): 2, ("transformList", 4): 2, ("transformMap", 3): 2, ("transformMap", 4): 2,
    ("transformMapEntry", 3): 2, ("transformMapEntry", 4): 2,
}  # fmt: skip


def _macro_vars(name: str, count: int) -> int:
    return _MACROS.get((name, count), 0)


# ---------------------------------------------------------------------------------------------------------
# The expression tree: cel-python's parse tree, reshaped as cel-go's (calls, selects, comprehensions) and
# keeping each node's offset where cel-go reports it (an operator, a dot, an opening parenthesis).


@dataclass(eq=False, slots=True)
class Node:
    kind: str  # lit, ident, select, call, list, map, comp
    pos: int
    value: Any = None  # a literal's value; an ident's or call's name; a select's field
    args: list[Node] = field(default_factory=list)  # call args; list items; map keys and values in turn
    target: Node | None = None  # a select's operand; a member call's receiver
    test_only: bool = False
    macro: str = ""  # for comp: the macro's name
    iter_vars: tuple[str, ...] = ()
    type: CelType = DYN
    # cost bookkeeping
    path: tuple[str, ...] | None = None
    size: tuple[int, int] | None = None
    overloads: list[str] = field(default_factory=list)


class _Syntax(Exception):
    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


def _skip_ws(text: str, pos: int, step: int = 1) -> int:
    while 0 <= pos < len(text) and text[pos].isspace():
        pos += step
    return pos


def _unquote(token: str) -> str | bytes:
    is_bytes = token[:1] in "bB"
    body = token[1:] if is_bytes else token
    raw = body[:1] in "rR"
    body = body[1:] if raw else body
    quote = 3 if body[:3] in ('"""', "'''") else 1
    body = body[quote:-quote]
    if not raw:
        # Only the decoded length matters (for the cost estimate): an escape Python cannot decode stays as is.
        with contextlib.suppress(UnicodeDecodeError):
            body = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    return body.encode() if is_bytes else body


class _Builder:
    def __init__(self, text: str) -> None:
        self.text = text

    def after(self, end: int) -> int:
        return _skip_ws(self.text, end)

    def build(self, tree: Any) -> Node:
        built: Node = getattr(self, f"_{tree.data}")(tree)
        return built

    def _expr(self, t: Any) -> Node:
        if len(t.children) == 1:
            return self.build(t.children[0])
        cond, yes, no = (self.build(c) for c in t.children)
        return Node("call", self.after(t.children[0].meta.end_pos), "_?_:_", [cond, yes, no])

    def _binary(self, t: Any, name: str) -> Node:
        if len(t.children) == 1:
            return self.build(t.children[0])
        left, right = t.children
        return Node("call", self.after(left.meta.end_pos), name, [self.build(left), self.build(right)])

    def _conditionalor(self, t: Any) -> Node:
        return self._binary(t, "_||_")

    def _conditionaland(self, t: Any) -> Node:
        return self._binary(t, "_&&_")

    def _chain(self, t: Any, names: dict[str, str]) -> Node:
        if len(t.children) == 1:
            return self.build(t.children[0])
        op, right = t.children
        (left,) = op.children
        return Node(
            "call", self.after(left.meta.end_pos), names[op.data], [self.build(left), self.build(right)]
        )

    def _relation(self, t: Any) -> Node:
        return self._chain(t, {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_",
                               "relation_ge": "_>=_", "relation_eq": "_==_", "relation_ne": "_!=_",
                               "relation_in": "@in"})  # fmt: skip

    def _addition(self, t: Any) -> Node:
        return self._chain(t, {"addition_add": "_+_", "addition_sub": "_-_"})

    def _multiplication(self, t: Any) -> Node:
        return self._chain(t, {"multiplication_mul": "_*_", "multiplication_div": "_/_",
                               "multiplication_mod": "_%_"})  # fmt: skip

    def _unary(self, t: Any) -> Node:
        if len(t.children) == 1:
            return self.build(t.children[0])
        op, operand = t.children
        return Node("call", t.meta.start_pos, "!_" if op.data == "unary_not" else "-_", [self.build(operand)])

    def _member(self, t: Any) -> Node:
        return self.build(t.children[0])

    _primary = _member
    _paren_expr = _member

    def _member_dot(self, t: Any) -> Node:
        operand, name = t.children
        dot = _skip_ws(self.text, name.start_pos - 1, -1)
        return Node("select", dot, str(name), target=self.build(operand))

    def _exprs(self, t: Any | None) -> list[Node]:
        return [self.build(c) for c in t.children] if t is not None else []

    def _member_dot_arg(self, t: Any) -> Node:
        operand, name, *rest = t.children
        args = self._exprs(rest[0] if rest else None)
        return self._call(str(name), self.after(name.end_pos), args, self.build(operand))

    def _member_index(self, t: Any) -> Node:
        operand, index = t.children
        return Node(
            "call", self.after(operand.meta.end_pos), "_[_]", [self.build(operand), self.build(index)]
        )

    def _member_object(self, t: Any) -> Node:
        raise _Syntax(t.meta.start_pos, "message construction is not supported in a device selector")

    def _ident_arg(self, t: Any) -> Node:
        name, *rest = t.children
        return self._call(str(name), self.after(name.end_pos), self._exprs(rest[0] if rest else None), None)

    _dot_ident_arg = _ident_arg

    def _ident(self, t: Any) -> Node:
        (name,) = t.children
        return Node("ident", name.start_pos, str(name))

    _dot_ident = _ident

    def _list_lit(self, t: Any) -> Node:
        return Node("list", t.meta.start_pos, args=self._exprs(t.children[0] if t.children else None))

    def _map_lit(self, t: Any) -> Node:
        return Node("map", t.meta.start_pos, args=self._exprs(t.children[0] if t.children else None))

    def _literal(self, t: Any) -> Node:
        (token,) = t.children
        text, kind = str(token), token.type
        value: Any
        if kind == "BOOL_LIT":
            value = text == "true"
        elif kind == "NULL_LIT":
            value = None
        elif kind == "INT_LIT":
            value = int(text, 16) if "x" in text.lower() else int(text)
        elif kind == "UINT_LIT":
            value = ("uint", int(text[:-1], 16) if "x" in text.lower() else int(text[:-1]))
        elif kind == "FLOAT_LIT":
            value = float(text)
        else:
            value = _unquote(text)
        return Node("lit", token.start_pos, value)

    def _call(self, name: str, pos: int, args: list[Node], target: Node | None) -> Node:
        if target is None and name == "has":
            if len(args) != 1 or args[0].kind != "select":
                raise _Syntax(pos, "invalid argument to has() macro")
            sel = args[0]
            return Node("select", pos, sel.value, target=sel.target, test_only=True)
        if target is not None and target.kind == "ident" and target.value == "cel" and name == "bind":
            if len(args) != 3 or args[0].kind != "ident":
                raise _Syntax(pos, "cel.bind() variable name must be a simple identifier")
            return Node("comp", pos, args=[args[1], args[2]], macro="bind", iter_vars=(args[0].value,))
        vars_count = _macro_vars(name, len(args)) if target is not None else 0
        if target is not None and vars_count:
            names = args[:vars_count]
            for v in names:
                if v.kind != "ident":
                    raise _Syntax(v.pos, "argument must be a simple name")
            return Node("comp", pos, args=[target, *args[vars_count:]], macro=name,
                        iter_vars=tuple(v.value for v in names))  # fmt: skip
        return Node("call", pos, name, args, target)


def _location(text: str, pos: int) -> tuple[int, int]:
    before = text[:pos]
    line = before.count("\n") + 1
    return line, pos - (before.rfind("\n") + 1)


def _display(text: str, pos: int, message: str) -> str:
    """One error as cel-go prints it: position (column counted from 1), the line, a caret under the spot."""
    line, column = _location(text, pos)
    snippet = text.split("\n")[line - 1].replace("\t", " ")
    out = f"ERROR: <input>:{line}:{column + 1}: {message}"
    if len(snippet) <= 16384:
        marks = "".join("\uff0e" if ord(ch) > 127 else "." for ch in snippet[:column])
        caret = "\uff3e" if column < len(snippet) and ord(snippet[column]) > 127 else "^"
        out += f"\n | {snippet}\n | {marks}{caret}"
    return out


# ---------------------------------------------------------------------------------------------------------
# The checker.


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


class _Checker:
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
        return _TYPE_NAMES.get(name) and type_of(_TYPE_NAMES[name])

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
            fields = _OBJECT_FIELDS.get(operand.name, {})
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
            if qualified is not None and f"{qualified}.{name}" in _DECLS:
                name, target = f"{qualified}.{name}", None
                node.value, node.target = name, None
        decls = _DECLS.get(name)
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


# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SelectorVerdict:
    """Why the API server refuses a selector: its error type (as kubectl prints it) and its detail."""

    kind: str  # "Invalid value", "Too long", "Forbidden"
    detail: str

    def api_text(self, expression: str) -> str:
        if self.kind == "Invalid value":
            return f'Invalid value: "{_go_quote(expression)}": {self.detail}'
        return f"{self.kind}: {self.detail}"


def _go_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def _parse(expression: str) -> Any:
    from volcano_py.api.dra_cel import _environment  # the same cached parser the evaluator uses

    return _environment().compile(expression)


@functools.lru_cache(maxsize=4096)
def check_selector(expression: str) -> SelectorVerdict | None:
    """The API server's objection to ``expression`` as a new DRA selector, or None when it accepts it."""
    if len(expression.encode()) > MAX_LENGTH:
        return SelectorVerdict("Too long", f"may not be more than {MAX_LENGTH} bytes")
    try:
        tree = _parse(expression)
    except CELParseError as err:
        line, column = getattr(err, "line", None), getattr(err, "column", None)
        pos = _offset(expression, line, column)
        what = "Syntax error: the expression does not parse from here"
        return SelectorVerdict("Invalid value", "compilation failed: " + _display(expression, pos, what))
    try:
        root = _Builder(expression).build(tree)
    except _Syntax as err:
        return SelectorVerdict(
            "Invalid value", "compilation failed: " + _display(expression, err.pos, err.message)
        )
    checker = _Checker(expression)
    result = checker.check(root)
    if checker.errors:
        ordered = sorted(checker.errors, key=lambda e: _location(expression, e[0]))
        shown = "\n".join(_display(expression, pos, msg) for pos, msg in ordered[:100])
        return SelectorVerdict("Invalid value", "compilation failed: " + shown)
    if result != BOOL and result != ANY:
        return SelectorVerdict("Invalid value", f"must evaluate to bool or the unknown type, not {result}")
    if estimated_cost(root) > MAX_COST:
        return SelectorVerdict("Forbidden", "too complex, exceeds cost limit")
    return None


def _offset(text: str, line: int | None, column: int | None) -> int:
    if line is None or column is None:
        return len(text)
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + max(column - 1, 0)


def estimated_cost(root: Node) -> int:
    return _Coster().cost(root)[1]


def selector_cost(expression: str) -> int:
    """The worst-case cost the API server estimates for a selector that type-checks (for tests and tools)."""
    root = _Builder(expression).build(_parse(expression))
    _Checker(expression).check(root)
    return estimated_cost(root)


__all__ = ["MAX_COST", "MAX_LENGTH", "CelType", "SelectorVerdict", "check_selector", "selector_cost"]
