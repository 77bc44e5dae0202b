"""Admission checks for PodGroup, Queue, HyperNode and Command that need nothing but the object itself,
and the checks every kind shares (object names, network-topology limits, label selectors)."""

from __future__ import annotations

from collections.abc import Mapping

from volcano_py.api import constants
from volcano_py.api.bus import COMMAND_ACTIONS, Command
from volcano_py.api.goregexp import GoRegexpError, compile_go
from volcano_py.api.kube_names import name_problems
from volcano_py.api.messages import (
    VOLCANO_DESERVED_ABOVE_CAPABILITY,
    VOLCANO_DESERVED_BELOW_GUARANTEE,
    VOLCANO_DESERVED_MISSING,
    VOLCANO_HIERARCHY_LENGTH,
    VOLCANO_HIERARCHY_WEIGHT_NUMBER,
    VOLCANO_HIERARCHY_WEIGHT_POSITIVE,
    VOLCANO_HYPERNODE_NO_MEMBERS,
    VOLCANO_HYPERNODE_NO_SELECTOR,
    VOLCANO_HYPERNODE_REGEX,
    VOLCANO_HYPERNODE_SELECTORS,
    VOLCANO_OWN_PARENT,
    VOLCANO_SUBGROUP_TIER_BOTH,
    VOLCANO_TIER_BOTH,
    volcano_said,
)
from volcano_py.api.meta import LABEL_SELECTOR_OPERATORS, LabelSelector, NetworkTopologySpec, ObjectMeta
from volcano_py.api.problems import Problem, join_path
from volcano_py.api.scheduling import PodGroup, Queue
from volcano_py.api.topology import HyperNode, MemberType
from volcano_py.resources import parse_quantity


def _negative_quantities(values: Mapping[str, int | str], path: str) -> list[Problem]:
    return [
        Problem(join_path(path, name), f"{value!r} is negative (use a quantity >= 0)")
        for name, value in values.items()
        if parse_quantity(value) < 0
    ]


def object_name_problems(metadata: ObjectMeta, *, max_length: int = 253) -> list[Problem]:
    """The API server's rule for object names (a DNS-1123 subdomain), with Volcano's tighter limit if any."""
    return name_problems(metadata.name, metadata.generate_name, max_length=max_length)


def check_network_topology(
    topology: NetworkTopologySpec | None, path: str, *, volcano: str = VOLCANO_TIER_BOTH
) -> list[Problem]:
    if topology is not None and topology.highest_tier_allowed is not None and topology.highest_tier_name:
        return [
            Problem(
                path,
                volcano_said(
                    volcano,
                    "sets both highestTierAllowed and highestTierName "
                    "(keep one: they are two ways to say the same limit)",
                ),
            )
        ]
    return []


def label_selector_problems(selector: LabelSelector | None, path: str) -> list[Problem]:
    if selector is None:
        return []
    problems: list[Problem] = []
    for i, req in enumerate(selector.match_expressions):
        here = join_path(path, "matchExpressions", i)
        if req.operator not in LABEL_SELECTOR_OPERATORS:
            allowed = ", ".join(LABEL_SELECTOR_OPERATORS)
            problems.append(
                Problem(
                    join_path(here, "operator"), f"{req.operator!r} is not allowed (use one of {allowed})"
                )
            )
        elif req.operator in ("In", "NotIn") and not req.values:
            problems.append(
                Problem(
                    join_path(here, "values"), f"must not be empty for operator {req.operator} (add values)"
                )
            )
        elif req.operator in ("Exists", "DoesNotExist") and req.values:
            problems.append(
                Problem(
                    join_path(here, "values"), f"must be empty for operator {req.operator} (remove values)"
                )
            )
    return problems


def validate_podgroup(pg: PodGroup) -> list[Problem]:
    problems = object_name_problems(pg.metadata)
    spec = pg.spec
    problems += [
        Problem(join_path("spec", "minTaskMember", task), f"{count} is negative (use a count >= 0)")
        for task, count in spec.min_task_member.items()
        if count < 0
    ]
    problems += _negative_quantities(spec.min_resources or {}, "spec.minResources")
    problems += check_network_topology(spec.network_topology, "spec.networkTopology")
    for i, policy in enumerate(spec.sub_group_policy):
        problems += check_network_topology(
            policy.network_topology,
            join_path("spec", "subGroupPolicy", i, "networkTopology"),
            volcano=VOLCANO_SUBGROUP_TIER_BOTH.format(policy=policy.name),
        )
        problems += label_selector_problems(
            policy.label_selector, join_path("spec", "subGroupPolicy", i, "labelSelector")
        )
    return problems


def validate_queue(queue: Queue) -> list[Problem]:
    problems = object_name_problems(queue.metadata)
    spec = queue.spec
    problems += _negative_quantities(spec.capability, "spec.capability")
    problems += _negative_quantities(spec.deserved, "spec.deserved")
    problems += _negative_quantities(spec.guarantee.resource, "spec.guarantee.resource")
    for name, guaranteed in sorted(spec.guarantee.resource.items()):
        deserved = spec.deserved.get(name)
        if deserved is None:
            problems.append(
                Problem(
                    join_path("spec", "deserved", name),
                    volcano_said(
                        VOLCANO_DESERVED_MISSING.format(resource=name, guarantee=guaranteed),
                        f"deserved.{name} is missing while guarantee.resource.{name} is {guaranteed!r} "
                        f"(set deserved.{name} to at least {guaranteed!r})",
                    ),
                )
            )
        elif parse_quantity(deserved) < parse_quantity(guaranteed):
            problems.append(
                Problem(
                    join_path("spec", "deserved", name),
                    volcano_said(
                        VOLCANO_DESERVED_BELOW_GUARANTEE.format(
                            resource=name, deserved=deserved, guarantee=guaranteed
                        ),
                        f"raise deserved.{name} to at least {guaranteed!r}",
                    ),
                )
            )
    for name, deserved in sorted(spec.deserved.items()):
        capability = spec.capability.get(name)
        if capability is not None and parse_quantity(deserved) > parse_quantity(capability):
            problems.append(
                Problem(
                    join_path("spec", "deserved", name),
                    volcano_said(
                        VOLCANO_DESERVED_ABOVE_CAPABILITY.format(
                            resource=name, deserved=deserved, capability=capability
                        ),
                        f"lower deserved.{name} or raise capability.{name}",
                    ),
                )
            )
    if spec.parent and spec.parent == queue.metadata.name:
        problems.append(
            Problem(
                "spec.parent",
                volcano_said(
                    VOLCANO_OWN_PARENT.format(queue=queue.metadata.name), "name another queue or 'root'"
                ),
            )
        )
    if queue.metadata.name == constants.ROOT_QUEUE and spec.parent:
        problems.append(Problem("spec.parent", "the root queue has no parent (remove spec.parent)"))
    problems += _check_hierarchy_annotations(queue)
    return problems


def _check_hierarchy_annotations(queue: Queue) -> list[Problem]:
    annotations = queue.metadata.annotations
    hierarchy = annotations.get(constants.HIERARCHY_KEY)
    weights = annotations.get(constants.HIERARCHY_WEIGHTS_KEY)
    if hierarchy is None and weights is None:
        return []
    path = f"metadata.annotations[{constants.HIERARCHY_WEIGHTS_KEY}]"
    if hierarchy is None or weights is None:
        return [
            Problem(
                path if weights is None else f"metadata.annotations[{constants.HIERARCHY_KEY}]",
                volcano_said(
                    VOLCANO_HIERARCHY_LENGTH,
                    f"{constants.HIERARCHY_KEY} and {constants.HIERARCHY_WEIGHTS_KEY} must be set together "
                    "(add the other one)",
                ),
            )
        ]
    levels, parts = hierarchy.split("/"), weights.split("/")
    if len(levels) != len(parts):
        return [
            Problem(
                path,
                volcano_said(
                    VOLCANO_HIERARCHY_LENGTH,
                    f"{len(parts)} weights for {len(levels)} hierarchy levels "
                    f"(give one weight per level of {hierarchy!r})",
                ),
            )
        ]
    problems: list[Problem] = []
    for part in parts:
        try:
            volcano = "" if float(part) > 0 else VOLCANO_HIERARCHY_WEIGHT_POSITIVE
        except ValueError:
            volcano = VOLCANO_HIERARCHY_WEIGHT_NUMBER
        if volcano:
            problems.append(
                Problem(
                    path,
                    volcano_said(
                        volcano.format(weight=part, weights=weights),
                        f"weight {part!r} is not a positive number (use e.g. '1/2/4')",
                    ),
                )
            )
    return problems


def validate_hypernode(hn: HyperNode) -> list[Problem]:
    problems = object_name_problems(hn.metadata)
    if not hn.spec.members:
        problems.append(
            Problem("spec.members", volcano_said(VOLCANO_HYPERNODE_NO_MEMBERS, "add at least one member"))
        )
    for i, member in enumerate(hn.spec.members):
        here = join_path("spec", "members", i, "selector")
        selector = member.selector
        chosen = [
            name
            for name, value in (
                ("exactMatch", selector.exact_match),
                ("regexMatch", selector.regex_match),
                ("labelMatch", selector.label_match),
            )
            if value is not None
        ]
        if not chosen:
            problems.append(
                Problem(
                    here,
                    volcano_said(
                        VOLCANO_HYPERNODE_NO_SELECTOR, "set one of exactMatch, regexMatch or labelMatch"
                    ),
                )
            )
        elif len(chosen) > 1:
            problems.append(
                Problem(
                    here,
                    volcano_said(
                        VOLCANO_HYPERNODE_SELECTORS, f"sets {' and '.join(chosen)} (keep exactly one of them)"
                    ),
                )
            )
        if selector.regex_match is not None:
            try:
                compile_go(selector.regex_match.pattern)
            except GoRegexpError as err:
                problems.append(
                    Problem(
                        join_path(here, "regexMatch", "pattern"),
                        volcano_said(
                            f"{VOLCANO_HYPERNODE_REGEX}: {err.go_error}",
                            f"{selector.regex_match.pattern!r}: {err.advice}",
                        ),
                    )
                )
        problems += label_selector_problems(selector.label_match, join_path(here, "labelMatch"))
        if selector.label_match is not None and member.type != MemberType.NODE:
            problems.append(
                Problem(
                    join_path(here, "labelMatch"),
                    "only selects nodes (use type: Node, or exactMatch for a HyperNode)",
                )
            )
    return problems


def validate_command(command: Command) -> list[Problem]:
    problems = object_name_problems(command.metadata)
    allowed = ", ".join(a.value for a in COMMAND_ACTIONS)
    if not command.action:
        problems.append(Problem("action", f"is required (use one of {allowed})"))
    elif command.action not in {a.value for a in COMMAND_ACTIONS}:
        problems.append(
            Problem("action", f"{command.action!r} is not a command action (use one of {allowed})")
        )
    if command.target is None:
        problems.append(Problem("target", "is required (name the Job or Queue to act on)"))
    return problems
