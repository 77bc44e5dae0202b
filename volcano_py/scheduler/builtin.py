"""The built-in actions and plugins: the one place they are registered.

A new plugin (or action) registers here: write its module under ``plugins/`` (or ``actions/``), import its
class below and add one ``registry.add_plugin(name, Class)`` line to ``default_registry``. The name is the
one a ``volcano-scheduler.conf`` uses in its ``tiers`` (or ``actions``); ``core.load_conf`` refuses names
that are not registered here. Every name of Volcano's scheduler registries is registered, and one of ours
(``consolidate``).
"""

from __future__ import annotations

from .actions.allocate import Allocate
from .actions.backfill import Backfill
from .actions.consolidate import Consolidate
from .actions.enqueue import Enqueue
from .actions.gangnames import GangPreempt, GangReclaim
from .actions.preempt import Preempt
from .actions.reclaim import Reclaim
from .actions.shuffle import Shuffle
from .framework.registry import Registry
from .plugins.binpack import BinpackPlugin
from .plugins.capacity import CapacityPlugin
from .plugins.cdp import CdpPlugin
from .plugins.conformance import ConformancePlugin
from .plugins.cpsat import CpsatPlugin
from .plugins.deviceshare import DeviceSharePlugin
from .plugins.drf import DrfPlugin
from .plugins.extender import ExtenderPlugin
from .plugins.gang import GangPlugin
from .plugins.networktopology import NetworkTopologyAwarePlugin
from .plugins.nodegroup import NodeGroupPlugin
from .plugins.nodeorder import NodeOrderPlugin
from .plugins.numaaware import NumaAwarePlugin
from .plugins.overcommit import OvercommitPlugin
from .plugins.pdb import PdbPlugin
from .plugins.predicates import PredicatesPlugin
from .plugins.priority import PriorityPlugin
from .plugins.proportion import ProportionPlugin
from .plugins.rescheduling import ReschedulingPlugin
from .plugins.resourcequota import ResourceQuotaPlugin
from .plugins.resourcestrategyfit import ResourceStrategyFitPlugin
from .plugins.sla import SlaPlugin
from .plugins.tasktopology import TaskTopologyPlugin
from .plugins.tdm import TdmPlugin
from .plugins.usage import UsagePlugin


def default_registry() -> Registry:
    """A fresh registry of every built-in action and plugin (new plugins add their line here)."""
    registry = Registry()
    registry.add_action("enqueue", Enqueue)
    registry.add_action("allocate", Allocate)
    registry.add_action("backfill", Backfill)
    registry.add_action("preempt", Preempt)
    registry.add_action("reclaim", Reclaim)
    registry.add_action("gangpreempt", GangPreempt)
    registry.add_action("gangreclaim", GangReclaim)
    registry.add_action("shuffle", Shuffle)
    # volcano-py's own action (not in Volcano's registry): moves running pods to open room for a gang.
    registry.add_action("consolidate", Consolidate)
    registry.add_plugin("gang", GangPlugin)
    registry.add_plugin("priority", PriorityPlugin)
    registry.add_plugin("conformance", ConformancePlugin)
    registry.add_plugin("drf", DrfPlugin)
    registry.add_plugin("proportion", ProportionPlugin)
    registry.add_plugin("capacity", CapacityPlugin)
    registry.add_plugin("predicates", PredicatesPlugin)
    registry.add_plugin("nodeorder", NodeOrderPlugin)
    registry.add_plugin("binpack", BinpackPlugin)
    registry.add_plugin("overcommit", OvercommitPlugin)
    registry.add_plugin("cpsat", CpsatPlugin)
    registry.add_plugin("network-topology-aware", NetworkTopologyAwarePlugin)
    registry.add_plugin("sla", SlaPlugin)
    registry.add_plugin("cdp", CdpPlugin)
    registry.add_plugin("pdb", PdbPlugin)
    registry.add_plugin("resourcequota", ResourceQuotaPlugin)
    registry.add_plugin("nodegroup", NodeGroupPlugin)
    registry.add_plugin("deviceshare", DeviceSharePlugin)
    registry.add_plugin("numa-aware", NumaAwarePlugin)
    registry.add_plugin("resource-strategy-fit", ResourceStrategyFitPlugin)
    registry.add_plugin("rescheduling", ReschedulingPlugin)
    registry.add_plugin("tdm", TdmPlugin)
    registry.add_plugin("task-topology", TaskTopologyPlugin)
    registry.add_plugin("extender", ExtenderPlugin)
    registry.add_plugin("usage", UsagePlugin)
    return registry
