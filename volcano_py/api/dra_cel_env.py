"""The environment a DRA device selector is compiled in, as the API server declares it.

The type checker and the cost estimator need the same vocabulary: CEL's types, the ``device`` object a
selector sees, and the overloads of every function a new selector may call. Kept apart from both so each
reads one declaration of it, and so a newer Kubernetes version's library changes land in one place.
"""

from __future__ import annotations

from dataclasses import dataclass


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


# The device as Kubernetes v1.34 declares it with the DRAConsumableCapacity gate off (its default): no
# ``allowMultipleAllocations`` field, so a selector using it is refused there.
DEVICE = CelType("object", "kubernetes.DRADevice")
_DEVICE_FIELDS: dict[str, CelType] = {
    "driver": STRING,
    "attributes": map_of(STRING, map_of(STRING, ANY)),
    "capacity": map_of(STRING, map_of(STRING, QUANTITY)),
}
OBJECT_FIELDS: dict[str, dict[str, CelType]] = {DEVICE.name: _DEVICE_FIELDS}

TYPE_NAMES: dict[str, CelType] = {
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


DECLS: dict[str, list[Overload]] = {}


def _fn(name: str, oid: str, args: tuple[CelType, ...], result: CelType, member: bool = False) -> None:
    DECLS.setdefault(name, []).append(Overload(oid, member, args, result))


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
            _fn(target, f"{src.name}_to_{target}", (src,), TYPE_NAMES.get(target, _prim(target)))
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
