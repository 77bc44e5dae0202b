"""tdm's arithmetic: revocable-zone time windows, and how many pods of a job one eviction round may take.

A window is Volcano's ``HH:MM-HH:MM`` (``tdm.revocable-zone.<zone>``), read on the session's clock in UTC,
open from its start to its end minute inclusive. An end at or before the start runs over midnight (equal
ends: all day). Volcano anchors such a window to today's start, which closes it at midnight instead of at
its end; here it stays open until the end, as written.

The per-job cap is Volcano's, from the job's disruption budget (PodGroup annotations
``volcano.sh/jdb-min-available``, else ``volcano.sh/jdb-max-unavailable``; a count or a percentage of the
job's pods, rounded up): with max-unavailable, what it leaves after the pods already not running; with
min-available, the running pods above it; without either, one pod.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from volcano_py.api import constants

_WINDOW: Final = re.compile(r"([0-9]{1,2}):([0-9]{2})-([0-9]{1,2}):([0-9]{2})")
# Volcano's cap when a job has no disruption budget.
DEFAULT_EVICT_NUM: Final = 1


@dataclass(frozen=True, slots=True)
class Window:
    text: str
    start: int  # seconds after midnight
    end: int

    @classmethod
    def parse(cls, text: str) -> Window:
        """``HH:MM-HH:MM``; raises ValueError saying what is wrong."""
        match = _WINDOW.fullmatch(text.strip())
        if match is None:
            raise ValueError(f"{text!r} is not a window; write it as HH:MM-HH:MM, such as 22:00-06:00")
        h1, m1, h2, m2 = (int(part) for part in match.groups())
        if h1 > 23 or h2 > 23 or m1 > 59 or m2 > 59:
            raise ValueError(f"{text!r} is not a window: hours go to 23 and minutes to 59")
        return cls(text.strip(), h1 * 3600 + m1 * 60, h2 * 3600 + m2 * 60)

    def open_at(self, moment: datetime) -> bool:
        """Whether ``moment`` (UTC) falls in the window."""
        second = moment.hour * 3600 + moment.minute * 60 + moment.second
        if self.start < self.end:
            return self.start <= second <= self.end
        return second >= self.start or second <= self.end


def _int_or_percent(text: str, total: int) -> int:
    """Kubernetes' IntOrString as Volcano's tdm reads it: a whole number, or N% of ``total`` rounded up;
    anything else counts as 0."""
    text = text.strip()
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text)
    if text.endswith("%") and re.fullmatch(r"[0-9]+", text[:-1]):
        return math.ceil(int(text[:-1]) * total / 100)
    return 0


def max_evictions(annotations: Mapping[str, Any], *, tasks: int, running: int, finished: int) -> int:
    """How many of a job's pods one tdm eviction round may take (``tasks``: all its pods in the session;
    ``finished``: those Succeeded or Failed)."""
    min_available = annotations.get(constants.JDB_MIN_AVAILABLE_KEY)
    if min_available is not None:
        # Volcano then falls through to its default of one pod when the job is already below the budget;
        # here a job below its budget gives up nothing.
        return max(running - _int_or_percent(str(min_available), tasks), 0)
    max_unavailable = annotations.get(constants.JDB_MAX_UNAVAILABLE_KEY)
    if max_unavailable is not None:
        allowed = _int_or_percent(str(max_unavailable), tasks)
        unavailable = tasks - finished - running
        return max(allowed - unavailable, 0)
    return DEFAULT_EVICT_NUM
