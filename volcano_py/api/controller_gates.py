"""Volcano's ``--controllers`` gates: which of the controller manager's controllers run.

Volcano's syntax: a comma-separated list where ``*`` is every controller, ``name`` or ``+name`` turns one on
and ``-name`` turns one off; the first entry naming a controller decides for it, and a controller no entry
names runs only under ``*``. Volcano's default leaves the sharding controller off. Volcano checks only that
no controller is named with both signs; here an unknown name is refused too, so a typo cannot leave a
controller quietly off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from volcano_py.api.problems import Problem

ALL_CONTROLLERS: Final = "*"
JOB_CONTROLLER: Final = "job-controller"
PODGROUP_CONTROLLER: Final = "pg-controller"
QUEUE_CONTROLLER: Final = "queue-controller"
JOBFLOW_CONTROLLER: Final = "jobflow-controller"
JOBTEMPLATE_CONTROLLER: Final = "jobtemplate-controller"
CRONJOB_CONTROLLER: Final = "cronjob-controller"
GC_CONTROLLER: Final = "gc-controller"
HYPERNODE_CONTROLLER: Final = "hyperNode-controller"
SHARDING_CONTROLLER: Final = "sharding-controller"

KNOWN_CONTROLLERS: Final = (
    JOB_CONTROLLER,
    PODGROUP_CONTROLLER,
    QUEUE_CONTROLLER,
    JOBFLOW_CONTROLLER,
    JOBTEMPLATE_CONTROLLER,
    CRONJOB_CONTROLLER,
    GC_CONTROLLER,
    HYPERNODE_CONTROLLER,
    SHARDING_CONTROLLER,
)
# The controllers volcano-py can run without: the others share one set of informers and handlers (the Job
# controller's pods feed the PodGroup and queue controllers), so turning one off alone is refused.
OPTIONAL_CONTROLLERS: Final = (HYPERNODE_CONTROLLER, SHARDING_CONTROLLER)
DEFAULT_CONTROLLERS: Final = f"{ALL_CONTROLLERS},-{SHARDING_CONTROLLER}"
FLAG: Final = "--controllers"


@dataclass(frozen=True, slots=True)
class ControllerGates:
    entries: tuple[str, ...]

    def enabled(self, name: str) -> bool:
        """Volcano's rule: the first entry naming ``name`` decides; otherwise ``*`` (or no entry at all)."""
        if not self.entries:
            return True
        for entry in self.entries:
            if entry in (name, f"+{name}"):
                return True
            if entry == f"-{name}":
                return False
        return ALL_CONTROLLERS in self.entries


DEFAULT_GATES: Final = ControllerGates(tuple(DEFAULT_CONTROLLERS.split(",")))


class ControllerGatesError(ValueError):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(problem) for problem in problems))
        self.problems = problems


def parse_controller_gates(text: str) -> ControllerGates:
    """Parse a ``--controllers`` value; raise ControllerGatesError naming each bad entry."""
    entries = tuple(entry.strip() for entry in text.split(",") if entry.strip())
    problems: list[Problem] = []
    signs: dict[str, str] = {}
    for entry in entries:
        if entry == ALL_CONTROLLERS:
            continue
        sign, name = ("-", entry[1:]) if entry.startswith("-") else ("+", entry.removeprefix("+"))
        if name not in KNOWN_CONTROLLERS:
            known = ", ".join(KNOWN_CONTROLLERS)
            problems.append(Problem(FLAG, f"unknown controller {name!r} (known: {known}, or * for all)"))
            continue
        if signs.setdefault(name, sign) != sign:
            problems.append(
                Problem(FLAG, f"controllers option {entry} cannot have both '-' and '+' prefixes")
            )
    gates = ControllerGates(entries)
    off = [name for name in KNOWN_CONTROLLERS if name not in OPTIONAL_CONTROLLERS and not gates.enabled(name)]
    if off and not problems:
        optional = " and ".join(OPTIONAL_CONTROLLERS)
        problems.append(
            Problem(
                FLAG,
                f"this leaves {', '.join(off)} off; volcano-py runs them together and can turn off only "
                f"{optional} (start from *, e.g. {DEFAULT_CONTROLLERS})",
            )
        )
    if problems:
        raise ControllerGatesError(problems)
    return gates
