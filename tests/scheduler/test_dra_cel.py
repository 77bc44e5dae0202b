"""Device selectors in CEL over one device, with Kubernetes' quantity and semver methods; and the allocator's
search over a node's devices (requests, counts, constraints), table by table."""

from __future__ import annotations

from fractions import Fraction

import pytest

from volcano_py.api.dra_cel import (
    DeviceView,
    SelectorCompileError,
    compile_selector,
    evaluate,
    parse_semver,
)
from volcano_py.scheduler.framework.dra import (
    Chosen,
    Claim,
    ClassSpec,
    Constraint,
    DeviceEntry,
    NoFit,
    RequestSpec,
    choose_devices,
)

D = "gpu.example.com"
VIEW: DeviceView = (
    D,
    (
        (D, "model", "a100"),
        (D, "cores", 108),
        (D, "mig", False),
        (D, "driverVersion", parse_semver("1.10.2")),
        ("other.example.com", "rack", "r1"),
    ),
    ((D, "memory", Fraction(80 * 2**30)),),
)


@pytest.mark.parametrize(
    ("expression", "matches"),
    [
        (f'device.driver == "{D}"', True),
        (f'device.attributes["{D}"].model == "a100"', True),
        (f'device.attributes["{D}"].cores > 100 && !device.attributes["{D}"].mig', True),
        (f'device.capacity["{D}"].memory.compareTo(quantity("80Gi")) >= 0', True),
        (f'device.capacity["{D}"].memory.isGreaterThan(quantity("80Gi"))', False),
        (f'device.capacity["{D}"].memory.isLessThan(quantity("100G"))', True),
        (f'device.capacity["{D}"].memory.asInteger() == {80 * 2**30}', True),
        (f'device.attributes["{D}"].driverVersion.isGreaterThan(semver("1.9.0"))', True),
        (f'device.attributes["{D}"].driverVersion.major() == 2', False),
        ('device.attributes["other.example.com"].rack == "r1"', True),
        (f'"model" in device.attributes["{D}"] && !("x" in device.attributes["{D}"])', True),
    ],
)
def test_selectors_see_attributes_and_capacities_by_domain(expression: str, matches: bool) -> None:
    outcome = evaluate(expression, VIEW)
    assert (outcome.matches, outcome.error) == (matches, "")


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        (f'device.attributes["{D}"].missing == 1', "no such member"),
        (f'device.capacity["{D}"].memory >= quantity("1Gi")', "failed"),
        ('device.attributes["nope.example.com"].model == "a"', "no such key"),
        ("1", "returned IntType, not a bool"),
    ],
)
def test_a_selector_that_fails_on_a_device_says_so(expression: str, error: str) -> None:
    outcome = evaluate(expression, VIEW)
    assert not outcome.matches
    assert error in outcome.error and expression in outcome.error


def test_a_selector_that_does_not_parse_is_named() -> None:
    with pytest.raises(SelectorCompileError, match=r"CEL selector 'device.driver ==' does not compile"):
        compile_selector("device.driver ==")


def test_semver_orders_releases_after_their_prereleases() -> None:
    assert parse_semver("1.2.3-rc.1") < parse_semver("1.2.3") < parse_semver("1.10.0")


def _dev(name: str, model: str = "a100") -> DeviceEntry:
    return DeviceEntry((D, "n1", name), (D, ((D, "model", model),), ()), {f"{D}/model": model})


CLASSES = {"gpu": ClassSpec("gpu", (f'device.driver == "{D}"',), ())}


def _claim(*requests: RequestSpec, constraints: tuple[Constraint, ...] = ()) -> Claim:
    return Claim("default", "c", "u", requests, constraints)


@pytest.mark.parametrize(
    ("claims", "devices", "held", "expected"),
    [
        pytest.param(
            [_claim(RequestSpec("r", "gpu", (), False, 2))],
            [_dev("a"), _dev("b"), _dev("c")],
            {(D, "n1", "a")},
            {"default/c": [("r", "b"), ("r", "c")]},
            id="exact-count-skips-held",
        ),
        pytest.param(
            [_claim(RequestSpec("r", "gpu", (), False, 3))],
            [_dev("a"), _dev("b")],
            set(),
            "have fewer than 3 free gpu devices for ResourceClaim default/c (request r)",
            id="too-few",
        ),
        pytest.param(
            [
                _claim(
                    RequestSpec("x", "gpu", (), False, 1),
                    RequestSpec("y", "gpu", (), False, 1),
                    constraints=(Constraint(None, f"{D}/model"),),
                )
            ],
            [_dev("a", "h100"), _dev("b", "a100"), _dev("c", "a100")],
            set(),
            {"default/c": [("x", "b"), ("y", "c")]},
            id="match-attribute-backtracks-past-the-first-device",
        ),
        pytest.param(
            [
                _claim(
                    RequestSpec("x", "gpu", (), False, 1),
                    RequestSpec("y", "gpu", (), False, 1),
                    constraints=(Constraint(None, f"{D}/model"),),
                )
            ],
            [_dev("a", "h100"), _dev("b", "a100")],
            set(),
            f"have no devices for ResourceClaim default/c that share attribute {D}/model",
            id="match-attribute-impossible",
        ),
        pytest.param(
            [_claim(RequestSpec("r", "gpu", (), True, 0))],
            [_dev("a"), _dev("b")],
            {(D, "n1", "b")},
            "have gpu devices for ResourceClaim default/c (request r) held by another claim",
            id="all-mode-needs-every-device-free",
        ),
        pytest.param(
            [
                _claim(
                    RequestSpec(
                        "r", "gpu", ('device.attributes["gpu.example.com"].model == "h100"',), False, 1
                    )
                )
            ],
            [_dev("a"), _dev("b", "h100")],
            set(),
            {"default/c": [("r", "b")]},
            id="request-selector",
        ),
    ],
)
def test_choose_devices(
    claims: list[Claim], devices: list[DeviceEntry], held: set[tuple[str, str, str]], expected: object
) -> None:
    chosen = choose_devices(claims, devices, held, CLASSES)
    if isinstance(expected, str):
        assert isinstance(chosen, NoFit)
        assert expected in chosen.reason
    else:
        assert isinstance(chosen, Chosen)
        got = {key: [(r, d[2]) for r, d in results] for key, results in chosen.results.items()}
        assert got == expected
