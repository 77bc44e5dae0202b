"""The placement policies a simulation compares, as Volcano scheduler confs.

``greedy`` is Volcano's shipped configuration (the default tiers plus binpack); ``cpsat`` is the same with
the CP-SAT gang placement plugin added, so the two runs differ in placement alone.
"""

from __future__ import annotations

from volcano_py.scheduler.framework.conf import SchedulerConf, parse_conf
from volcano_py.scheduler.registry import default_registry

GREEDY_CONF = """\
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

CPSAT_CONF = GREEDY_CONF + "  - name: cpsat\n"

POLICIES = {"greedy": GREEDY_CONF, "cpsat": CPSAT_CONF}


def conf_for(policy: str) -> SchedulerConf:
    """The conf of a named policy; an unknown name is an error that lists the known ones."""
    try:
        text = POLICIES[policy]
    except KeyError:
        raise ValueError(f"unknown placement policy {policy!r}; use one of {', '.join(POLICIES)}") from None
    return parse_conf(text, default_registry())
