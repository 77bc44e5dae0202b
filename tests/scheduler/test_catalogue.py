"""Volcano's scheduler catalogue: its shipped confs load, each name in its registry works, and the
arguments Volcano's plugins take are accepted where honoured and refused by name where not."""

from __future__ import annotations

import pytest

from tests.scheduler.evict_harness import Cluster
from volcano_py.scheduler.builtin import default_registry
from volcano_py.scheduler.core import EVERY_VOLCANO_NAME_CONF, ConfError, load_conf

# The same content as the three confs Volcano's Helm chart ships (installer/helm/chart/volcano/config/).
HELM_DEFAULT = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
HELM_CI = """\
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""
HELM_AGENT = HELM_DEFAULT  # agent-scheduler.conf has the same content as volcano-scheduler.conf


@pytest.mark.parametrize("text", [HELM_DEFAULT, HELM_CI, HELM_AGENT], ids=["default", "ci", "agent"])
def test_volcano_helm_confs_load(text: str) -> None:
    conf = load_conf(text)
    assert conf.plugin_names()[:3] == ["priority", "gang", "conformance"]


def test_ci_conf_runs_its_plugins() -> None:
    conf = load_conf(HELM_CI)
    assert conf.actions == ("enqueue", "allocate", "backfill", "reclaim", "preempt")
    assert {"sla", "network-topology-aware"} <= set(conf.plugin_names())


# Volcano's registry (pkg/scheduler/plugins/factory.go, actions/factory.go), less deviceshare and numa-aware.
WORKING_PLUGINS = [
    "binpack", "capacity", "cdp", "conformance", "drf", "extender", "gang", "network-topology-aware",
    "nodegroup", "nodeorder", "overcommit", "pdb", "predicates", "priority", "proportion", "rescheduling",
    "resource-strategy-fit", "resourcequota", "sla", "task-topology", "tdm", "usage",
]  # fmt: skip
WORKING_ACTIONS = [
    "allocate", "backfill", "enqueue", "gangpreempt", "gangreclaim", "preempt", "reclaim", "shuffle",
]  # fmt: skip
EVERY_NAME_CONF = EVERY_VOLCANO_NAME_CONF


def _one_plugin(name: str) -> str:
    return f'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: {name}\n'


@pytest.mark.parametrize("name", WORKING_PLUGINS)
def test_registry_plugin_loads(name: str) -> None:
    assert load_conf(_one_plugin(name)).plugin_names() == [name]


@pytest.mark.parametrize("name", WORKING_ACTIONS)
def test_registry_action_loads(name: str) -> None:
    text = f'actions: "{name}"\ntiers:\n- plugins:\n  - name: gang\n'
    assert load_conf(text).actions == (name,)


def test_every_volcano_name_is_accounted_for() -> None:
    registry = default_registry()
    assert set(WORKING_PLUGINS) <= set(registry.plugins)
    assert set(WORKING_ACTIONS) <= set(registry.actions)


def test_a_conf_naming_every_volcano_name_loads_and_runs_a_session() -> None:
    conf = load_conf(EVERY_NAME_CONF)
    assert set(conf.plugin_names()) == {*WORKING_PLUGINS, "numa-aware", "deviceshare"}
    assert set(conf.actions) == set(WORKING_ACTIONS)
    cluster = Cluster().nodes_named("n", 2, cpu=8).job("gang", cpu="2", pending=4, min_member=4)
    assert cluster.run(EVERY_NAME_CONF).bound == {f"gang-{i}" for i in range(4)}


def _with_args(plugin: str, args: dict[str, object]) -> str:
    body = "".join(f"      {key}: {value!r}\n" for key, value in args.items())
    return f'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: {plugin}\n    arguments:\n{body}'


# (plugin, arguments, None when accepted / a substring of the refusal)
ARGUMENTS = [
    ("predicates", {"predicate.NodeAffinityEnable": False, "predicate.PodAffinityEnable": True}, None),
    ("predicates", {"predicate.NodePortsEnable": False, "predicate.TaintTolerationEnable": False}, None),
    ("predicates", {"predicate.DynamicResourceAllocationEnable": True, "predicate.CacheEnable": True}, None),
    (
        "predicates",
        {"predicate.VolumeBindingEnable": False, "predicate.PodTopologySpreadEnable": False},
        None,
    ),
    (
        "predicates",
        {"predicate.VolumeBindingEnable": True},
        "predicate.VolumeBindingEnable: true is not supported",
    ),
    (
        "predicates",
        {"predicate.PodTopologySpreadEnable": True},
        "topology spread constraints are not checked",
    ),
    ("predicates", {"predicate.GPUSharingEnable": True}, "deviceshare"),
    ("predicates", {"predicate.ProportionalEnable": True}, "proportional"),
    ("nodeorder", {"leastrequested.weight": 2, "podaffinity.weight": 3, "imagelocality.weight": 0}, None),
    ("nodeorder", {"imagelocality.weight": 1}, "imagelocality.weight: 1 is not supported: image locality"),
    ("nodeorder", {"podtopologyspread.weight": 2}, "podtopologyspread.weight"),
    ("binpack", {"binpack.weight": 10, "binpack.cpu": 2, "binpack.resources": "nvidia.com/gpu"}, None),
    ("overcommit", {"overcommit-factor": 1.5}, None),
    ("overcommit", {"overcommit-factor": "x"}, "overcommit-factor' must be a number"),
    ("sla", {"sla-waiting-time": "1h2m3s"}, None),
    ("sla", {"sla-waiting-time": "soon"}, "sla-waiting-time' must be a positive duration"),
    ("nodegroup", {"strict": False, "enablePreferredOrder": True}, None),
    ("capacity", {"capacity.DynamicResourceAllocationEnable": False}, None),
    ("capacity", {"capacity.DynamicResourceAllocationEnable": True}, None),
    ("capacity", {"capacity.DRAConsumableCapacityEnable": True}, "consumable capacity"),
    ("capacity", {"ancestorReclaimLevel": 2}, "ancestorReclaimLevel is not supported"),
    (
        "network-topology-aware",
        {"weight": 10, "hypernode.binpack.cpu": 5, "hypernode.binpack.memory": 0},
        None,
    ),
    (
        "network-topology-aware",
        {
            "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
            "hypernode.binpack.resources.nvidia.com/gpu": 2,
        },
        None,
    ),
    ("network-topology-aware", {"hypernode.binpack.normal-pod.enable": False}, None),
    ("network-topology-aware", {"hypernode.binpack.normal-pod.fading": 0}, None),
    ("network-topology-aware", {"weight": -1}, "'weight' must be an integer >= 0"),
    (
        "network-topology-aware",
        {"hypernode.binpack.cpu": -2},
        "'hypernode.binpack.cpu' must be an integer >= 0",
    ),
    ("network-topology-aware", {"hypernode.binpack.normal-pod.fading": -0.5}, "must be a number >= 0.0"),
    (
        "network-topology-aware",
        {"hypernode.binpack.resources.nvidia.com/gpu": 2},
        "not listed in hypernode.binpack.resources",
    ),
    ("network-topology-aware", {"cpsat.timeBudgetMs": 50}, "unknown argument(s) cpsat.timeBudgetMs"),
    (
        "network-topology-aware",
        {"hypernode.gradient.evict.max-hypernodes": 4},
        "max-hypernodes: 4 is not supported",
    ),
    ("cdp", {"cooldown": "1m"}, "unknown argument(s) cooldown"),
    ("task-topology", {"task-topology.weight": 10}, None),
    ("task-topology", {"task-topology.weight": -1}, "task-topology.weight"),
    ("task-topology", {"weight": 2}, "unknown argument(s) weight"),
]


@pytest.mark.parametrize(("plugin", "args", "refusal"), ARGUMENTS)
def test_plugin_arguments(plugin: str, args: dict[str, object], refusal: str | None) -> None:
    text = _with_args(plugin, args)
    if refusal is None:
        load_conf(text)
        return
    with pytest.raises(ConfError) as err:
        load_conf(text)
    assert refusal in str(err.value)


@pytest.mark.parametrize(
    ("action", "args", "refusal"),
    [
        ("preempt", {"minCandidateNodesPercentage": 10, "predicateErrorCacheEnable": True}, None),
        ("preempt", {"enableTopologyAwarePreemption": True, "topologyAwarePreemptWorkerNum": 4}, None),
        ("preempt", {"minCandidateNodesPercentage": 101}, "must be between 0 and 100, got 101"),
        (
            "reclaim",
            {"enableTopologyAwarePreemption": True},
            "enableTopologyAwarePreemption is read by the preempt action only",
        ),
        (
            "gangpreempt",
            {"enableTopologyAwarePreemption": True},
            "enableTopologyAwarePreemption is read by the preempt action only",
        ),
        ("gangpreempt", {"maxDomains": 4, "allowWholeBundle": True}, None),
        ("gangreclaim", {"allowWholeBundle": False}, "allowWholeBundle: false is not supported"),
        ("reclaim", {"maxDomains": 4}, "unknown argument(s) maxDomains"),
    ],
)
def test_action_arguments(action: str, args: dict[str, object], refusal: str | None) -> None:
    body = "".join(f"    {key}: {value!r}\n" for key, value in args.items())
    text = (
        f'actions: "{action}"\ntiers:\n- plugins:\n  - name: gang\n'
        f"configurations:\n- name: {action}\n  arguments:\n{body}"
    )
    if refusal is None:
        load_conf(text)
        return
    with pytest.raises(ConfError) as err:
        load_conf(text)
    assert refusal in str(err.value)


def test_cpsat_and_its_volcano_name_together_refused() -> None:
    text = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: cpsat\n  - name: network-topology-aware\n'
    with pytest.raises(ConfError, match="keep only one"):
        load_conf(text)
