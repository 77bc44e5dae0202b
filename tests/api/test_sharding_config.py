"""The sharding ConfigMap's ``sharding.yaml``: what Volcano accepts is read as Volcano reads it, and a bad
config is refused with Volcano's words first, the field named and the fix."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import yaml

from volcano_py.api import constants
from volcano_py.api.shard_policies import AllocationRate, NodeLimit, ShardPolicy, Warmup
from volcano_py.api.sharding_config import (
    ShardingConfigError,
    parse_sharding_config,
    parse_sharding_configmap,
)

# Volcano's user guide example.
GUIDE = """
schedulerConfigs:
  - name: volcano
    type: volcano
    policies:
      - name: allocation-rate
        weight: 1
        arguments: {minCPUUtil: 0.0, maxCPUUtil: 0.6}
      - name: warmup
        weight: 2
        arguments: {warmupLabel: "node.volcano.sh/warmup", warmupLabelValue: "true"}
      - name: node-limit
        arguments: {minNodes: 2, maxNodes: 100}
  - name: agent-scheduler
    type: agent
    policies:
      - name: allocation-rate
        weight: 1
        arguments: {minCPUUtil: 0.7, maxCPUUtil: 1.0}
      - name: warmup
        weight: 5
      - name: node-limit
        arguments: {minNodes: 2, maxNodes: 50}
shardSyncPeriod: "60s"
enableNodeEventTrigger: true
"""


def test_the_user_guide_example_reads_as_volcano_reads_it() -> None:
    config = parse_sharding_config(GUIDE)
    volcano, agent = config.schedulers
    assert (volcano.name, volcano.type) == ("volcano", "volcano")
    assert volcano.policies == (
        ShardPolicy(AllocationRate(0.0, 0.6), weight=1),
        ShardPolicy(Warmup(constants.WARMUP_LABEL_KEY, "true"), weight=2),
        ShardPolicy(NodeLimit(2, 100), weight=1),
    )
    assert agent.policies[1] == ShardPolicy(Warmup(), weight=5)
    assert (config.shard_sync_period, config.enable_node_event_trigger) == (timedelta(seconds=60), True)


def test_defaults_and_the_configmap_key() -> None:
    text = "schedulerConfigs: [{name: v, policies: [{name: warmup, weight: 0}]}]"
    config = parse_sharding_configmap({constants.SHARDING_CONFIG_KEY: text})
    # An unset (or zero) weight is 1, as Volcano reads it; period and trigger take the controller's defaults.
    assert config.schedulers[0].policies == (ShardPolicy(Warmup(), weight=1),)
    assert (config.shard_sync_period, config.enable_node_event_trigger) == (timedelta(seconds=60), True)
    with pytest.raises(ShardingConfigError, match=r"data: has no key 'sharding\.yaml'"):
        parse_sharding_configmap({"config.yaml": ""})


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        pytest.param(
            {
                "cpuUtilizationMin": 0.7,
                "cpuUtilizationMax": 1,
                "preferWarmupNodes": True,
                "minNodes": 1,
                "maxNodes": 5,
            },
            (ShardPolicy(AllocationRate(0.7, 1.0)), ShardPolicy(Warmup()), ShardPolicy(NodeLimit(1, 5))),
            id="scalar-fields",
        ),
        pytest.param(
            {"arguments": {"minCPUUtil": 0.2, "maxCPUUtil": 0.4}},
            (ShardPolicy(AllocationRate(0.2, 0.4)),),
            id="scheduler-arguments",
        ),
        pytest.param(
            {"policies": [{"name": "warmup"}], "minNodes": 1, "maxNodes": 3},
            (ShardPolicy(Warmup()), ShardPolicy(NodeLimit(1, 3))),
            id="limits-appended-to-policies",
        ),
        pytest.param(
            {"policies": [{"name": "allocation-rate"}]},
            (ShardPolicy(AllocationRate(0.0, 0.0)),),
            id="allocation-rate-without-arguments-takes-only-idle-nodes",
        ),
    ],
)
def test_deprecated_fields_build_the_chain_as_volcanos_do(entry: dict[str, Any], expected: Any) -> None:
    text = yaml.safe_dump({"schedulerConfigs": [{"name": "s", "type": "volcano", **entry}]})
    assert parse_sharding_config(text).schedulers[0].policies == expected


@pytest.mark.parametrize(
    ("text", "period"),
    [("shardSyncPeriod: 2m", timedelta(minutes=2)), ("shardSyncPeriod: 0s", timedelta(seconds=120))],
)
def test_sync_period(text: str, period: timedelta) -> None:
    assert parse_sharding_config(f"schedulerConfigs: [{{name: s}}]\n{text}").shard_sync_period == period


def _refusal(config: Any) -> list[str]:
    text = config if isinstance(config, str) else yaml.safe_dump(config)
    with pytest.raises(ShardingConfigError) as err:
        parse_sharding_config(text)
    return [str(problem) for problem in err.value.problems]


def _one(**entry: Any) -> dict[str, Any]:
    return {"schedulerConfigs": [{"name": "volcano", **entry}]}


def _policy(name: str, **arguments: Any) -> dict[str, Any]:
    return {"policies": [{"name": name, "arguments": arguments}]}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(
            "schedulerConfigs: [",
            "failed to unmarshal sharding config; not valid YAML",
            id="yaml",
        ),
        pytest.param(
            {"schedulerConfigs": []},
            "schedulerConfigs: sharding config must contain at least one schedulerConfig entry; list one",
            id="no-schedulers",
        ),
        pytest.param(
            {"schedulerConfigs": [{"type": "agent"}]},
            "schedulerConfigs[0].name: name must not be empty; give the scheduler's name",
            id="no-name",
        ),
        pytest.param(
            {"schedulerConfigs": [{"name": "a"}, {"name": "a"}]},
            "schedulerConfigs[1].name: scheduler 'a' is already configured at schedulerConfigs[0]",
            id="duplicate",
        ),
        pytest.param(
            _one(cpuUtilizationMax=1.5),
            "schedulerConfigs[0].cpuUtilizationMax: cpuUtilizationMax 1.50 out of range [0,1]; use a",
            id="scalar-range",
        ),
        pytest.param(
            _one(minNodes=2),
            "schedulerConfigs[0].maxNodes: maxNodes (0) must be >= minNodes (2); set maxNodes too",
            id="scalar-bounds",
        ),
        pytest.param(
            _one(policies=[{"name": "spread"}]),
            "schedulerConfigs[0].policies[0].name: policy spread not found; use one of allocation-rate",
            id="unknown-policy",
        ),
        pytest.param(
            _one(policies=[{"name": "warmup", "weight": -1}]),
            "schedulerConfigs[0].policies[0].weight: weight must be >= 0 (omit for default of 1); use 0",
            id="weight",
        ),
        pytest.param(
            _one(**_policy("allocation-rate", minCPUUtil=0.8, maxCPUUtil=0.5)),
            "schedulerConfigs[0].policies[0].arguments: invalid CPU utilization range [0.80, 0.50]: must be "
            "within [0.0, 1.0] and min <= max; set minCPUUtil <= maxCPUUtil",
            id="cpu-range",
        ),
        pytest.param(
            _one(**_policy("allocation-rate", minCPUUtil="0.7", maxCPUUtil=1)),
            "schedulerConfigs[0].policies[0].arguments.minCPUUtil: '0.7' is not a number",
            id="quoted-number",
        ),
        pytest.param(
            _one(**_policy("warmup", maxNodes=3)),
            "schedulerConfigs[0].policies[0].arguments.maxNodes: maxNodes is only supported by the "
            "node-limit policy; move it to a node-limit policy",
            id="limit-on-wrong-policy",
        ),
        pytest.param(
            _one(**_policy("node-limit", minNodes=5, maxNodes=2)),
            "schedulerConfigs[0].policies[0].arguments.maxNodes: invalid bounds [5, 2]: maxNodes must be >= "
            "minNodes; raise maxNodes",
            id="node-limit-bounds",
        ),
        pytest.param(
            _one(**_policy("warmup", warmupLabel="")),
            "schedulerConfigs[0].policies[0].arguments.warmupLabel: warmupLabel cannot be empty",
            id="warmup-label",
        ),
        pytest.param(
            _one(**_policy("warmup", warmupLable="pool")),
            "schedulerConfigs[0].policies[0].arguments.warmupLable: unknown argument of warmup "
            "(use warmupLabel, warmupLabelValue)",
            id="argument-typo",
        ),
        pytest.param(
            {"schedulerConfigs": [{"name": "s", "maxNode": 3}]},
            "schedulerConfigs[0].maxNode: unknown field",
            id="field-typo",
        ),
        pytest.param(
            {"schedulerConfigs": [{"name": "s"}], "shardSyncPeriod": "1 minute"},
            "shardSyncPeriod: '1 minute' is not a duration",
            id="period",
        ),
    ],
)
def test_a_bad_config_is_refused_naming_the_field_and_the_fix(config: Any, expected: str) -> None:
    problems = _refusal(config)
    assert any(problem.startswith(expected) for problem in problems), problems
