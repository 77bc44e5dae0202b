"""A JobFlow whose controller is killed as it creates its next step, and what its steps must show afterwards.

Three JobTemplates run as a chain (``a``, then ``b`` once ``a`` finished, then ``c``); the kill lands on the
controller's ``job created`` line for step ``b``. Read from the Jobs the flow owns and from every controller
start's ``job created`` lines, pure:

- each step ran: it has its Job, and the flow ended ``Succeed``;
- no step created twice (a step's Job has a fixed name, ``<flow>-<template>``, so a second creation means the
  first was deleted and made again);
- no step created before the step it depends on finished.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from benchmarks.chaoslib.invariants import Obj, Violation
from benchmarks.chaoslib.workload import JobPlan, job_manifest
from volcano_py.api import constants as c
from volcano_py.api.batch import FINISHED_PHASES
from volcano_py.api.flow import FlowPhase

STEPS = ("a", "b", "c")  # each depends on the one before
STEP_SECONDS = 2.0
FLOW_SUCCEEDED = str(FlowPhase.SUCCEED.value)


def template_name(flow: str, step: str) -> str:
    return f"{flow}t-{step}"


def job_name(flow: str, step: str) -> str:
    return f"{flow}-{template_name(flow, step)}"


def manifests(flow: str, namespace: str) -> list[dict[str, Any]]:
    """The JobTemplates, then the JobFlow chaining them."""
    bodies: list[dict[str, Any]] = []
    for step in STEPS:
        job = job_manifest(JobPlan(step, 1, seconds=STEP_SECONDS, gpus=0), namespace)
        bodies.append({"apiVersion": c.FLOW_API_VERSION, "kind": c.JOBTEMPLATE_KIND,
                       "metadata": {"name": template_name(flow, step), "namespace": namespace},
                       "spec": job["spec"]})  # fmt: skip
    steps = [
        {"name": template_name(flow, step), **({"dependsOn": {"targets": [template_name(flow, before)]}}
                                                if before else {})}
        for before, step in zip((None, *STEPS), STEPS, strict=False)
    ]  # fmt: skip
    bodies.append({"apiVersion": c.FLOW_API_VERSION, "kind": c.JOBFLOW_KIND,
                   "metadata": {"name": flow, "namespace": namespace}, "spec": {"flows": steps}})  # fmt: skip
    return bodies


def _seconds(text: object) -> float | None:
    if not text:
        return None
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()


def flow_steps(
    flow: str, phase: str, jobs: Sequence[Obj], created_lines: Iterable[Mapping[str, Any]], namespace: str
) -> list[Violation]:
    """What a chain JobFlow must show once it is over (see the module's docstring). ``created_lines`` are
    the ``job created`` log lines of every controller start."""
    found = []
    by_name = {str((j.get("metadata") or {}).get("name")): j for j in jobs}
    made = Counter(str(line.get("job")) for line in created_lines if line.get("event") == "job created")
    if phase != FLOW_SUCCEEDED:
        found.append(
            Violation("flow not finished", flow, f"phase {phase or 'none'}, expected {FLOW_SUCCEEDED}")
        )
    finished: dict[str, float | None] = {}
    for before, step in zip((None, *STEPS), STEPS, strict=False):
        name = job_name(flow, step)
        job = by_name.get(name)
        if job is None:
            found.append(Violation("flow step skipped", flow, f"no Job {name}"))
            continue
        if made[f"{namespace}/{name}"] > 1:
            found.append(
                Violation(
                    "flow step created twice", flow, f"{name} created {made[f'{namespace}/{name}']} times"
                )
            )
        state = (job.get("status") or {}).get("state") or {}
        done = state.get("phase") in FINISHED_PHASES
        finished[step] = _seconds(state.get("lastTransitionTime")) if done else None
        created = _seconds((job.get("metadata") or {}).get("creationTimestamp"))
        if before is not None:
            dependency = finished.get(before)
            if dependency is None or (created is not None and created < dependency):
                found.append(
                    Violation(
                        "flow step before its dependency",
                        flow,
                        f"{name} created before step {before} finished",
                    )
                )
    return found
