"""DRA CEL selectors and the API server's verdict on each (Kubernetes v1.34), shared by the offline tests
(tests/api/test_dra_selector_check.py) and the check against a real kube-apiserver
(tests/integration/test_dra_selector_apiserver.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    id: str
    expression: str
    # The API server's words after the field path ("Invalid value: ..."), None when it accepts the selector.
    refusal: str | None
    # False where only the verdict is ours to match: cel-go's syntax error details are not reproduced.
    same_words: bool = True


_LONG = "a" * 10240


def _three_loops(terms: int) -> str:
    """Three nested loops over 32 x 32 x 32 entries; each term adds about 196,600 to the estimated cost."""
    body = " && ".join(f"device.attributes[e].size() > {i}" for i in range(terms))
    return f"device.attributes.all(d, device.attributes[d].all(n, device.attributes.all(e, {body})))"


CASES = [
    Case("driver-equals", 'device.driver == "gpu.example.com"', None),
    Case("attribute-equals", 'device.attributes["gpu.example.com"].model == "a100"', None),
    Case(
        "capacity-compare", 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', None
    ),
    Case("has-attribute", 'has(device.attributes["x"].y)', None),
    Case("attribute-is-unknown-type", 'device.attributes["x"].ready', None),
    Case("attribute-vs-int", 'device.attributes["x"].cores > 4', None),
    Case("semver", 'device.attributes["x"].driverVersion.isGreaterThan(semver("1.2.3"))', None),
    Case(
        "bind", 'cel.bind(a, device.attributes["gpu.example.com"], a.model == "a100" && a.cores >= 8)', None
    ),
    Case("exists-over-domains", 'device.attributes.exists(d, d.startsWith("gpu"))', None),
    Case("sign-global", 'sign(device.capacity["x"].memory) > 0', None),
    Case("select-on-unknown", 'device.attributes["x"].y.z == 1', None),
    Case("exists-one", 'device.attributes["x"].exists_one(n, n == "a")', None),
    Case("filter", 'size(device.attributes["x"].filter(n, n.startsWith("a"))) > 0', None),
    Case("map", 'device.attributes["x"].map(n, n).size() > 0', None),
    Case("two-variable-all", "device.attributes.all(d, attrs, attrs.size() < 100)", None),
    Case("transform-list", "device.attributes.transformList(d, attrs, attrs.size()).sum() > 1", None),
    Case("cross-type-numbers", "1 < 2.0", None),
    Case("quantity-equality", 'device.capacity["x"].memory == quantity("1Gi")', None),
    Case("optional", "optional.of(1).hasValue()", None),
    Case("strings-library", 'device.driver.split(".").size() > 1 && device.driver.lowerAscii() == "a"', None),
    Case("regex-find", 'device.driver.find("[a-z]+") == "a"', None),
    Case("ip-and-url", 'ip("10.0.0.1").family() == 4 && url("https://x").getHost() == "x"', None),
    Case("is-quantity", 'isQuantity(device.attributes["x"].q)', None),
    Case(
        "matches-in-loops",
        'device.attributes.all(d, device.attributes[d].all(n, device.attributes[d][n].matches("a.*b")))',
        None,
    ),
    Case("list-macros", "[1, 2, 3].map(x, x * 2).sum() > 3", None),
    Case("has-driver", "has(device.driver)", None),
    Case("timestamps", 'timestamp("2020-01-01T00:00:00Z") < timestamp("2021-01-01T00:00:00Z")', None),
    Case("in-list", 'device.attributes["x"].model in ["a100", "h100"]', None),
    Case("sets", 'sets.contains(["a"], ["a"])', None),
    Case("contains-attribute", 'device.driver.contains(device.attributes["x"].s)', None),
    Case(
        "capacity-loops",
        "device.capacity.all(d, device.capacity[d].all(n, "
        'device.capacity[d][n].isGreaterThan(quantity("1"))))',
        None,
    ),
    Case("arithmetic-on-unknown", 'device.attributes["x"].c % 2 == 0 || !device.attributes["x"].b', None),
    Case("named-format", "format.dns1123Label().validate(device.driver).hasValue()", None),
    Case("three-loops-under-cost-limit", _three_loops(4), None),
    Case("at-length-limit", 'device.driver == "' + _LONG[: 10240 - 19] + '"', None),
    Case(
        "not-bool",
        "device.driver",
        'Invalid value: "device.driver": must evaluate to bool or the unknown type, not string',
    ),
    Case(
        "dyn-is-not-bool",
        "dyn(device.driver)",
        'Invalid value: "dyn(device.driver)": must evaluate to bool or the unknown type, not dyn',
    ),
    Case(
        "undeclared-variable",
        "foo == 1",
        'Invalid value: "foo == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to '
        "'foo' (in container '')\n | foo == 1\n | ^",
    ),
    Case(
        "quantity-vs-int",
        'device.capacity["d"].memory > 1',
        'Invalid value: "device.capacity[\\"d\\"].memory > 1": compilation failed: ERROR: <input>:1:29: '
        "found no matching overload for '_>_' applied to '(kubernetes.Quantity, int)'\n"
        ' | device.capacity["d"].memory > 1\n | ............................^',
    ),
    Case(
        "string-vs-int",
        "device.driver == 1",
        'Invalid value: "device.driver == 1": compilation failed: ERROR: <input>:1:15: '
        "found no matching overload for '_==_' applied to '(string, int)'\n"
        " | device.driver == 1\n | ..............^",
    ),
    Case(
        "undefined-field",
        'device.model == "a100"',
        'Invalid value: "device.model == \\"a100\\"": compilation failed: ERROR: <input>:1:7: '
        "undefined field 'model'\n | device.model == \"a100\"\n | ......^",
    ),
    Case(
        "multi-allocation-gated-off",
        "device.allowMultipleAllocations",
        'Invalid value: "device.allowMultipleAllocations": compilation failed: ERROR: <input>:1:7: '
        "undefined field 'allowMultipleAllocations'\n | device.allowMultipleAllocations\n | ......^",
    ),
    Case(
        "sign-is-not-a-method",
        'device.capacity["x"].memory.sign() > 0',
        'Invalid value: "device.capacity[\\"x\\"].memory.sign() > 0": compilation failed: ERROR: '
        "<input>:1:33: found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'\n"
        ' | device.capacity["x"].memory.sign() > 0\n | ................................^',
    ),
    Case(
        "mixed-list",
        'device.driver in ["a", 1]',
        'Invalid value: "device.driver in [\\"a\\", 1]": compilation failed: ERROR: <input>:1:24: '
        "expected type 'string' but found 'int'\n | device.driver in [\"a\", 1]\n | .......................^",
    ),
    Case(
        "syntax-error",
        "device.driver ==",
        'Invalid value: "device.driver ==": compilation failed: ERROR: <input>:1:',
        same_words=False,
    ),
    Case(
        "too-long",
        'device.driver == "' + _LONG + '"',
        "Too long: may not be more than 10240 bytes",
    ),
    Case(
        "nested-loops-too-costly",
        "device.attributes.all(d, device.attributes[d].all(n, device.attributes.all(e, "
        "device.attributes[e].all(m, device.attributes[d][n] == device.attributes[e][m]))))",
        "Forbidden: too complex, exceeds cost limit",
    ),
    Case("three-loops-over-cost-limit", _three_loops(5), "Forbidden: too complex, exceeds cost limit"),
    Case(
        "select-on-unknown-is-dyn",
        'device.attributes["x"].y.z',
        'Invalid value: "device.attributes[\\"x\\"].y.z": must evaluate to bool or the unknown type, not dyn',
    ),
    Case(
        "has-undefined-field",
        "has(device.foo)",
        "Invalid value: \"has(device.foo)\": compilation failed: ERROR: <input>:1:4: undefined field 'foo'\n"
        " | has(device.foo)\n | ...^",
    ),
    Case(
        "string-vs-int-literals",
        '"a100" > 1',
        'Invalid value: "\\"a100\\" > 1": compilation failed: ERROR: <input>:1:8: found no matching overload '
        "for '_>_' applied to '(string, int)'\n | \"a100\" > 1\n | .......^",
    ),
    Case(
        "quantity-inequality-unbounded-cost",
        'device.capacity["x"].memory != quantity("1")',
        "Forbidden: too complex, exceeds cost limit",
    ),
]
