"""The sharding controller's configuration: the ``sharding.yaml`` key of Volcano's sharding ConfigMap.

Format (Volcano's, ``docs/user-guide/how_to_configure_sharding_configmap.md``)::

    schedulerConfigs:                  # one entry, and one NodeShard named after it, per scheduler
    - name: volcano
      type: volcano
      policies:                        # filter -> weighted score -> select, in this order
      - name: allocation-rate          # filter: CPU utilisation in [minCPUUtil, maxCPUUtil]; score: busier
        weight: 1                      #   is better (packs work onto busy nodes); 0 or unset means 1
        arguments: {minCPUUtil: 0.0, maxCPUUtil: 0.6}
      - name: warmup                   # score: 1 for a node labelled warmupLabel=warmupLabelValue
        weight: 2
      - name: node-limit               # select: keep the best maxNodes (0: all); minNodes is only reported
        arguments: {minNodes: 2, maxNodes: 100}
    shardSyncPeriod: 60s               # full re-assignment period (a Go duration)
    enableNodeEventTrigger: true       # node and pod changes also trigger a re-assignment

Volcano's deprecated scheduler-level fields (``cpuUtilizationMin``/``Max``, ``preferWarmupNodes``,
``minNodes``/``maxNodes``, ``arguments``) still build the chain when ``policies`` is empty, as Volcano's do.
Volcano checks some fields at load and only logs the rest (an unknown policy, a bad argument, a bad period)
while running with less than was written; here every one is refused at load, Volcano's words first, with the
field named, and so is an unknown key or a second entry for one scheduler, so a typo cannot quietly reshape
the shards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    model_validator,
)
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from volcano_py.api import constants
from volcano_py.api import messages as m
from volcano_py.api.common import parse_duration
from volcano_py.api.problems import Problem, from_validation_error, join_path
from volcano_py.api.shard_policies import (
    ARG_MAX_CPU_UTIL,
    ARG_MAX_NODES,
    ARG_MIN_CPU_UTIL,
    ARG_MIN_NODES,
    ShardPolicy,
    ShardPolicyName,
    parse_policy,
    use_policies,
)

SCHEDULER_CONFIGS_FIELD: Final = "schedulerConfigs"
# Used when ``shardSyncPeriod`` is unset (the controller's flag default), and when it is zero or negative
# (the controller's own floor), as in Volcano.
DEFAULT_SHARD_SYNC_PERIOD: Final = timedelta(seconds=60)
NON_POSITIVE_SYNC_PERIOD_FALLBACK: Final = timedelta(seconds=120)


@dataclass(frozen=True, slots=True)
class SchedulerShardConfig:
    name: str
    type: str
    policies: tuple[ShardPolicy, ...]


@dataclass(frozen=True, slots=True)
class ShardingConfig:
    schedulers: tuple[SchedulerShardConfig, ...]
    shard_sync_period: timedelta = DEFAULT_SHARD_SYNC_PERIOD
    enable_node_event_trigger: bool = True


class ShardingConfigError(ValueError):
    """A config that cannot be used; the message names each bad field and its fix."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(problem) for problem in problems))
        self.problems = problems


# --- the YAML as written ------------------------------------------------------------------------------------


class _Spec(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, value: Any) -> Any:
        # Go decodes ``policies:`` left empty as no policies; so do we.
        if isinstance(value, Mapping):
            return {key: item for key, item in value.items() if item is not None}
        return value


class PolicySpec(_Spec):
    name: StrictStr = ""
    weight: StrictInt = 0
    arguments: dict[str, Any] = Field(default_factory=dict)


class SchedulerConfigSpec(_Spec):
    name: StrictStr = ""
    type: StrictStr = ""
    policies: list[PolicySpec] = Field(default_factory=list)
    arguments: dict[str, Any] = Field(default_factory=dict)  # deprecated: allocation-rate's arguments
    cpu_utilization_min: StrictFloat = 0.0  # deprecated
    cpu_utilization_max: StrictFloat = 0.0  # deprecated
    prefer_warmup_nodes: StrictBool = False  # deprecated
    min_nodes: StrictInt = 0  # deprecated
    max_nodes: StrictInt = 0  # deprecated


class ShardingConfigSpec(_Spec):
    scheduler_configs: list[SchedulerConfigSpec] = Field(default_factory=list)
    shard_sync_period: StrictStr = ""
    enable_node_event_trigger: StrictBool | None = None


# --- loading ------------------------------------------------------------------------------------------------


def parse_sharding_configmap(data: Mapping[str, str]) -> ShardingConfig:
    """The config in a ConfigMap's ``data``; the key Volcano reads must be there."""
    text = data.get(constants.SHARDING_CONFIG_KEY)
    if text is None:
        raise ShardingConfigError(
            [Problem("data", f"has no key {constants.SHARDING_CONFIG_KEY!r} (put the config under it)")]
        )
    return parse_sharding_config(text)


def parse_sharding_config(text: str) -> ShardingConfig:
    """Parse ``sharding.yaml``; raise ShardingConfigError naming every bad field and its fix."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ShardingConfigError(
            [
                Problem(
                    "",
                    m.volcano_said(m.VOLCANO_SHARDING_UNMARSHAL, f"not valid YAML ({err}); fix the syntax"),
                )
            ]
        ) from None
    if not isinstance(raw, Mapping):
        got = "nothing" if raw is None else type(raw).__name__
        raise ShardingConfigError(
            [Problem("", m.volcano_said(m.VOLCANO_SHARDING_UNMARSHAL, f"expected a mapping, got {got}"))]
        )
    try:
        spec = ShardingConfigSpec.model_validate(raw)
    except PydanticValidationError as err:
        raise ShardingConfigError(from_validation_error(err)) from None
    problems: list[Problem] = []
    if not spec.scheduler_configs:
        problems.append(
            Problem(
                SCHEDULER_CONFIGS_FIELD,
                m.volcano_said(m.VOLCANO_SHARDING_NO_SCHEDULERS, "list one entry per scheduler"),
            )
        )
    schedulers: list[SchedulerShardConfig] = []
    first: dict[str, int] = {}
    for i, entry in enumerate(spec.scheduler_configs):
        path = join_path(SCHEDULER_CONFIGS_FIELD, i)
        if entry.name in first:
            problems.append(
                Problem(
                    join_path(path, "name"),
                    f"scheduler {entry.name!r} is already configured at {SCHEDULER_CONFIGS_FIELD}"
                    f"[{first[entry.name]}] (give each scheduler one entry: its NodeShard is named after it)",
                )
            )
        first.setdefault(entry.name, i)
        found = _scheduler_problems(entry, path)
        chain, chain_problems = _policy_chain(entry, path)
        problems += found + chain_problems
        schedulers.append(SchedulerShardConfig(name=entry.name, type=entry.type, policies=chain))
    period, period_problems = _sync_period(spec.shard_sync_period)
    problems += period_problems
    if problems:
        raise ShardingConfigError(problems)
    trigger = spec.enable_node_event_trigger
    return ShardingConfig(
        schedulers=tuple(schedulers),
        shard_sync_period=period,
        enable_node_event_trigger=True if trigger is None else trigger,
    )


def _sync_period(text: str) -> tuple[timedelta, list[Problem]]:
    if not text:
        return DEFAULT_SHARD_SYNC_PERIOD, []
    try:
        period = parse_duration(text)
    except ValueError as err:
        return DEFAULT_SHARD_SYNC_PERIOD, [Problem("shardSyncPeriod", str(err))]
    return (period if period > timedelta(0) else NON_POSITIVE_SYNC_PERIOD_FALLBACK), []


def _scheduler_problems(entry: SchedulerConfigSpec, path: str) -> list[Problem]:
    """The checks Volcano makes on each entry as it loads the config, in its order."""
    problems: list[Problem] = []
    if not entry.name:
        problems.append(
            Problem(
                join_path(path, "name"),
                m.volcano_said(
                    m.VOLCANO_SHARDING_NAME_EMPTY, "give the scheduler's name (its schedulerName)"
                ),
            )
        )
    for field, value in (
        ("cpuUtilizationMin", entry.cpu_utilization_min),
        ("cpuUtilizationMax", entry.cpu_utilization_max),
    ):
        if not 0 <= value <= 1:
            said = m.VOLCANO_SHARDING_UTIL_RANGE.format(field=field, value=value)
            problems.append(
                Problem(join_path(path, field), m.volcano_said(said, "use a fraction from 0 to 1"))
            )
    if entry.cpu_utilization_min > entry.cpu_utilization_max:
        said = m.VOLCANO_SHARDING_UTIL_ORDER.format(
            low=entry.cpu_utilization_min, high=entry.cpu_utilization_max
        )
        problems.append(
            Problem(join_path(path, "cpuUtilizationMin"), m.volcano_said(said, "swap the bounds"))
        )
    if entry.min_nodes < 0:
        problems.append(
            Problem(
                join_path(path, "minNodes"), m.volcano_said(m.VOLCANO_SHARDING_MIN_NODES, "use 0 or more")
            )
        )
    if entry.max_nodes < entry.min_nodes:
        # Volcano's rule for these deprecated fields: maxNodes is required once minNodes is set.
        said = m.VOLCANO_SHARDING_MAX_NODES.format(high=entry.max_nodes, low=entry.min_nodes)
        fix = "set maxNodes too, or better, move both to a node-limit policy"
        problems.append(Problem(join_path(path, "maxNodes"), m.volcano_said(said, fix)))
    for j, policy in enumerate(entry.policies):
        here = join_path(path, "policies", j)
        if not policy.name:
            said = m.VOLCANO_SHARDING_POLICY_NAME_EMPTY.format(index=j)
            problems.append(Problem(join_path(here, "name"), m.volcano_said(said, use_policies())))
        if policy.weight < 0:
            problems.append(
                Problem(join_path(here, "weight"), m.volcano_said(m.VOLCANO_SHARDING_WEIGHT, "use 0 or more"))
            )
    return problems


def _policy_chain(entry: SchedulerConfigSpec, path: str) -> tuple[tuple[ShardPolicy, ...], list[Problem]]:
    """The chain as Volcano builds it: ``policies`` as written, or one made from the deprecated fields."""
    # (name, weight, arguments, path, whether its problems are new): a policy made from the deprecated scalar
    # fields can only repeat what ``_scheduler_problems`` already said about them.
    written: list[tuple[str, int, Mapping[str, Any], str, bool]] = [
        (p.name, p.weight, p.arguments, join_path(path, "policies", j), True)
        for j, p in enumerate(entry.policies)
    ]
    if not written:
        if entry.arguments:
            written.append((ShardPolicyName.ALLOCATION_RATE, 1, entry.arguments, path, True))
        else:
            legacy = {
                ARG_MIN_CPU_UTIL: entry.cpu_utilization_min,
                ARG_MAX_CPU_UTIL: entry.cpu_utilization_max,
            }
            written.append((ShardPolicyName.ALLOCATION_RATE, 1, legacy, path, False))
        if entry.prefer_warmup_nodes:
            written.append((ShardPolicyName.WARMUP, 1, {}, path, False))
    has_limit = any(name == ShardPolicyName.NODE_LIMIT for name, *_ in written)
    if (entry.min_nodes > 0 or entry.max_nodes > 0) and not has_limit:
        bounds = {ARG_MIN_NODES: entry.min_nodes, ARG_MAX_NODES: entry.max_nodes}
        written.append((ShardPolicyName.NODE_LIMIT, 1, bounds, path, False))
    chain: list[ShardPolicy] = []
    problems: list[Problem] = []
    for name, weight, arguments, here, new in written:
        if not name:
            continue  # reported with Volcano's words above
        parsed, found = parse_policy(name, arguments, here)
        problems += found if new else []
        if parsed is not None:
            # Volcano reads an unset (zero) weight as 1.
            chain.append(ShardPolicy(arguments=parsed, weight=weight or 1))
    return tuple(chain), problems
