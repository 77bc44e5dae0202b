"""The scheduler confs volcano-py ships, written once and derived from each other.

* ``VOLCANO_SHIPPED_CONF``: the conf Volcano's installer ships (its built-in default plus binpack) -- what
  "greedy, as Volcano places" means in the simulator and the placement benchmark.
* ``DEFAULT_CONF``: Volcano's built-in default plus our ``cpsat`` plugin; used when no conf is given.
* ``with_cpsat`` / ``with_actions``: the variants (the deployed ConfigMap, ``volcano-py up``'s conf).
"""

from __future__ import annotations

import re

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
