"""The built-in actions and plugins: the one place they are registered.

A new plugin (or action) registers here: write its module under ``plugins/`` (or ``actions/``), import its
class below and add one ``registry.add_plugin(name, Class)`` line to ``default_registry``. The name is the
one a ``volcano-scheduler.conf`` uses in its ``tiers`` (or ``actions``); ``core.load_conf`` refuses names
that are not registered here.
"""

from __future__ import annotations

from .actions.allocate import Allocate
from .actions.backfill import Backfill
from .actions.enqueue import Enqueue
from .actions.preempt import Preempt
from .actions.reclaim import Reclaim
from .framework.registry import Registry
from .plugins.binpack import BinpackPlugin
from .plugins.capacity import CapacityPlugin
from .plugins.conformance import ConformancePlugin
from .plugins.cpsat import CpsatPlugin
from .plugins.drf import DrfPlugin
from .plugins.gang import GangPlugin
from .plugins.nodeorder import NodeOrderPlugin
from .plugins.overcommit import OvercommitPlugin
from .plugins.predicates import PredicatesPlugin
from .plugins.priority import PriorityPlugin
from .plugins.proportion import ProportionPlugin


def default_registry() -> Registry:
    """A fresh registry of every built-in action and plugin (new plugins add their line here)."""
    registry = Registry()
    registry.add_action("enqueue", Enqueue)
    registry.add_action("allocate", Allocate)
    registry.add_action("backfill", Backfill)
    registry.add_action("preempt", Preempt)
    registry.add_action("reclaim", Reclaim)
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
    return registry
