"""One container of a pod template, checked as Kubernetes' pod-template validation does (Volcano's Job webhook
runs it on every task) for the fields a batch user writes: name, image, ports, probes, volume mounts, env and
resources. Values come straight from YAML, so every field is type-checked before it is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.common import dns1123_label_problem
from volcano_py.api.kube_names import port_name_problem, qualified_name_problem
from volcano_py.api.problems import Problem, join_path
from volcano_py.resources import QuantityError, parse_quantity

PROTOCOLS: Final = ("TCP", "UDP", "SCTP")
PROBES: Final = ("livenessProbe", "readinessProbe", "startupProbe")
PROBE_HANDLERS: Final = ("exec", "httpGet", "tcpSocket", "grpc")
PROBE_COUNTS: Final = (
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
)
CONTAINER_RESOURCES: Final = ("cpu", "memory", "ephemeral-storage")
_NATIVE_DOMAIN: Final = "kubernetes.io/"


def _kind(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_container(
    container: Any, path: str, names: set[str], volumes: set[str] | None, *, init: bool
) -> list[Problem]:
    """Problems in one container at ``path``; ``names`` collects container names across the pod, ``volumes``
    are the pod's volume names (None when the volumes themselves are malformed, so mounts are not checked)."""
    if not isinstance(container, Mapping):
        return [Problem(path, f"expected a mapping (a container), got {_kind(container)}")]
    problems: list[Problem] = []
    name = container.get("name")
    if not isinstance(name, str) or not name:
        problems.append(Problem(join_path(path, "name"), "is required (give the container a name)"))
    elif msg := dns1123_label_problem(name):
        problems.append(Problem(join_path(path, "name"), msg))
    elif name in names:
        problems.append(
            Problem(
                join_path(path, "name"),
                f"duplicated container name {name!r} (give each container a unique name)",
            )
        )
    else:
        names.add(name)
    image = container.get("image")
    if not isinstance(image, str) or not image:
        problems.append(
            Problem(
                join_path(path, "image"), f"is required, got {image!r} (name the image, e.g. 'busybox:1.36')"
            )
        )
    problems += _check_ports(container.get("ports"), join_path(path, "ports"))
    for probe in PROBES:
        value = container.get(probe)
        if value is None:
            continue
        if init and container.get("restartPolicy") != "Always":
            problems.append(
                Problem(
                    join_path(path, probe),
                    "may not be set on an init container (remove it, or make it a sidecar with "
                    "restartPolicy: Always)",
                )
            )
            continue
        problems += _check_probe(value, join_path(path, probe), single_success=probe != "readinessProbe")
    restart = container.get("restartPolicy")
    if restart is not None and (not init or restart != "Always"):
        problems.append(
            Problem(
                join_path(path, "restartPolicy"),
                f"{restart!r} is not allowed here (only an init container may set it, and only to Always)",
            )
        )
    if volumes is not None:
        problems += _check_mounts(container.get("volumeMounts"), join_path(path, "volumeMounts"), volumes)
    problems += _check_env(container.get("env"), join_path(path, "env"))
    problems += check_resources(container.get("resources"), join_path(path, "resources"))
    return problems


def _port_number_problem(value: Any, *, allow_zero: bool = False) -> str | None:
    if not _is_int(value):
        return f"{value!r} is not a port number (write a whole number from 1 to 65535)"
    low = 0 if allow_zero else 1
    if not low <= value <= 65535:
        return f"{value} is not a valid port (use a number from {low} to 65535)"
    return None


def _check_ports(ports: Any, path: str) -> list[Problem]:
    if ports is None:
        return []
    if not isinstance(ports, list):
        return [
            Problem(path, f"expected a list of ports, got {_kind(ports)} (write '- containerPort: 8080')")
        ]
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        here = join_path(path, i)
        if not isinstance(port, Mapping):
            problems.append(Problem(here, f"expected a mapping (a port), got {_kind(port)}"))
            continue
        if port.get("containerPort") is None:
            problems.append(
                Problem(join_path(here, "containerPort"), "is required (e.g. 'containerPort: 8080')")
            )
        elif msg := _port_number_problem(port["containerPort"]):
            problems.append(Problem(join_path(here, "containerPort"), msg))
        if port.get("hostPort") is not None and (
            msg := _port_number_problem(port["hostPort"], allow_zero=True)
        ):
            problems.append(Problem(join_path(here, "hostPort"), msg))
        protocol = port.get("protocol")
        if protocol is not None and protocol not in PROTOCOLS:
            problems.append(
                Problem(
                    join_path(here, "protocol"),
                    f"{protocol!r} is not allowed (use one of {', '.join(PROTOCOLS)})",
                )
            )
        name = port.get("name")
        if name is not None:
            if not isinstance(name, str):
                problems.append(Problem(join_path(here, "name"), f"{name!r} is not a string (quote it)"))
            elif msg := port_name_problem(name):
                problems.append(Problem(join_path(here, "name"), msg))
            elif name in seen:
                problems.append(
                    Problem(join_path(here, "name"), f"duplicated port name {name!r} (name each port once)")
                )
            else:
                seen.add(name)
    return problems


def _check_probe(probe: Any, path: str, *, single_success: bool) -> list[Problem]:
    if not isinstance(probe, Mapping):
        return [Problem(path, f"expected a mapping (a probe), got {_kind(probe)}")]
    problems: list[Problem] = []
    handlers = [h for h in PROBE_HANDLERS if probe.get(h) is not None]
    if not handlers:
        problems.append(Problem(path, f"has no handler (set one of {', '.join(PROBE_HANDLERS)})"))
    elif len(handlers) > 1:
        problems.append(Problem(path, f"sets {' and '.join(handlers)} (keep exactly one handler)"))
    for field in PROBE_COUNTS:
        value = probe.get(field)
        if value is not None and (not _is_int(value) or value < 0):
            problems.append(Problem(join_path(path, field), f"{value!r} is not a whole number >= 0"))
    success = probe.get("successThreshold")
    if single_success and _is_int(success) and success not in (0, 1):
        problems.append(
            Problem(
                join_path(path, "successThreshold"),
                f"{success} must be 1 for this probe (set it to 1 or drop it)",
            )
        )
    for handler in handlers:
        body = probe[handler]
        here = join_path(path, handler)
        if not isinstance(body, Mapping):
            problems.append(Problem(here, f"expected a mapping, got {_kind(body)}"))
            continue
        if handler == "exec":
            command = body.get("command")
            if not isinstance(command, list) or not command:
                problems.append(
                    Problem(join_path(here, "command"), "is required (e.g. ['cat', '/tmp/healthy'])")
                )
        elif handler == "grpc":
            if msg := _port_number_problem(body.get("port")):
                problems.append(Problem(join_path(here, "port"), msg))
        else:
            port = body.get("port")
            if port is None:
                problems.append(
                    Problem(join_path(here, "port"), "is required (a number or a named container port)")
                )
            elif isinstance(port, str):
                if msg := port_name_problem(port):
                    problems.append(Problem(join_path(here, "port"), msg))
            elif msg := _port_number_problem(port):
                problems.append(Problem(join_path(here, "port"), msg))
            scheme = body.get("scheme")
            if handler == "httpGet" and scheme is not None and scheme not in ("HTTP", "HTTPS"):
                problems.append(
                    Problem(join_path(here, "scheme"), f"{scheme!r} is not allowed (use HTTP or HTTPS)")
                )
    return problems


def _check_mounts(mounts: Any, path: str, volumes: set[str]) -> list[Problem]:
    if mounts is None:
        return []
    if not isinstance(mounts, list):
        return [Problem(path, f"expected a list of volume mounts, got {_kind(mounts)}")]
    problems: list[Problem] = []
    paths: set[str] = set()
    known = ", ".join(sorted(volumes)) or "none yet; add it to the pod's volumes"
    for i, mount in enumerate(mounts):
        here = join_path(path, i)
        if not isinstance(mount, Mapping):
            problems.append(Problem(here, f"expected a mapping (a volume mount), got {_kind(mount)}"))
            continue
        name = mount.get("name")
        if not isinstance(name, str) or not name:
            problems.append(
                Problem(join_path(here, "name"), f"is required (name one of the pod's volumes: {known})")
            )
        elif name not in volumes:
            problems.append(
                Problem(join_path(here, "name"), f"no volume named {name!r} in the pod (use one of: {known})")
            )
        mount_path = mount.get("mountPath")
        if not isinstance(mount_path, str) or not mount_path:
            problems.append(Problem(join_path(here, "mountPath"), "is required (e.g. '/data')"))
        elif mount_path in paths:
            problems.append(
                Problem(
                    join_path(here, "mountPath"),
                    f"{mount_path!r} is mounted twice (give each mount its own path)",
                )
            )
        else:
            paths.add(mount_path)
        sub_path = mount.get("subPath")
        if isinstance(sub_path, str) and (sub_path.startswith("/") or ".." in sub_path.split("/")):
            problems.append(
                Problem(join_path(here, "subPath"), f"{sub_path!r} must be a relative path without '..'")
            )
    return problems


def _check_env(env: Any, path: str) -> list[Problem]:
    if env is None:
        return []
    if not isinstance(env, list):
        return [
            Problem(path, f"expected a list of variables, got {_kind(env)} (write '- name: X\\n  value: y')")
        ]
    problems: list[Problem] = []
    for i, var in enumerate(env):
        here = join_path(path, i)
        if not isinstance(var, Mapping):
            problems.append(Problem(here, f"expected a mapping (name, value), got {_kind(var)}"))
            continue
        name = var.get("name")
        if not isinstance(name, str) or not name:
            problems.append(Problem(join_path(here, "name"), "is required (name the variable)"))
        value = var.get("value")
        if value is not None and not isinstance(value, str):
            problems.append(
                Problem(join_path(here, "value"), f"{value!r} is not a string (quote it: '{value}')")
            )
        if value and var.get("valueFrom") is not None:
            problems.append(Problem(here, "sets both value and valueFrom (keep one)"))
    return problems


def _resource_name_problem(name: str) -> str | None:
    if msg := qualified_name_problem(name):
        return msg
    if "/" not in name:
        if name in CONTAINER_RESOURCES or name.startswith("hugepages-"):
            return None
        return (
            f"{name!r} is not a container resource (use cpu, memory, ephemeral-storage, hugepages-<size>, "
            "or an extended resource with its domain, e.g. 'nvidia.com/gpu')"
        )
    if name.startswith("requests."):
        return f"{name!r} is a quota name, not a container resource (drop 'requests.')"
    return None


def _is_extended(name: str) -> bool:
    return "/" in name and _NATIVE_DOMAIN not in name


def _overcommit_allowed(name: str) -> bool:
    """Whether a request may be below its limit: native resources only, and not huge pages."""
    return not _is_extended(name) and not name.startswith("hugepages-")


def check_resources(resources: Any, path: str) -> list[Problem]:
    """Requests and limits: known names, quantities >= 0 (whole for extended resources), request <= limit
    (and equal to it for an extended resource such as a GPU, which cannot be overcommitted)."""
    if resources is None:
        return []
    if not isinstance(resources, Mapping):
        return [Problem(path, f"expected a mapping with requests/limits, got {_kind(resources)}")]
    problems: list[Problem] = []
    parsed: dict[str, dict[str, Any]] = {}
    for part in ("requests", "limits"):
        values = resources.get(part)
        parsed[part] = {}
        if values is None:
            continue
        if not isinstance(values, Mapping):
            problems.append(
                Problem(
                    join_path(path, part), f"expected a mapping of resource: quantity, got {_kind(values)}"
                )
            )
            continue
        for name, value in values.items():
            where = join_path(path, part, str(name))
            if value is None:
                continue  # ``cpu:`` with no value: the API server drops the null, so it asks for nothing
            msg = (
                _resource_name_problem(name) if isinstance(name, str) else f"{name!r} is not a resource name"
            )
            if msg:
                problems.append(Problem(where, msg))
                continue
            try:
                amount = parse_quantity(value)
            except QuantityError as err:
                problems.append(Problem(where, str(err)))
                continue
            if amount < 0:
                problems.append(Problem(where, f"{value!r} is negative (use a quantity >= 0)"))
                continue
            if _is_extended(name) and amount.denominator != 1:
                problems.append(
                    Problem(where, f"{value!r} is not a whole number ({name} is counted in units)")
                )
                continue
            parsed[part][name] = amount
    for name, request in parsed["requests"].items():
        limit = parsed["limits"].get(name)
        if limit is None:
            if not _overcommit_allowed(name) and name not in (resources.get("limits") or {}):
                problems.append(
                    Problem(
                        join_path(path, "limits", name),
                        f"is required: {name} cannot be overcommitted, so its limit must be set "
                        f"(give limits.{name} the same quantity as the request)",
                    )
                )
            continue
        wrote_request, wrote_limit = resources["requests"][name], resources["limits"][name]
        if not _overcommit_allowed(name) and request != limit:
            problems.append(
                Problem(
                    join_path(path, "requests", name),
                    f"request {wrote_request!r} differs from the limit {wrote_limit!r}; {name} cannot be "
                    f"overcommitted (make them equal, or give only the limit)",
                )
            )
        elif request > limit:
            problems.append(
                Problem(
                    join_path(path, "requests", name),
                    f"request {wrote_request!r} is above the limit {wrote_limit!r} "
                    f"(lower the request or raise limits.{name})",
                )
            )
    return problems
