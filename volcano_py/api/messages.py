"""Volcano's refusal texts, the one text of Volcano's we reproduce: users' scripts, CI and Volcano's own e2e
suites match on them. Every refusal that Volcano also makes starts with Volcano's words, verbatim, and goes on
with ours (the field named, the fix): ``volcano_said(VOLCANO_X.format(...), "what to change")``.

One table for every admission path (Job, PodGroup, Queue, Pod, HyperNode, JobFlow, JobTemplate, CronJob), so a
text is written once and a test can check each is used.
"""

from __future__ import annotations

from typing import Final

__all__ = ["volcano_said"]


def volcano_said(volcano: str, ours: str) -> str:
    """Volcano's words first (what scripts match), then ours; ``ours`` empty when Volcano's say it all."""
    return f"{volcano}; {ours}" if ours else volcano


# --- Job, PodGroup, Queue, Pod and HyperNode admission ------------------------------------------------------
# (each entry: NAME: Final = "Volcano's text, with {placeholders} where Volcano formats values")


# --- JobFlow, JobTemplate and CronJob admission -------------------------------------------------------------
# (same form)
# Volcano refuses no JobTemplate: it has no JobTemplate webhook.

# JobFlow (Volcano's jobflows webhook: the flow must be a DAG over its own step names).
VOLCANO_FLOW_NOT_DAG: Final = "jobflow Flow is not DAG"
VOLCANO_FLOW_VERTEX_NOT_DEFINED: Final = "jobflow Flow is not DAG: vertex is not defined: {vertex}"

# CronJob (Volcano's cronjobs webhook: schedule, timeZone, name).
VOLCANO_CRON_SCHEDULE_EMPTY: Final = "schedule is required, but got empty"
VOLCANO_CRON_SCHEDULE_TZ: Final = (
    "schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone field"
)
VOLCANO_CRON_SCHEDULE_INVALID: Final = "schedule is not a valid cron expression"
VOLCANO_CRON_TIMEZONE_EMPTY: Final = "timeZone must be nil or non-empty string, got empty string"
# Said once per '/'-separated part that is not a plausible zone name part.
VOLCANO_CRON_TIMEZONE_UNKNOWN: Final = "unknown timeZone"
VOLCANO_CRON_TIMEZONE_LOCAL: Final = (
    "timeZone can't be Local, and must be defined in https://www.iana.org/time-zones"
)
VOLCANO_CRON_TIMEZONE_INVALID: Final = "invalid timeZone"
VOLCANO_CRON_NAME_TOO_LONG: Final = (
    "cronJob name must be no more than {max_base} characters to accommodate job name suffix "
    "(max {max_total} total)"
)
