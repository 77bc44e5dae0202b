"""Quantities parse exactly and resource vectors obey the arithmetic the scheduler relies on."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from functools import reduce

import pytest
from hypothesis import given
from hypothesis import strategies as st

from volcano_py.resources import (
    EMPTY,
    QuantityError,
    Resource,
    Tally,
    count_into,
    format_quantity,
    parse_quantity,
    pod_limits,
    pod_quota_usage,
    to_canonical,
    total,
    total_counted,
    unit_scale,
)

NAMES = [
    "cpu",
    "memory",
    "pods",
    "nvidia.com/gpu",
    "ephemeral-storage",
    "hugepages-2Mi",
    "example.com/fpga",
    "requests.memory",
    "limits.cpu",
    "count/pods",
]
names = st.sampled_from(NAMES)
amounts = st.integers(min_value=-(10**15), max_value=10**15)
non_negative = st.integers(min_value=0, max_value=10**15)
vectors = st.dictionaries(names, amounts, max_size=len(NAMES)).map(Resource)
requests = st.dictionaries(names, non_negative, max_size=len(NAMES)).map(Resource)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("100m", Fraction(1, 10)),
        ("1.5", Fraction(3, 2)),
        ("4Gi", 4 * 2**30),
        ("500Mi", 500 * 2**20),
        ("1e3", 1000),
        ("1E-3", Fraction(1, 1000)),
        ("2k", 2000),
        ("-1", -1),
        ("+.5", Fraction(1, 2)),
        ("10n", Fraction(10, 10**9)),
        (" 2 ", 2),
        (7, 7),
        (0.1, Fraction(1, 10)),
    ],
)
def test_quantities_parse_exactly(text: str | int | float, value: Fraction | int) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "4GB", "1Ki2", "e3", "--1", "1 Gi"])
def test_bad_quantities_say_what_forms_work(text: str) -> None:
    with pytest.raises(QuantityError, match=r"is not a Kubernetes quantity \(use forms like '500m'"):
        parse_quantity(text)


@pytest.mark.parametrize("value", [True, float("nan"), float("inf")])
def test_non_quantities_are_refused(value: bool | float) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value)


def test_finer_than_canonical_rounds_up_like_milli_value() -> None:
    assert to_canonical("cpu", "0.0001") == 1
    assert to_canonical("cpu", "1500u") == 2
    assert to_canonical("memory", "0.5") == 1
    assert to_canonical("nvidia.com/gpu", "500m") == 500


@pytest.mark.parametrize(
    ("name", "amount", "shown"),
    [
        pytest.param("nvidia.com/gpu", 76800, "76.8", id="a-share-of-gpus-as-a-count"),
        pytest.param("nvidia.com/gpu", 500, "0.5", id="half-a-gpu"),
        pytest.param("nvidia.com/gpu", 8000, "8", id="whole-gpus"),
        pytest.param("nvidia.com/gpu", 1250, "1.25", id="thousandths-kept"),
        pytest.param("cpu", 1500, "1500m", id="cpu-stays-in-millicores"),
    ],
)
def test_devices_are_shown_as_counts_not_milli_units(name: str, amount: int, shown: str) -> None:
    assert format_quantity(name, amount) == shown


@given(names, amounts)
def test_format_then_parse_is_the_identity(name: str, amount: int) -> None:
    assert to_canonical(name, format_quantity(name, amount)) == amount


@given(st.integers(min_value=0, max_value=10**9), st.sampled_from(["Ki", "Mi", "Gi", "Ti"]))
def test_binary_suffixes_are_powers_of_two(n: int, suffix: str) -> None:
    power = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40}[suffix]
    assert to_canonical("memory", f"{n}{suffix}") == n * 2**power


@given(st.decimals(min_value=-(10**9), max_value=10**9, places=6, allow_nan=False, allow_infinity=False))
def test_decimal_strings_parse_without_float_rounding(value: Decimal) -> None:
    assert parse_quantity(str(value)) == Fraction(value)


@given(names, non_negative)
def test_canonical_unit_scale(name: str, amount: int) -> None:
    assert to_canonical(name, amount) == amount * unit_scale(name)


@given(vectors, vectors)
def test_addition_commutes(a: Resource, b: Resource) -> None:
    assert a + b == b + a


_ALIKE = st.sampled_from([Resource({"cpu": 1000}), Resource({"cpu": 2000, "memory": 5}), EMPTY])


@given(st.lists(_ALIKE) | st.lists(vectors))
def test_a_counted_sum_is_the_plain_sum_names_in_the_same_order(many: list[Resource]) -> None:
    counts: Tally = {}
    for resource in many:
        count_into(counts, resource)
    counted = total_counted(counts)
    assert counted == total(many)
    assert list(counted) == list(total(many))


@given(vectors, vectors, vectors)
def test_addition_associates(a: Resource, b: Resource, c: Resource) -> None:
    assert (a + b) + c == a + (b + c)


@given(vectors, vectors)
def test_subtraction_undoes_addition(a: Resource, b: Resource) -> None:
    assert (a + b) - b == a


@given(vectors)
def test_empty_is_the_identity_and_zeros_are_not_stored(a: Resource) -> None:
    assert a + EMPTY == a
    assert a - a == EMPTY
    assert (a - a).is_zero()
    assert Resource({"cpu": 0, "memory": 0}) == EMPTY
    assert hash(Resource({"cpu": 0})) == hash(EMPTY)


@given(vectors, vectors)
def test_equal_vectors_hash_equal(a: Resource, b: Resource) -> None:
    assert hash(a + b) == hash(b + a)


@given(requests, requests)
def test_a_request_fits_in_itself_plus_anything(a: Resource, b: Resource) -> None:
    assert a <= a + b
    assert (a + b) >= a
    assert a.fits_in(a + b)
    assert a.insufficient(a + b) == []


@given(requests, requests)
def test_fits_agrees_with_insufficient(request: Resource, available: Resource) -> None:
    assert request.fits_in(available) == (request.insufficient(available) == [])
    for name in request.insufficient(available):
        assert request[name] > available.amount(name)


@given(requests, st.integers(min_value=1, max_value=10**6))
def test_a_request_does_not_fit_when_one_resource_is_short(request: Resource, short: int) -> None:
    for name in request:
        available = request - Resource({name: min(short, request[name])})
        assert not request.fits_in(available)
        assert request.insufficient(available) == [name]


@given(vectors, st.integers(min_value=0, max_value=50))
def test_multiplication_is_repeated_addition(a: Resource, k: int) -> None:
    assert a * k == reduce(lambda acc, _: acc + a, range(k), EMPTY)
    assert k * a == a * k


@given(st.lists(vectors, max_size=8))
def test_total_is_the_sum(vs: list[Resource]) -> None:
    assert total(vs) == reduce(lambda x, y: x + y, vs, EMPTY)


@given(vectors, vectors)
def test_min_and_max_bound_both_sides(a: Resource, b: Resource) -> None:
    low, high = a.min_with(b), a.max_with(b)
    for name in set(a) | set(b):
        assert low.amount(name) == min(a.amount(name), b.amount(name))
        assert high.amount(name) == max(a.amount(name), b.amount(name))
    assert low + high == a + b


@given(vectors)
def test_clamp_min_zero_drops_negatives_only(a: Resource) -> None:
    clamped = a.clamp_min_zero()
    assert all(v > 0 for v in clamped.values())
    assert all(clamped.amount(n) == max(a.amount(n), 0) for n in a)


@given(requests)
def test_quantities_round_trip(a: Resource) -> None:
    assert Resource.parse(a.to_quantities()) == a
    assert list(a.to_quantities()) == sorted(a)


def test_readable_repr() -> None:
    r = Resource.of(cpu="1500m", memory="4Gi", gpu=8)
    assert repr(r) == "Resource(cpu=1500m, memory=4Gi, nvidia.com/gpu=8)"


def test_parse_names_the_bad_resource() -> None:
    with pytest.raises(QuantityError, match=r"^resource 'memory': 'lots' is not a Kubernetes quantity"):
        Resource.parse({"cpu": "1", "memory": "lots"})


@pytest.mark.parametrize(
    ("name", "text", "canonical", "written"),
    [
        pytest.param("requests.memory", "2000Mi", 2000 * 2**20, "2000Mi", id="requests.memory-in-bytes"),
        pytest.param("limits.cpu", "1500m", 1500, "1500m", id="limits.cpu-in-millicores"),
        pytest.param("requests.nvidia.com/gpu", "2", 2000, "2", id="requests.extended-in-milli-units"),
        pytest.param("count/pods", "3", 3, "3", id="object-count-as-a-count"),
        pytest.param("requests.hugepages-2Mi", "4Mi", 4 * 2**20, "4Mi", id="requests.hugepages-in-bytes"),
    ],
)
def test_quota_names_take_the_unit_of_what_they_count(
    name: str, text: str, canonical: int, written: str
) -> None:
    assert to_canonical(name, text) == canonical
    assert format_quantity(name, canonical) == written


def _containers(*resources: dict[str, dict[str, str]]) -> list[dict[str, object]]:
    return [{"name": f"c{i}", "resources": r} for i, r in enumerate(resources)]


@pytest.mark.parametrize(
    ("spec", "usage"),
    [
        pytest.param(
            {"containers": _containers({})},
            {"pods": "1", "count/pods": "1"},
            id="best-effort-pod-counts-as-a-pod-only",
        ),
        pytest.param(
            {"containers": _containers({"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}})},
            {
                "pods": "1",
                "count/pods": "1",
                "cpu": "1",
                "requests.cpu": "1",
                "limits.cpu": "2",
                # a limit with no request is the request, as the API server defaults it
                "memory": "1Gi",
                "requests.memory": "1Gi",
                "limits.memory": "1Gi",
            },
            id="requests-and-limits",
        ),
        pytest.param(
            {
                "containers": _containers(
                    {"requests": {"example.com/fpga": "2"}, "limits": {"example.com/fpga": "2"}}
                )
            },
            {"pods": "1", "count/pods": "1", "example.com/fpga": "2", "requests.example.com/fpga": "2"},
            id="extended-resource-has-no-limits-name",
        ),
        pytest.param(
            {
                "containers": _containers(
                    {"requests": {"hugepages-2Mi": "4Mi"}, "limits": {"hugepages-2Mi": "4Mi"}}
                )
            },
            {"pods": "1", "count/pods": "1", "hugepages-2Mi": "4Mi", "requests.hugepages-2Mi": "4Mi"},
            id="hugepages",
        ),
    ],
)
def test_pod_quota_usage_uses_the_quota_controllers_names(
    spec: dict[str, object], usage: dict[str, str]
) -> None:
    assert pod_quota_usage(spec).to_quantities() == dict(sorted(usage.items()))


def test_pod_limits_add_overhead_only_where_a_limit_is_set() -> None:
    spec = {
        "containers": _containers({"limits": {"cpu": "1"}}, {"limits": {"cpu": "500m"}}),
        "initContainers": _containers({"limits": {"cpu": "2"}}),
        "overhead": {"cpu": "100m", "memory": "64Mi"},
    }
    assert pod_limits(spec) == Resource.of(cpu="2100m")


def test_without_quota_only_keeps_what_pods_ask_of_nodes() -> None:
    got = Resource.parse(
        {
            "pods": "2",
            "count/pods": "2",
            "cpu": "2",
            "requests.cpu": "2",
            "limits.memory": "1Gi",
            "x.io/y": "1",
        }
    ).without_quota_only()
    assert got == Resource.parse({"cpu": "2", "x.io/y": "1"})
