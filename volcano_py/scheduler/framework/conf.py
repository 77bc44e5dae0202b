"""Volcano's ``volcano-scheduler.conf``: parse, validate against a registry, fail at load naming the entry.

Format (Volcano's): ``actions`` is a comma-separated string run in order; ``tiers`` is a list of
``{plugins: [{name, enableXxx..., arguments}]}``; ``configurations`` is a list of ``{name: <action>,
arguments}``. Volcano logs and skips what it does not know; we refuse it, so a typo cannot quietly change
how a cluster is scheduled.

The confs volcano-py ships are written here once and derived from each other:

* ``VOLCANO_SHIPPED_CONF``: the conf Volcano's installer ships (its built-in default plus binpack) -- what
  "greedy, as Volcano places" means in the simulator and the placement benchmark.
* ``DEFAULT_CONF``: Volcano's built-in default plus our ``cpsat`` plugin; used when no conf is given.
* ``with_cpsat`` / ``with_actions``: the variants (the deployed ConfigMap, ``volcano-py up``'s conf).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from volcano_py.api.gostrings import go_trim_space
from volcano_py.api.messages import VOLCANO_SCHEDULER_UNKNOWN_ACTION, volcano_said

from .arguments import ConfError
from .extension import EXTENSION_POINTS
from .metrics_conf import MetricsConf, parse_metrics
from .registry import Registry

_VOLCANO_BUILTIN_CONF = """\
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
"""


def with_plugin(conf: str, name: str) -> str:
    """``conf`` with plugin ``name`` appended to its last tier (the confs here end with that tier)."""
    return conf + f"  - name: {name}\n"


def with_cpsat(conf: str) -> str:
    """Gangs and topology-bound jobs placed by the CP-SAT solver (time-boxed, greedy fallback)."""
    return with_plugin(conf, "cpsat")


def with_actions(conf: str, actions: str) -> str:
    """``conf`` running ``actions`` (Volcano's comma-separated string) instead of its own."""
    replaced, count = re.subn(r'^actions: ".*"$', f'actions: "{actions}"', conf, count=1, flags=re.MULTILINE)
    if count != 1:
        raise ValueError("conf has no actions line to replace")
    return replaced


VOLCANO_SHIPPED_CONF = with_plugin(_VOLCANO_BUILTIN_CONF, "binpack")
DEFAULT_CONF = with_cpsat(_VOLCANO_BUILTIN_CONF)
# Every action and plugin name of Volcano's registries in one conf (order-sensitive ones in Volcano's order):
# what a user switching over with everything enabled has. nodegroup is not strict: strict keeps every pod off
# nodes without a nodegroup label, as in Volcano.
_EVERY_FIRST_TIER = ("priority", "gang", "conformance", "sla", "tdm", "pdb", "cdp")
_EVERY_SECOND_TIER = (
    "drf", "predicates", "proportion", "capacity", "nodeorder", "binpack", "resource-strategy-fit",
    "overcommit", "task-topology", "numa-aware", "deviceshare", "rescheduling", "usage",
    "network-topology-aware", "extender", "resourcequota",
)  # fmt: skip
EVERY_VOLCANO_NAME_CONF = (
    'actions: "enqueue, allocate, backfill, preempt, reclaim, gangpreempt, gangreclaim, shuffle"\n'
    "tiers:\n- plugins:\n"
    + "".join(f"  - name: {name}\n" for name in _EVERY_FIRST_TIER)
    + "- plugins:\n"
    + "".join(f"  - name: {name}\n" for name in _EVERY_SECOND_TIER)
    + "  - name: nodegroup\n    arguments:\n      strict: false\n"
)


# Every per-plugin flag Volcano's PluginOption knows. Those that map to an extension point we run switch
# it off; the others are accepted so Volcano confs load, and have nothing to switch here.
_FLAGS: frozenset[str] = frozenset(
    {ep.flag for ep in EXTENSION_POINTS if ep.flag}
    | {
        "enableHierarchy",
        "enableNamespaceOrder",
        "enableBestNode",
        "enabledVictim",
        "enableTargetJob",
        "enableReservedNodes",
        "enableClusterOrder",
        "enableHyperNodeOrder",
        "enabledOverused",
        "enabledAllocatable",
        "enableJobEnqueueable",
    }
)
# Volcano spells two flags both ways across versions; read them as one.
_ALIASES = {"enabledOverused": "enableOverused", "enabledAllocatable": "enableAllocatable"}


@dataclass(frozen=True, slots=True)
class PluginOption:
    name: str
    flags: Mapping[str, bool] = field(default_factory=dict)
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def enabled(self, flag: str | None) -> bool:
        """A flag left out means enabled, as in Volcano."""
        return flag is None or self.flags.get(flag, True)


@dataclass(frozen=True, slots=True)
class SchedulerConf:
    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]
    configurations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Where node load is read from (the ``metrics`` section); None: no node load is collected.
    metrics: MetricsConf | None = None

    def plugin_names(self) -> list[str]:
        return [p.name for tier in self.tiers for p in tier]

    def option(self, name: str) -> PluginOption | None:
        return next((p for tier in self.tiers for p in tier if p.name == name), None)


def _plugin_option(entry: Any, where: str) -> PluginOption:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"]:
        raise ConfError(f"{where}: each plugin needs a 'name', got {entry!r}")
    name = entry["name"]
    flags: dict[str, bool] = {}
    for key, value in entry.items():
        if key in ("name", "arguments"):
            continue
        if key not in _FLAGS:
            raise ConfError(
                f"{where} ({name}): unknown option {key!r}; "
                f"known: name, arguments, {', '.join(sorted(_FLAGS))}"
            )
        if not isinstance(value, bool):
            raise ConfError(f"{where} ({name}): {key} must be true or false, got {value!r}")
        flag = str(key)
        flags[_ALIASES.get(flag, flag)] = value
    arguments = entry.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        raise ConfError(f"{where} ({name}): arguments must be a mapping, got {arguments!r}")
    return PluginOption(name=name, flags=flags, arguments=dict(arguments))


def _actions(text: object, registry: Registry) -> tuple[str, ...]:
    """``actions`` split as Volcano's scheduler splits it: at every comma, each entry trimmed of Go's spaces
    and looked up as it is. So an empty entry (a trailing or doubled comma, or no actions at all) is an
    unknown action, and an action listed twice runs twice."""
    example = 'e.g. actions: "enqueue, allocate, backfill"'
    if not isinstance(text, str):
        raise ConfError(f"actions: must be a string of comma-separated actions ({example}), not {text!r}")
    known = ", ".join(sorted(registry.actions))
    actions = []
    for entry in text.split(","):
        name = go_trim_space(entry)
        if name not in registry.actions:
            volcano = VOLCANO_SCHEDULER_UNKNOWN_ACTION.format(action=entry)
            if not go_trim_space(text):
                ours = f"actions: is empty (list the actions to run, {example})"
            elif not name:
                ours = f"actions: {text!r} has an empty entry (drop the extra comma, {example})"
            else:
                ours = f"actions: unknown action {name!r} (known: {known})"
            raise ConfError(volcano_said(volcano, ours))
        actions.append(name)
    return tuple(actions)


def parse_conf(text: str | None, registry: Registry) -> SchedulerConf:
    """Parse and validate; ``None`` or blank text gives Volcano's default conf."""
    if text is None or not text.strip():
        text = DEFAULT_CONF
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfError(f"scheduler conf is not valid YAML: {err}") from None
    if not isinstance(raw, Mapping):
        raise ConfError("scheduler conf must be a mapping with 'actions' and 'tiers'")
    unknown = sorted(set(raw) - {"actions", "tiers", "configurations", "metrics"})
    if unknown:
        raise ConfError(
            f"scheduler conf: unknown top-level key(s) {', '.join(unknown)}; "
            "use actions, tiers, configurations, metrics"
        )
    actions = _actions(raw.get("actions", ""), registry)
    tiers_raw = raw.get("tiers") or []
    if not isinstance(tiers_raw, list):
        raise ConfError("scheduler conf: tiers must be a list of {plugins: [...]}")
    tiers: list[tuple[PluginOption, ...]] = []
    seen: set[str] = set()
    for t, tier in enumerate(tiers_raw):
        where = f"tiers[{t}]"
        if not isinstance(tier, Mapping) or not isinstance(tier.get("plugins"), list):
            raise ConfError(f"{where}: must be a mapping with a 'plugins' list")
        options = []
        for p, entry in enumerate(tier["plugins"]):
            option = _plugin_option(entry, f"{where}.plugins[{p}]")
            if option.name not in registry.plugins:
                known = ", ".join(sorted(registry.plugins))
                raise ConfError(f"{where}.plugins[{p}]: unknown plugin {option.name!r}; known: {known}")
            if option.name in seen:
                raise ConfError(f"{where}.plugins[{p}]: plugin {option.name!r} appears twice")
            seen.add(option.name)
            registry.plugin(option.name, option.arguments)  # validates its arguments now, not mid-cycle
            options.append(option)
        tiers.append(tuple(options))
    configurations: dict[str, Mapping[str, Any]] = {}
    for c, entry in enumerate(raw.get("configurations") or []):
        if not isinstance(entry, Mapping) or entry.get("name") not in registry.actions:
            raise ConfError(
                f"configurations[{c}]: 'name' must be an action ({', '.join(sorted(registry.actions))})"
            )
        arguments = entry.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise ConfError(f"configurations[{c}] ({entry['name']}): arguments must be a mapping")
        registry.action(entry["name"], arguments)
        configurations[entry["name"]] = dict(arguments)
    conf = SchedulerConf(
        actions=actions,
        tiers=tuple(tiers),
        configurations=configurations,
        metrics=parse_metrics(raw.get("metrics")),
    )
    _check_combinations(conf)
    return conf


def _check_combinations(conf: SchedulerConf) -> None:
    actions = conf.actions
    if "consolidate" in actions and (
        "allocate" not in actions or actions.index("consolidate") > actions.index("allocate")
    ):
        raise ConfError(
            "actions: consolidate must come before allocate (it puts a gang into the room it opened before "
            'allocate hands room out), e.g. actions: "enqueue, consolidate, allocate, backfill"'
        )
    drf = conf.option("drf")
    if drf is not None and drf.flags.get("enableHierarchy"):
        for other in ("proportion", "capacity"):
            if conf.option(other) is not None:
                raise ConfError(
                    f"plugin drf: enableHierarchy conflicts with plugin {other} (both divide queues); "
                    f"remove one of them"
                )
        raise ConfError(
            "plugin drf: enableHierarchy (hierarchical DRF) is not supported; use queues with spec.parent "
            "and the capacity plugin for hierarchical sharing"
        )
    if "cpsat" in conf.plugin_names() and "network-topology-aware" in conf.plugin_names():
        raise ConfError(
            "plugins cpsat and network-topology-aware both place jobs with a network topology (cpsat by its "
            "own objective, network-topology-aware by Volcano's HyperNode scores); keep only one of them"
        )
