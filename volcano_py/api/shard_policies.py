"""The sharding policies a scheduler's chain may name, their arguments as Volcano's policies read them, and
the parsing of one ``policies`` entry's arguments (``sharding_config`` reads the rest of the file).

Volcano reads an argument of the wrong type as absent (with a log line) and ignores unknown ones; here both
are refused, naming the argument: ``minCPUUtil: "0.7"`` must not quietly become 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from volcano_py.api import constants
from volcano_py.api import messages as m
from volcano_py.api.problems import Problem, join_path


class ShardPolicyName(StrEnum):
    ALLOCATION_RATE = "allocation-rate"
    WARMUP = "warmup"
    NODE_LIMIT = "node-limit"


# Argument keys, as Volcano's policies read them.
ARG_MIN_CPU_UTIL: Final = "minCPUUtil"
ARG_MAX_CPU_UTIL: Final = "maxCPUUtil"
ARG_WARMUP_LABEL: Final = "warmupLabel"
ARG_WARMUP_LABEL_VALUE: Final = "warmupLabelValue"
ARG_MIN_NODES: Final = "minNodes"
ARG_MAX_NODES: Final = "maxNodes"
POLICY_ARGUMENTS: Final[dict[ShardPolicyName, tuple[str, ...]]] = {
    ShardPolicyName.ALLOCATION_RATE: (ARG_MIN_CPU_UTIL, ARG_MAX_CPU_UTIL),
    ShardPolicyName.WARMUP: (ARG_WARMUP_LABEL, ARG_WARMUP_LABEL_VALUE),
    ShardPolicyName.NODE_LIMIT: (ARG_MIN_NODES, ARG_MAX_NODES),
}


# --- the policy chain, typed -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AllocationRate:
    """Filter and score by CPU utilisation (requested / capacity); bounds inclusive."""

    min_cpu_util: float = 0.0
    max_cpu_util: float = 0.0  # Volcano's default when the argument is missing, not 1.0


@dataclass(frozen=True, slots=True)
class Warmup:
    label: str = constants.WARMUP_LABEL_KEY
    value: str = constants.WARMUP_LABEL_VALUE


@dataclass(frozen=True, slots=True)
class NodeLimit:
    min_nodes: int = 0
    max_nodes: int = 0  # 0: no upper bound


PolicyArguments = AllocationRate | Warmup | NodeLimit


@dataclass(frozen=True, slots=True)
class ShardPolicy:
    arguments: PolicyArguments
    weight: int = 1


def use_policies() -> str:
    return f"use one of {', '.join(ShardPolicyName)}"


def parse_policy(
    name: str, arguments: Mapping[str, Any], path: str
) -> tuple[PolicyArguments | None, list[Problem]]:
    try:
        policy = ShardPolicyName(name)
    except ValueError:
        said = m.VOLCANO_SHARDING_POLICY_NOT_FOUND.format(policy=name)
        return None, [Problem(join_path(path, "name"), m.volcano_said(said, use_policies()))]
    args_path = join_path(path, "arguments")
    known = POLICY_ARGUMENTS[policy]
    problems: list[Problem] = []
    for key in arguments:
        if key in known:
            continue
        if key in (ARG_MIN_NODES, ARG_MAX_NODES):
            said = m.VOLCANO_SHARDING_NODE_LIMIT_ONLY.format(field=key)
            fix = f"move it to a {ShardPolicyName.NODE_LIMIT} policy"
            problems.append(Problem(join_path(args_path, key), m.volcano_said(said, fix)))
        else:
            fix = f"use {', '.join(known)}" if known else "remove it"
            problems.append(Problem(join_path(args_path, key), f"unknown argument of {policy} ({fix})"))
    if policy is ShardPolicyName.ALLOCATION_RATE:
        return _allocation_rate(arguments, args_path, problems)
    if policy is ShardPolicyName.WARMUP:
        return _warmup(arguments, args_path, problems)
    return _node_limit(arguments, args_path, problems)


def _number(arguments: Mapping[str, Any], key: str, path: str, problems: list[Problem]) -> float:
    value = arguments.get(key, 0.0)
    if isinstance(value, bool) or not isinstance(value, int | float):
        problems.append(
            Problem(join_path(path, key), f"{value!r} is not a number (write e.g. 0.6, unquoted)")
        )
        return 0.0
    return float(value)


def _whole(arguments: Mapping[str, Any], key: str, path: str, problems: list[Problem]) -> int:
    value = arguments.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        problems.append(Problem(join_path(path, key), f"{value!r} is not a whole number (write e.g. 10)"))
        return 0
    return int(value)


def _text(arguments: Mapping[str, Any], key: str, default: str, path: str, problems: list[Problem]) -> str:
    value = arguments.get(key, default)
    if not isinstance(value, str):
        problems.append(Problem(join_path(path, key), f"{value!r} is not a string (quote it: '{value}')"))
        return default
    return value


def _allocation_rate(
    arguments: Mapping[str, Any], path: str, problems: list[Problem]
) -> tuple[PolicyArguments | None, list[Problem]]:
    low = _number(arguments, ARG_MIN_CPU_UTIL, path, problems)
    high = _number(arguments, ARG_MAX_CPU_UTIL, path, problems)
    if low < 0 or high > 1 or low > high:
        said = m.VOLCANO_SHARDING_CPU_RANGE.format(low=low, high=high)
        fix = f"set {ARG_MIN_CPU_UTIL} <= {ARG_MAX_CPU_UTIL}, both fractions from 0 to 1"
        problems.append(Problem(path, m.volcano_said(said, fix)))
    return AllocationRate(min_cpu_util=low, max_cpu_util=high), problems


def _warmup(
    arguments: Mapping[str, Any], path: str, problems: list[Problem]
) -> tuple[PolicyArguments | None, list[Problem]]:
    label = _text(arguments, ARG_WARMUP_LABEL, constants.WARMUP_LABEL_KEY, path, problems)
    value = _text(arguments, ARG_WARMUP_LABEL_VALUE, constants.WARMUP_LABEL_VALUE, path, problems)
    if not label:
        fix = f"name the node label, or leave it out for {constants.WARMUP_LABEL_KEY}"
        problems.append(
            Problem(join_path(path, ARG_WARMUP_LABEL), m.volcano_said(m.VOLCANO_SHARDING_WARMUP_LABEL, fix))
        )
    return Warmup(label=label, value=value), problems


def _node_limit(
    arguments: Mapping[str, Any], path: str, problems: list[Problem]
) -> tuple[PolicyArguments | None, list[Problem]]:
    low = _whole(arguments, ARG_MIN_NODES, path, problems)
    high = _whole(arguments, ARG_MAX_NODES, path, problems)
    if low < 0:
        said = m.VOLCANO_SHARDING_NODE_LIMIT_MIN.format(low=low)
        problems.append(Problem(join_path(path, ARG_MIN_NODES), m.volcano_said(said, "use 0 or more")))
    elif 0 < high < low:
        said = m.VOLCANO_SHARDING_NODE_LIMIT_BOUNDS.format(low=low, high=high)
        fix = "raise maxNodes, or set it to 0 for no upper bound"
        problems.append(Problem(join_path(path, ARG_MAX_NODES), m.volcano_said(said, fix)))
    return NodeLimit(min_nodes=low, max_nodes=high), problems
