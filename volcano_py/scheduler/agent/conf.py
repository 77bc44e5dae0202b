"""The agent scheduler's conf: Volcano's format, its agent scheduler's registry, and our queue accounting.

Volcano's agent scheduler knows one action (``allocate``) and two plugins (``predicates``, ``nodeorder``);
its default conf runs just those. Ours runs the same code as the batch scheduler's (one plugin catalogue),
restricted to what places a single pod: the per-node plugins, and the queue plugins, because here agent pods
count against their Queue (Volcano's agent scheduler does no queue accounting). The default adds ``capacity``:
an agent pod is placed only while its Queue stays within its capability, counting what the batch
scheduler's pods hold in it too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from ..builtin import default_registry
from ..framework.conf import SchedulerConf, parse_conf, with_plugin
from ..framework.registry import Registry

# Volcano's agent scheduler default (pkg/agentscheduler's DefaultSchedulerConf), in our spelling.
VOLCANO_AGENT_CONF: Final = """\
actions: "allocate"
tiers:
- plugins:
  - name: predicates
  - name: nodeorder
"""
AGENT_DEFAULT_CONF: Final = with_plugin(VOLCANO_AGENT_CONF, "capacity")

# What a conf of the agent scheduler may name: Volcano's agent registry, the node-scoring plugins that judge
# one pod on its own, and the queue plugins.
AGENT_ACTIONS: Final = frozenset({"allocate"})
AGENT_PLUGINS: Final = frozenset(
    {
        "predicates",
        "nodeorder",
        "priority",
        "binpack",
        "resource-strategy-fit",
        "usage",
        "capacity",
        "proportion",
    }
)


def agent_registry() -> Registry:
    """The built-in registry cut down to what the agent scheduler runs: naming anything else in its conf is
    refused at load, with the names it knows."""
    full = default_registry()
    return Registry(
        actions={name: f for name, f in full.actions.items() if name in AGENT_ACTIONS},
        plugins={name: f for name, f in full.plugins.items() if name in AGENT_PLUGINS},
    )


def load_agent_conf(
    text: str | None,
    *,
    percentage_of_nodes: int | None = None,
    min_percentage_of_nodes: int | None = None,
    min_nodes: int | None = None,
) -> SchedulerConf:
    """Parse an agent scheduler conf (None or blank: ``AGENT_DEFAULT_CONF``); the node-sampling flags
    (Volcano's ``--percentage-nodes-to-find``, ``--minimum-percentage-nodes-to-find``,
    ``--minimum-feasible-nodes``) become allocate's arguments of the same meaning, over the conf's own."""
    conf = parse_conf(text if text and text.strip() else AGENT_DEFAULT_CONF, agent_registry())
    flags = {
        "percentageOfNodesToFind": percentage_of_nodes,
        "minPercentageOfNodesToFind": min_percentage_of_nodes,
        "minNodesToFind": min_nodes,
    }
    given = {name: value for name, value in flags.items() if value is not None}
    if not given:
        return conf
    arguments = {**conf.configurations.get("allocate", {}), **given}
    registry = agent_registry()
    registry.action("allocate", arguments)  # checks the values, naming the bad one
    return replace(conf, configurations={**conf.configurations, "allocate": arguments})
