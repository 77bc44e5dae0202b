"""The pod-spec fields that say where a pod may run -- nodeSelector, topology spread constraints, pod
(anti-)affinity, preferred-term weights, host ports under hostNetwork -- checked as the API server's pod
validation checks them (k8s.io/kubernetes ``pkg/apis/core/validation``), so ``volcano-py validate`` refuses
what ``kubectl apply`` would, and Volcano's Job admission (which runs the same validation on each task's
template) does too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypeGuard

from volcano_py.api.kube_names import label_value_problem, qualified_name_problem
from volcano_py.api.problems import Problem, join_path

WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
SPREAD_POLICIES: Final = ("Honor", "Ignore")
POD_AFFINITY_KINDS: Final = ("podAffinity", "podAntiAffinity")
REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"


def _kind(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def placement_problems(spec: Mapping[str, Any], path: str) -> list[Problem]:
    """Problems in the placement fields of a pod ``spec`` at ``path``."""
    problems = node_selector_problems(spec.get("nodeSelector"), join_path(path, "nodeSelector"))
    problems += spread_problems(
        spec.get("topologySpreadConstraints"), join_path(path, "topologySpreadConstraints")
    )
    affinity = spec.get("affinity")
    if isinstance(affinity, Mapping):
        problems += affinity_problems(affinity, join_path(path, "affinity"))
    if spec.get("hostNetwork") is True:
        problems += _host_network_port_problems(spec, path)
    return problems


def node_selector_problems(selector: Any, path: str) -> list[Problem]:
    """Keys must be label keys and values label values: the node's labels are matched against them."""
    if not isinstance(selector, Mapping):
        return []
    problems: list[Problem] = []
    for key, value in selector.items():
        where = join_path(path, str(key))
        if msg := qualified_name_problem(str(key)):
            problems.append(Problem(where, msg))
        if isinstance(value, str) and (msg := label_value_problem(value)):
            problems.append(Problem(where, msg))
    return problems


def spread_problems(constraints: Any, path: str) -> list[Problem]:
    if constraints is None:
        return []
    if not isinstance(constraints, list):
        return [Problem(path, f"expected a list of constraints, got {_kind(constraints)}")]
    problems: list[Problem] = []
    pairs = [
        (c.get("topologyKey"), c.get("whenUnsatisfiable")) if isinstance(c, Mapping) else None
        for c in constraints
    ]
    for i, constraint in enumerate(constraints):
        here = join_path(path, i)
        if not isinstance(constraint, Mapping):
            problems.append(
                Problem(here, f"expected a mapping (a spread constraint), got {_kind(constraint)}")
            )
            continue
        skew = constraint.get("maxSkew")
        if not _is_int(skew) or skew <= 0:
            problems.append(
                Problem(
                    join_path(here, "maxSkew"), f"must be greater than zero, got {skew!r} (e.g. 'maxSkew: 1')"
                )
            )
        key = constraint.get("topologyKey")
        if not key:
            problems.append(
                Problem(
                    join_path(here, "topologyKey"),
                    "is required (name a node label, e.g. 'topology.kubernetes.io/zone')",
                )
            )
        elif msg := qualified_name_problem(str(key)):
            problems.append(Problem(join_path(here, "topologyKey"), msg))
        when = constraint.get("whenUnsatisfiable")
        if when not in WHEN_UNSATISFIABLE:
            problems.append(
                Problem(
                    join_path(here, "whenUnsatisfiable"),
                    f"{when!r} is not allowed (use one of {', '.join(WHEN_UNSATISFIABLE)})",
                )
            )
        min_domains = constraint.get("minDomains")
        if min_domains is not None:
            if not _is_int(min_domains) or min_domains <= 0:
                problems.append(
                    Problem(join_path(here, "minDomains"), f"must be greater than zero, got {min_domains!r}")
                )
            elif when != "DoNotSchedule":
                problems.append(
                    Problem(
                        join_path(here, "minDomains"),
                        f"only applies with whenUnsatisfiable: DoNotSchedule, not {when!r} "
                        "(remove minDomains or use DoNotSchedule)",
                    )
                )
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = constraint.get(policy)
            if value is not None and value not in SPREAD_POLICIES:
                problems.append(
                    Problem(
                        join_path(here, policy),
                        f"{value!r} is not allowed (use one of {', '.join(SPREAD_POLICIES)})",
                    )
                )
        # Named at the first of the two, as the API server names it.
        later = [j for j in range(i + 1, len(pairs)) if pairs[j] == (key, when)]
        if key and when in WHEN_UNSATISFIABLE and later:
            problems.append(
                Problem(
                    here,
                    f"constraint [{later[0]}] has the same topologyKey {key!r} and "
                    f"whenUnsatisfiable {when!r} "
                    "(merge them: one constraint per key and mode)",
                )
            )
    return problems


def _weight_problem(term: Mapping[str, Any], here: str) -> list[Problem]:
    weight = term.get("weight")
    if not _is_int(weight) or not 1 <= weight <= 100:
        return [Problem(join_path(here, "weight"), f"must be from 1 to 100, got {weight!r}")]
    return []


def _pod_term_problems(term: Any, here: str) -> list[Problem]:
    if not isinstance(term, Mapping):
        return [Problem(here, f"expected a mapping (a pod affinity term), got {_kind(term)}")]
    key = term.get("topologyKey")
    if not key:
        return [
            Problem(
                join_path(here, "topologyKey"),
                "is required (name the node label that defines 'together', e.g. 'kubernetes.io/hostname')",
            )
        ]
    if msg := qualified_name_problem(str(key)):
        return [Problem(join_path(here, "topologyKey"), msg)]
    return []


def affinity_problems(affinity: Mapping[str, Any], path: str) -> list[Problem]:
    """Preferred terms' weights (node and pod affinity) and pod affinity terms' topology keys."""
    problems: list[Problem] = []
    node = affinity.get("nodeAffinity")
    if isinstance(node, Mapping) and isinstance(node.get(PREFERRED), list):
        for i, term in enumerate(node[PREFERRED]):
            if isinstance(term, Mapping):
                problems += _weight_problem(term, join_path(path, "nodeAffinity", PREFERRED, i))
    for kind in POD_AFFINITY_KINDS:
        pods = affinity.get(kind)
        if not isinstance(pods, Mapping):
            continue
        if isinstance(pods.get(REQUIRED), list):
            for i, term in enumerate(pods[REQUIRED]):
                problems += _pod_term_problems(term, join_path(path, kind, REQUIRED, i))
        if isinstance(pods.get(PREFERRED), list):
            for i, weighted in enumerate(pods[PREFERRED]):
                here = join_path(path, kind, PREFERRED, i)
                if not isinstance(weighted, Mapping):
                    problems.append(
                        Problem(here, f"expected a mapping (a weighted term), got {_kind(weighted)}")
                    )
                    continue
                problems += _weight_problem(weighted, here)
                problems += _pod_term_problems(
                    weighted.get("podAffinityTerm"), join_path(here, "podAffinityTerm")
                )
    return problems


def _host_network_port_problems(spec: Mapping[str, Any], path: str) -> list[Problem]:
    """On the host's network a container listens on the host's port itself: a hostPort other than its
    containerPort cannot be honoured (left out, it is set to the containerPort)."""
    problems: list[Problem] = []
    for field in ("initContainers", "containers"):
        containers = spec.get(field)
        if not isinstance(containers, list):
            continue
        for i, container in enumerate(containers):
            ports = container.get("ports") if isinstance(container, Mapping) else None
            if not isinstance(ports, list):
                continue
            for j, port in enumerate(ports):
                if not isinstance(port, Mapping):
                    continue
                host, inside = port.get("hostPort"), port.get("containerPort")
                if _is_int(host) and host != 0 and host != inside:
                    problems.append(
                        Problem(
                            join_path(path, field, i, "ports", j, "hostPort"),
                            f"{host} must match containerPort {inside!r} when hostNetwork is true "
                            "(set it to the containerPort or leave it out)",
                        )
                    )
    return problems
