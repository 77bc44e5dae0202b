"""A queue's recent usage: what it held over time, decayed with a half-life, kept on the Queue itself.

Fair share that remembers: a queue that just ran a big job should yield to one that has waited. The
scheduler integrates each queue's allocation over time, with older use counting less (halved every
``half_life`` seconds), and writes the running total on the Queue as the ``RECENT_USAGE_KEY`` annotation
so that a restarted or newly elected scheduler resumes it. Units are resource-seconds in the scheduler's
resource units (milli-units for cpu and devices, bytes for memory): a queue that held ``a`` for ever
tends to ``a * tau`` where ``tau = half_life / ln 2``, which is what ``fraction`` divides by.

Pure: the scheduler's runtime keeps the ledger; the proportion and capacity plugins read it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from .constants import RECENT_USAGE_KEY


@dataclass(frozen=True, slots=True)
class RecentUsage:
    """Decayed resource-seconds per resource, as of ``at`` (seconds since the epoch)."""

    at: float
    usage: Mapping[str, float] = field(default_factory=dict)

    def decayed_to(self, now: float, half_life: float) -> RecentUsage:
        factor = _decay(max(now - self.at, 0.0), half_life)
        return RecentUsage(max(now, self.at), {r: v * factor for r, v in self.usage.items()})

    def accrue(self, held: Mapping[str, float], now: float, half_life: float) -> RecentUsage:
        """The ledger at ``now`` if the queue held ``held`` since ``at``: the old total decays, and the
        decayed integral of a constant ``held`` over the interval is added."""
        elapsed = max(now - self.at, 0.0)
        factor = _decay(elapsed, half_life)
        gained = (1.0 - factor) * half_life / math.log(2)
        names = set(self.usage) | set(held)
        usage = {r: self.usage.get(r, 0.0) * factor + held.get(r, 0.0) * gained for r in names}
        return RecentUsage(max(now, self.at), {r: v for r, v in usage.items() if v > 0.0})

    def fraction(self, total: Mapping[str, float], half_life: float) -> float:
        """The dominant share of the cluster the queue used recently: 1.0 is all of some resource for ever."""
        tau = half_life / math.log(2)
        return max(
            (v / (total[r] * tau) for r, v in self.usage.items() if total.get(r, 0.0) > 0.0),
            default=0.0,
        )

    def to_annotation(self) -> str:
        return json.dumps(
            {"at": round(self.at, 3), "usage": {r: round(v, 3) for r, v in sorted(self.usage.items())}}
        )


def read_recent_usage(annotations: Mapping[str, str]) -> RecentUsage | None:
    """The ledger written on a Queue, or None when there is none or it is not ours to read (a hand-edited
    value that is not the JSON written here starts a new ledger rather than stopping the scheduler)."""
    text = annotations.get(RECENT_USAGE_KEY)
    if not text:
        return None
    try:
        raw = json.loads(text)
        at = float(raw["at"])
        usage = {str(r): float(v) for r, v in dict(raw.get("usage") or {}).items()}
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if not math.isfinite(at) or any(not math.isfinite(v) or v < 0 for v in usage.values()):
        return None
    return RecentUsage(at, usage)


def usage_weight_factor(used: float, entitled: float, strength: float) -> float:
    """How much of its weight a queue keeps: all of it while its recent use is within what it is entitled
    to (its weight's fraction of all weights), ``(entitled / used) ** strength`` beyond; never below 1%
    so that a queue that used much is slowed, never starved."""
    if used <= entitled or entitled <= 0.0:
        return 1.0
    return max(float((entitled / used) ** strength), 0.01)


def _decay(elapsed: float, half_life: float) -> float:
    return float(0.5 ** (elapsed / half_life))
