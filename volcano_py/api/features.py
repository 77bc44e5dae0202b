"""Volcano's feature gates (``--feature-gates``) that volcano-py knows, and their parser.

Both processes that Volcano gives the flag take it here: the scheduler and the admission webhook server (the
controller). The text is Kubernetes' format, ``Name=true,Other=false``. A gate not in ``KNOWN`` is refused at
start rather than ignored: a gate of Volcano's that is not listed changes nothing here, and accepting it would
let a user believe it did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

# Pods annotated ``scheduling.volcano.sh/queue-allocation-gate: "true"`` get a scheduling gate of that name at
# admission; the scheduler removes it once their queue has room for them (alpha in Volcano, default off).
SCHEDULING_GATES_QUEUE_ADMISSION: Final = "SchedulingGatesQueueAdmission"

# Every gate we know, with its default (Volcano's).
KNOWN: Final[Mapping[str, bool]] = {SCHEDULING_GATES_QUEUE_ADMISSION: False}

FLAG: Final = "--feature-gates"
_TRUE: Final = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "false", "FALSE", "False"})


class FeatureGateError(ValueError):
    """A ``--feature-gates`` value that cannot be used; the message names the flag and the fix."""


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The gates switched on; every other known gate is at its default (all defaults are off today)."""

    enabled: frozenset[str] = frozenset()

    @property
    def queue_admission_gates(self) -> bool:
        return SCHEDULING_GATES_QUEUE_ADMISSION in self.enabled


def _known_list() -> str:
    return ", ".join(f"{name} (default {str(default).lower()})" for name, default in sorted(KNOWN.items()))


def parse_feature_gates(text: str | None) -> FeatureGates:
    """``Name=true,Other=false`` -> ``FeatureGates``; empty or None: every gate at its default."""
    values = {name: default for name, default in KNOWN.items()}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or not name:
            raise FeatureGateError(f"{FLAG} {item!r}: write each gate as Name=true or Name=false")
        if name not in KNOWN:
            raise FeatureGateError(
                f"{FLAG}: unknown feature gate {name!r}; the gates volcano-py knows are {_known_list()}; "
                "fix the name or remove it"
            )
        if raw in _TRUE:
            values[name] = True
        elif raw in _FALSE:
            values[name] = False
        else:
            raise FeatureGateError(f"{FLAG} {item!r}: the value of {name} must be true or false, got {raw!r}")
    return FeatureGates(frozenset(name for name, on in values.items() if on))


DEFAULT_FEATURE_GATES: Final = parse_feature_gates(None)
