"""What volcano-py can allocate of a ResourceClaim's devices, and what its selectors must be: one set of rules
for the scheduler (a claim it cannot allocate keeps its pods pending, the rule's words as the reason) and for
``volcano-py validate`` (a manifest with such a claim, template or DeviceClass is reported before it is
applied).

Not implemented, so refused: prioritized lists (``firstAvailable``), ``adminAccess``, consumable capacity
(``capacity.requests``) and ``distinctAttribute`` constraints. A CEL selector is refused where the API server
refuses it (``dra_cel_check``), in its words followed by ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from volcano_py.api import dra
from volcano_py.api.dra_cel import SelectorCompileError, compile_selector
from volcano_py.api.dra_cel_check import MAX_COST, MAX_LENGTH, SelectorVerdict, check_selector
from volcano_py.api.problems import Problem, from_validation_error, join_path

_NOT_HERE = "is not supported by volcano-py"

# What to do about each kind of refusal, after the API server's own words.
_SELECTOR_FIX = {
    "Too long": f"shorten it to {MAX_LENGTH} bytes or split it into several selectors (all must match)",
    "Forbidden": (
        f"its estimated worst-case cost is over {MAX_COST}: nested loops over device.attributes or "
        "device.capacity multiply it; look attributes up by name, or split it into several selectors"
    ),
    "bool": 'make it a condition that is true or false, e.g. device.driver == "gpu.example.com"',
    "compilation": (
        "fix it where the caret points: a selector sees only device.driver (a string), "
        "device.attributes[domain][name] and device.capacity[domain][name] (quantities: compare them with "
        'compareTo, isGreaterThan or isLessThan against quantity("40Gi"), not with < or >)'
    ),
}


def selector_message(expression: str, verdict: SelectorVerdict) -> str:
    """The API server's words (as ``kubectl create`` prints them), then how to fix the selector."""
    if verdict.kind != "Invalid value":
        fix = _SELECTOR_FIX[verdict.kind]
    elif verdict.detail.startswith("must evaluate to bool"):
        fix = _SELECTOR_FIX["bool"]
    else:
        fix = _SELECTOR_FIX["compilation"]
    return f"{verdict.api_text(expression)}\n(the API server refuses this selector; {fix})"


def _selector_problems(selectors: list[dra.DeviceSelector], path: str) -> list[Problem]:
    problems: list[Problem] = []
    for j, selector in enumerate(selectors):
        where = join_path(path, j)
        if selector.cel is None:
            problems.append(Problem(where, "only cel selectors are supported"))
            continue
        expression = selector.cel.expression
        verdict = check_selector(expression)
        if verdict is not None:
            problems.append(
                Problem(join_path(where, "cel", "expression"), selector_message(expression, verdict))
            )
            continue
        try:
            compile_selector(expression)
        except SelectorCompileError as err:
            problems.append(Problem(join_path(where, "cel", "expression"), str(err)))
    return problems


def claim_problems(devices: dra.DeviceClaim, path: str) -> list[Problem]:
    """Why the scheduler cannot allocate a claim with these ``devices`` (at ``path``); [] when it can."""
    problems: list[Problem] = []
    for i, request in enumerate(devices.requests):
        where = join_path(path, "requests", i)
        if request.first_available:
            problems.append(
                Problem(join_path(where, "firstAvailable"), f"(prioritized list) {_NOT_HERE}; use exactly")
            )
            continue
        exact = request.exactly
        if exact is None:
            problems.append(Problem(where, "has neither exactly nor firstAvailable; set exactly"))
            continue
        here = join_path(where, "exactly")
        if exact.admin_access:
            problems.append(Problem(join_path(here, "adminAccess"), f"{_NOT_HERE}; remove it"))
        if exact.capacity is not None and exact.capacity.requests:
            problems.append(
                Problem(join_path(here, "capacity"), f"(consumable capacity) {_NOT_HERE}; remove it")
            )
        if exact.allocation_mode is dra.AllocationMode.EXACT_COUNT and exact.count < 1:
            problems.append(Problem(join_path(here, "count"), f"must be at least 1, got {exact.count}"))
        problems += _selector_problems(exact.selectors, join_path(here, "selectors"))
    for i, constraint in enumerate(devices.constraints):
        where = join_path(path, "constraints", i)
        if constraint.distinct_attribute:
            problems.append(Problem(join_path(where, "distinctAttribute"), f"{_NOT_HERE}; remove it"))
        elif not constraint.match_attribute:
            problems.append(Problem(where, "has no matchAttribute; name the attribute the devices share"))
    return problems


def class_problems(device_class: dra.DeviceClass) -> list[Problem]:
    return _selector_problems(device_class.spec.selectors, "spec.selectors")


def validate_dra_object(obj: Mapping[str, Any]) -> list[Problem] | None:
    """Problems of a DeviceClass, ResourceClaim or ResourceClaimTemplate manifest; None for other kinds."""
    if obj.get("apiVersion") != dra.RESOURCE_API_VERSION:
        return None
    kind = obj.get("kind")
    try:
        if kind == dra.DEVICE_CLASS_KIND:
            return class_problems(dra.DeviceClass.model_validate(obj))
        if kind == dra.RESOURCE_CLAIM_KIND:
            claim = dra.ResourceClaim.model_validate(obj)
            return claim_problems(claim.spec.devices, "spec.devices")
        if kind == dra.RESOURCE_CLAIM_TEMPLATE_KIND:
            outer = obj.get("spec") or {}
            if not isinstance(outer, Mapping):
                return [Problem("spec", f"must be an object (the template: spec.spec), got {outer!r}")]
            template = dra.ResourceClaimSpec.model_validate(outer.get("spec") or {})
            return claim_problems(template.devices, "spec.spec.devices")
    except ValidationError as err:
        prefix = "spec.spec" if kind == dra.RESOURCE_CLAIM_TEMPLATE_KIND else ""
        return from_validation_error(err, prefix)
    return None
