"""Volcano's refusal texts, the one text of Volcano's we reproduce: users' scripts, CI and Volcano's own e2e
suites match on them. Every refusal that Volcano also makes starts with Volcano's words, verbatim, and goes on
with ours (the field named, the fix): ``volcano_said(VOLCANO_X.format(...), "what to change")``.

One table for every admission path (Job, PodGroup, Queue, Pod, HyperNode, JobFlow, JobTemplate, CronJob), so a
text is written once and a test can check each is used.
"""

from __future__ import annotations

__all__ = ["volcano_said"]


def volcano_said(volcano: str, ours: str) -> str:
    """Volcano's words first (what scripts match), then ours; ``ours`` empty when Volcano's say it all."""
    return f"{volcano}; {ours}" if ours else volcano


# --- Job, PodGroup, Queue, Pod and HyperNode admission ------------------------------------------------------
# (each entry: NAME: Final = "Volcano's text, with {placeholders} where Volcano formats values")


# --- JobFlow, JobTemplate and CronJob admission -------------------------------------------------------------
# (same form)
