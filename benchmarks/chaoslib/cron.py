"""A Volcano CronJob firing while its controller is killed, and what its runs must show afterwards.

The CronJob fires ``@every`` few seconds with ``concurrencyPolicy: Forbid`` and runs that last longer than
the period, so about every other time a run is still active and the tick is skipped on purpose. The kill
lands on the controller's line for the CronJob's second run. Read from the Jobs the CronJob owns (each names
its scheduled time in an annotation), pure:

- no scheduled time created twice;
- Forbid respected: no run created before the previous one finished, across the restart;
- none skipped: every tick from the first run to the last either has its run, or fell while a run was active
  (Forbid), or while a fault kept the controller from acting: killed, frozen, between leaders, or the API
  server, etcd or the webhook away (after that only the latest missed tick is run, as Kubernetes' and
  Volcano's CronJob controllers do). The CronJobs keep firing through the rest of the run, so every later
  controller fault counts for each of them.

History limits are set high so that no finished run is deleted before it is read.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from benchmarks.chaoslib.invariants import Obj, Violation
from benchmarks.chaoslib.workload import JobPlan, job_manifest
from volcano_py.api import constants as c
from volcano_py.api.batch import FINISHED_PHASES

EVERY_SECONDS = 4
RUN_SECONDS = 5.0  # longer than the period: Forbid skips the ticks that find a run active
TOLERANCE = 1.0  # Job times are stamped to the second


def cronjob_manifest(name: str, namespace: str) -> dict[str, Any]:
    job = job_manifest(JobPlan(name, 1, seconds=RUN_SECONDS, gpus=0), namespace)
    return {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.CRONJOB_KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedule": f"@every {EVERY_SECONDS}s",
            "concurrencyPolicy": "Forbid",
            "successfulJobsHistoryLimit": 1000,
            "failedJobsHistoryLimit": 1000,
            "jobTemplate": {"spec": job["spec"]},
        },
    }


def _seconds(text: object) -> float | None:
    if not text:
        return None
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()


@dataclass(frozen=True, slots=True)
class Run:
    name: str
    scheduled: float
    created: float
    finished: float | None  # None while active

    def active_at(self, moment: float) -> bool:
        ends = self.finished if self.finished is not None else float("inf")
        return self.created - TOLERANCE <= moment <= ends + TOLERANCE


def runs_of(jobs: Sequence[Obj], cronjob: str) -> list[Run]:
    """The runs of one CronJob, from the Jobs it controls, oldest scheduled first."""
    found = []
    for job in jobs:
        meta = job.get("metadata") or {}
        owners = meta.get("ownerReferences") or ()
        if not any(o.get("kind") == c.CRONJOB_KIND and o.get("name") == cronjob for o in owners):
            continue
        scheduled = _seconds((meta.get("annotations") or {}).get(c.CRONJOB_SCHEDULED_TIMESTAMP_KEY))
        created = _seconds(meta.get("creationTimestamp"))
        if scheduled is None or created is None:
            continue
        state = (job.get("status") or {}).get("state") or {}
        finished = (
            _seconds(state.get("lastTransitionTime")) if state.get("phase") in FINISHED_PHASES else None
        )
        found.append(Run(str(meta.get("name")), scheduled, created, finished))
    return sorted(found, key=lambda r: (r.scheduled, r.created))


def cron_runs(
    runs: Sequence[Run], cronjob: str, *, every: float, downtimes: Sequence[tuple[float, float]]
) -> list[Violation]:
    """What a Forbid CronJob's runs must show (see the module's docstring); ``downtimes`` are the intervals
    the controller was away."""
    found = []
    for scheduled, count in sorted(Counter(r.scheduled for r in runs).items()):
        if count > 1:
            names = sorted(r.name for r in runs if r.scheduled == scheduled)
            found.append(Violation("cron run created twice", cronjob, f"{count} Jobs for one tick: {names}"))
    by_creation = sorted(runs, key=lambda r: r.created)
    for before, after in itertools.pairwise(by_creation):
        if before.finished is None or after.created < before.finished:
            found.append(
                Violation(
                    "concurrencyPolicy Forbid broken",
                    cronjob,
                    f"{after.name} created while {before.name} was "
                    + ("still active" if before.finished is None else "not finished"),
                )
            )
    if runs:
        ticks = round((runs[-1].scheduled - runs[0].scheduled) / every)
        made = {round(r.scheduled) for r in runs}
        for k in range(1, ticks):
            tick = runs[0].scheduled + k * every
            if round(tick) in made:
                continue
            if any(r.active_at(tick) for r in runs):
                continue  # Forbid: a run was active then
            if any(start - TOLERANCE <= tick <= end + every for start, end in downtimes):
                continue  # the controller was away; only the latest missed tick is run
            found.append(Violation("cron run skipped", cronjob, f"no run for the tick at {tick:.0f}"))
    return found
