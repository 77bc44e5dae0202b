"""The placement policies a simulation compares, as Volcano scheduler confs.

``greedy`` is Volcano's shipped configuration (the default tiers plus binpack); ``cpsat`` is the same with
the CP-SAT gang placement plugin added, so the two runs differ in placement alone; ``consolidate`` is
``cpsat`` with the ``consolidate`` action before allocate (default arguments), so it differs from ``cpsat`` in
the moves alone; ``consolidate-greedy`` is the same action with ``planner: greedy`` (empty the emptiest
nodes, the baseline the CP-SAT planner is measured against). Any other conf (other ``consolidate``
arguments) runs with ``--conf FILE``.
"""

from __future__ import annotations

from volcano_py.scheduler.core import (
    VOLCANO_SHIPPED_CONF,
    SchedulerConf,
    default_registry,
    parse_conf,
    with_actions,
    with_cpsat,
)

GREEDY_CONF = VOLCANO_SHIPPED_CONF
CPSAT_CONF = with_cpsat(VOLCANO_SHIPPED_CONF)

CONSOLIDATE_CONF = with_actions(CPSAT_CONF, "enqueue, consolidate, allocate, backfill")

POLICIES = {
    "greedy": GREEDY_CONF,
    "cpsat": CPSAT_CONF,
    "consolidate": CONSOLIDATE_CONF,
    "consolidate-greedy": CONSOLIDATE_CONF,
}
# Action arguments per policy, appended after the tiers (and after deviceshare, which joins the last tier).
CONFIGURATIONS = {
    "consolidate-greedy": "configurations:\n- name: consolidate\n  arguments: {planner: greedy}\n",
}

# Shared GPUs (pods asking volcano.sh/gpu-memory or gpu-number): the deviceshare plugin places them per card.
DEVICESHARE = (
    "  - name: deviceshare\n"
    "    arguments: {deviceshare.GPUSharingEnable: true, deviceshare.GPUNumberEnable: true}\n"
)


def conf_for(policy: str, *, shared_gpus: bool = False) -> SchedulerConf:
    """The conf of a named policy; an unknown name is an error that lists the known ones."""
    try:
        text = POLICIES[policy]
    except KeyError:
        raise ValueError(f"unknown placement policy {policy!r}; use one of {', '.join(POLICIES)}") from None
    text = (text + DEVICESHARE if shared_gpus else text) + CONFIGURATIONS.get(policy, "")
    return parse_conf(text, default_registry())
