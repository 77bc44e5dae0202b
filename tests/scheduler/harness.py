"""Run one session over Kubernetes dicts and compare what a user would see: binds, pipelined pods,
PodGroup phases and condition reasons, explanation text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.features import parse_feature_gates
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.snapshot import Snapshot

NOW = "2026-01-01T00:00:00Z"
Obj = dict[str, Any]


@dataclass
class Scenario:
    nodes: Sequence[Obj]
    pods: Sequence[Obj] = ()
    podgroups: Sequence[Obj] = ()
    queues: Sequence[Obj] = ()
    priority_classes: Sequence[Obj] = ()
    numatopologies: Sequence[Obj] = ()
    device_classes: Sequence[Obj] = ()
    resource_slices: Sequence[Obj] = ()
    resource_claims: Sequence[Obj] = ()
    conf: str | None = None
    # pod name -> node name, exactly the set of binds expected (None: don't check)
    binds: Mapping[str, str] | None = None
    # pod names expected bound, node not checked
    bound: Sequence[str] | None = None
    bind_count: int | None = None
    pipelined: Mapping[str, str] | None = None
    phases: Mapping[str, str] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)
    # PodGroup name -> substrings its explanation must contain
    explains: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # The scheduler's --feature-gates text.
    features: str = ""
    # pod names whose queue-allocation gate the session removes, exactly (None: don't check)
    ungated: Sequence[str] | None = None


def run(scenario: Scenario) -> SessionResult:
    snapshot = Snapshot.build(
        nodes=scenario.nodes,
        pods=scenario.pods,
        podgroups=scenario.podgroups,
        queues=scenario.queues,
        priority_classes=scenario.priority_classes,
        numatopologies=scenario.numatopologies,
        device_classes=scenario.device_classes,
        resource_slices=scenario.resource_slices,
        resource_claims=scenario.resource_claims,
    )
    return run_session(
        snapshot, load_conf(scenario.conf), NOW, features=parse_feature_gates(scenario.features)
    )


def check(scenario: Scenario) -> SessionResult:
    result = run(scenario)
    got = {b.name: b.node for b in result.binds}
    if scenario.binds is not None:
        assert got == dict(scenario.binds)
    if scenario.bound is not None:
        assert sorted(got) == sorted(scenario.bound)
    if scenario.bind_count is not None:
        assert len(got) == scenario.bind_count, got
    if scenario.ungated is not None:
        assert sorted(u.name for u in result.ungates) == sorted(scenario.ungated)
    if scenario.pipelined is not None:
        assert {p.name: p.node for p in result.pipelined} == dict(scenario.pipelined)
    updates = {u.name: u for u in result.podgroup_updates}
    for pg, phase in scenario.phases.items():
        assert pg in updates, f"no status update for PodGroup {pg}"
        assert updates[pg].phase.value == phase
    for pg, reason in scenario.reasons.items():
        conditions = [c for c in updates[pg].conditions if c.status == "True"]
        # "Scheduled" names the Scheduled condition; anything else is the Unschedulable condition's reason.
        seen = [c.type if c.type == "Scheduled" else c.reason for c in conditions]
        assert seen == [reason], conditions
    for pg, needles in scenario.explains.items():
        explanation = result.explanations.get(f"default/{pg}")
        assert explanation is not None, f"no explanation for {pg}: {result.explanations}"
        for needle in needles:
            assert needle in explanation.message, explanation.message
    return result
