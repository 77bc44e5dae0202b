"""What a chaos run found: one ``FaultRecord`` per fault injected (when, what it hit, the recovery to the
next bind, the failover, the invariants it broke) and the run's ``Report`` (its summary per fault kind, as
JSON)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    index = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return round(values[index], 2)


@dataclass(slots=True)
class FaultRecord:
    kind: str
    at_s: float  # since the run began
    recovery_s: float | None  # fault start -> the probe's bind; None if it never bound
    landed: str  # what the fault hit (pods bound of the gang at a mid-bind kill, ...)
    violations: list[str] = field(default_factory=list)
    failover_s: float | None = None  # leader killed or frozen -> the standby's first write as leader


@dataclass(slots=True)
class Report:
    faults: list[FaultRecord] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    final_violations: list[str] = field(default_factory=list)
    jobs_submitted: int = 0
    jobs_expected: dict[str, str] = field(default_factory=dict)
    work_lost: int = 0
    submit_refusals: int = 0
    evictions: int = 0
    pods_bound: int = 0
    proxy: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)
    component_starts: dict[str, int] = field(default_factory=dict)
    component_crashes: dict[str, int] = field(default_factory=dict)
    lease: dict[str, float] = field(default_factory=dict)  # the election's durations, with ``ha``
    writes_judged: int = 0  # writes placed in a leader's term (``ha``)
    late_writes: int = 0  # through the fence, then frozen >= 1 s before they went out (``Write.late``)
    cron_runs: dict[str, int] = field(default_factory=dict)  # runs each fault's CronJob made
    lease_terms: int = 0
    # From the first final reading to the one where statuses agreed with the pods (None: they never did).
    statuses_caught_up_s: float | None = None

    def summary(self) -> dict[str, Any]:
        by_kind: dict[str, dict[str, Any]] = {}
        for kind in sorted({f.kind for f in self.faults}):
            records = [f for f in self.faults if f.kind == kind]
            times = sorted(f.recovery_s for f in records if f.recovery_s is not None)
            failovers = sorted(f.failover_s for f in records if f.failover_s is not None)
            by_kind[kind] = {
                "injected": len(records),
                "recovered": len(times),
                "recovery_p50_s": _percentile(times, 0.5),
                "recovery_p99_s": _percentile(times, 0.99),
                "recovery_max_s": times[-1] if times else None,
                **(
                    {"failover_p50_s": _percentile(failovers, 0.5), "failover_max_s": failovers[-1]}
                    if failovers
                    else {}
                ),
                "violations": sum(len(f.violations) for f in records),
                "landed": [f.landed for f in records],
            }
        return {
            "faults": by_kind,
            "faults_injected": len(self.faults),
            "invariant_violations": len(self.violations) + len(self.final_violations),
            "violations": self.violations + self.final_violations,
            "work_lost": self.work_lost,
            "jobs_submitted": self.jobs_submitted,
            "pods_bound": self.pods_bound,
            "evictions": self.evictions,
            "statuses_caught_up_s": self.statuses_caught_up_s,
            "submit_refusals": self.submit_refusals,
            "proxy": self.proxy,
            **({"cron_runs": self.cron_runs} if self.cron_runs else {}),
            "component_starts": self.component_starts,
            "component_crashes": self.component_crashes,
            **(
                {
                    "lease": self.lease,
                    "lease_terms": self.lease_terms,
                    "writes_judged": self.writes_judged,
                    "late_writes": self.late_writes,
                }
                if self.lease
                else {}
            ),
            "wall_s": round(self.wall_s, 1),
            "load_average": [round(x, 2) for x in self.load_average],
        }

    def to_json(self) -> str:
        return json.dumps({"summary": self.summary(), "records": [asdict(f) for f in self.faults]}, indent=2)
