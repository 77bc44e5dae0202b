"""What the API server refuses in a DeviceClass, ResourceClaim or ResourceClaimTemplate, field by field
(k8s.io/kubernetes ``pkg/apis/resource/validation``): names, the request names that constraints and configs
refer to, attribute names, allocation modes, opaque driver configs. Kept apart from ``dra_rules``, which says
what volcano-py's scheduler can allocate; the selectors' CEL is checked there.

Works on the manifest as written (mappings), so a field of the wrong type is skipped here and reported by
the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.common import dns1123_label_problem, dns1123_subdomain_problem
from volcano_py.api.kube_names import metadata_problems, name_problems
from volcano_py.api.problems import Problem, join_path

DRIVER_NAME_MAX: Final = 63
IDENTIFIER_MAX: Final = 32
_C_IDENTIFIER: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def driver_name_problem(name: Any) -> str | None:
    """A driver's name: a DNS subdomain (letters of any case) of at most 63 characters."""
    if not isinstance(name, str) or not name:
        return "is required (name the driver, e.g. 'gpu.example.com')"
    if len(name) > DRIVER_NAME_MAX:
        return f"{name!r} is longer than {DRIVER_NAME_MAX} characters (use the driver's name)"
    if dns1123_subdomain_problem(name.lower()):
        return f"{name!r} is not a driver name (a DNS subdomain, e.g. 'gpu.example.com')"
    return None


def _identifier_problem(name: str, whole: str) -> str | None:
    if len(name) > IDENTIFIER_MAX:
        return f"the name in {whole!r} is longer than {IDENTIFIER_MAX} characters (shorten it)"
    if not _C_IDENTIFIER.match(name):
        rule = "letters, digits and '_', not starting with a digit"
        return f"the name in {whole!r} is not a C identifier ({rule})"
    return None


def attribute_name_problem(name: Any) -> str | None:
    """An attribute with its domain, ``<driver domain>/<C identifier>``, as a constraint must name it."""
    if not isinstance(name, str) or not name:
        return "is required (name an attribute with its domain, e.g. 'gpu.example.com/model')"
    domain, sep, short = name.partition("/")
    if not sep:
        return f"{name!r} must include a domain (write e.g. 'gpu.example.com/{name}')"
    if "/" in short:
        return f"{name!r} has more than one '/' (write '<domain>/<name>')"
    if not domain:
        return f"{name!r} has an empty domain (write e.g. 'gpu.example.com{name}')"
    if not short:
        return f"{name!r} has an empty name after the domain (write e.g. '{domain}/model')"
    if msg := driver_name_problem(domain):
        return f"the domain of {name!r}: {msg}"
    return _identifier_problem(short, name)


def _opaque_problems(config: Mapping[str, Any], here: str) -> list[Problem]:
    opaque = config.get("opaque")
    if not isinstance(opaque, Mapping):
        return [Problem(join_path(here, "opaque"), "is required (give the driver and its parameters)")]
    problems: list[Problem] = []
    if msg := driver_name_problem(opaque.get("driver")):
        problems.append(Problem(join_path(here, "opaque", "driver"), msg))
    parameters = opaque.get("parameters")
    where = join_path(here, "opaque", "parameters")
    if parameters is None:
        problems.append(Problem(where, "is required (the driver's configuration, as an object)"))
    elif not isinstance(parameters, Mapping):
        problems.append(
            Problem(where, f"must be an object (the driver's configuration), got {type(parameters).__name__}")
        )
    return problems


def _reference_problems(refs: Any, names: set[str], path: str) -> list[Problem]:
    problems: list[Problem] = []
    for i, ref in enumerate(_list(refs)):
        if not isinstance(ref, str) or ref not in names:
            problems.append(
                Problem(
                    join_path(path, i),
                    f"{ref!r} is not the name of a request of this claim "
                    f"(use one of {', '.join(sorted(names))})"
                    if names
                    else f"{ref!r} is not the name of a request of this claim (it has none)",
                )
            )
    return problems


def _request_names(requests: list[Any]) -> set[str]:
    """What ``requests`` of a constraint or config may name: each request, and ``request/sub`` for the
    subrequests of a prioritized list."""
    names: set[str] = set()
    for request in requests:
        request = _mapping(request)
        name = request.get("name")
        if not isinstance(name, str):
            continue
        names.add(name)
        for sub in _list(request.get("firstAvailable")):
            if isinstance(_mapping(sub).get("name"), str):
                names.add(f"{name}/{_mapping(sub)['name']}")
    return names


def _exact_problems(exact: Mapping[str, Any], here: str) -> list[Problem]:
    problems: list[Problem] = []
    class_name = exact.get("deviceClassName")
    if isinstance(class_name, str) and class_name and (msg := dns1123_subdomain_problem(class_name)):
        problems.append(Problem(join_path(here, "deviceClassName"), msg))
    mode = exact.get("allocationMode", "ExactCount")
    count = exact.get("count")
    # Any other mode is named by the model.
    if mode == "All" and count not in (None, 0):
        problems.append(
            Problem(
                join_path(here, "count"),
                f"must not be set when allocationMode is All, got {count!r} (remove it)",
            )
        )
    return problems


def device_claim_problems(devices: Any, path: str) -> list[Problem]:
    """The field rules of a claim's (or a claim template's) ``devices`` at ``path``."""
    devices = _mapping(devices)
    problems: list[Problem] = []
    requests = _list(devices.get("requests"))
    seen: set[str] = set()
    for i, request in enumerate(requests):
        here = join_path(path, "requests", i)
        request = _mapping(request)
        name = request.get("name")
        if isinstance(name, str):
            if msg := (dns1123_label_problem(name) if name else "is required (name the request)"):
                problems.append(Problem(join_path(here, "name"), msg))
            elif name in seen:
                problems.append(
                    Problem(
                        join_path(here, "name"), f"duplicated request name {name!r} (name each request once)"
                    )
                )
            seen.add(name)
        if request.get("exactly") is not None and request.get("firstAvailable"):
            problems.append(Problem(here, "sets both exactly and firstAvailable (keep one)"))
        problems += _exact_problems(_mapping(request.get("exactly")), join_path(here, "exactly"))
    names = _request_names(requests)
    for i, constraint in enumerate(_list(devices.get("constraints"))):
        here = join_path(path, "constraints", i)
        constraint = _mapping(constraint)
        problems += _reference_problems(constraint.get("requests"), names, join_path(here, "requests"))
        for field in ("matchAttribute", "distinctAttribute"):
            if constraint.get(field) is not None and (msg := attribute_name_problem(constraint[field])):
                problems.append(Problem(join_path(here, field), msg))
    for i, config in enumerate(_list(devices.get("config"))):
        here = join_path(path, "config", i)
        config = _mapping(config)
        problems += _reference_problems(config.get("requests"), names, join_path(here, "requests"))
        problems += _opaque_problems(config, here)
    return problems


def device_class_problems(spec: Any) -> list[Problem]:
    spec = _mapping(spec)
    problems: list[Problem] = []
    for i, config in enumerate(_list(spec.get("config"))):
        problems += _opaque_problems(_mapping(config), join_path("spec", "config", i))
    return problems


def dra_field_problems(obj: Mapping[str, Any], kind: str) -> list[Problem]:
    """The API server's field rules for a DRA object of ``kind``."""
    metadata = obj.get("metadata")
    meta = _mapping(metadata)
    problems = name_problems(meta.get("name"), meta.get("generateName"))
    problems += metadata_problems(metadata, "metadata")
    spec = obj.get("spec")
    if kind == "DeviceClass":
        return problems + device_class_problems(spec)
    if kind == "ResourceClaim":
        return problems + device_claim_problems(_mapping(spec).get("devices"), "spec.devices")
    template = _mapping(spec)
    problems += metadata_problems(template.get("metadata"), "spec.metadata")
    return problems + device_claim_problems(
        _mapping(template.get("spec")).get("devices"), "spec.spec.devices"
    )
