"""Volcano's Job state machine as a table: (phase, action) -> operation, and the phase rules."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from ctl_builders import JobBuilder

from volcano_py.api.batch import JobPhase, JobState, JobStatus, TaskState
from volcano_py.api.bus import Action
from volcano_py.api.job_view import ResolvedJob, resolve_job
from volcano_py.controllers.job.state import (
    RETAIN_NONE,
    RETAIN_SOFT,
    Change,
    Op,
    Target,
    pending_rule,
    restarting_rule,
    running_rule,
    step_for,
)

P = JobPhase
A = Action


@pytest.mark.parametrize(
    ("phase", "action", "op", "retain", "then"),
    [
        (P.PENDING, A.RESTART_JOB, Op.KILL_JOB, RETAIN_NONE, Change(P.RESTARTING, retry=True)),
        (P.RUNNING, A.RESTART_JOB, Op.KILL_JOB, RETAIN_NONE, Change(P.RESTARTING, retry=True)),
        (P.RUNNING, A.ABORT_JOB, Op.KILL_JOB, RETAIN_SOFT, Change(P.ABORTING)),
        (P.RUNNING, A.COMPLETE_JOB, Op.KILL_JOB, RETAIN_SOFT, Change(P.COMPLETING)),
        (P.PENDING, A.TERMINATE_JOB, Op.KILL_JOB, RETAIN_SOFT, Change(P.TERMINATING)),
        (P.ABORTED, A.RESUME_JOB, Op.KILL_JOB, RETAIN_SOFT, Change(P.RESTARTING, retry=True)),
        (P.ABORTING, A.RESUME_JOB, Op.KILL_JOB, RETAIN_SOFT, Change(P.RESTARTING, retry=True)),
    ],
)
def test_actions_kill_and_move(
    phase: JobPhase, action: Action, op: Op, retain: frozenset[str], then: Change
) -> None:
    spec = resolve_job(JobBuilder().task("w", 2).obj())
    step = step_for(phase, action)
    assert (step.op, step.retain) == (op, retain)
    assert step.rule is not None and step.rule(spec, JobStatus(state=JobState(phase=phase))) == then


def test_restart_task_kills_only_its_target() -> None:
    step = step_for(P.RUNNING, A.RESTART_TASK, Target("worker"))
    assert step.op is Op.KILL_TARGET and step.target == Target("worker")


def test_disruption_restart_does_not_count_a_retry() -> None:
    spec = resolve_job(JobBuilder().task("w", 2).obj())
    step = step_for(P.RUNNING, A.RESTART_JOB, count_retry=False)
    assert step.rule is not None and step.rule(spec, JobStatus()) == Change(P.RESTARTING, retry=False)


@pytest.mark.parametrize("phase", [P.COMPLETED, P.FAILED, P.TERMINATED, P.ABORTED])
def test_finished_phases_only_release_resources(phase: JobPhase) -> None:
    step = step_for(phase, A.SYNC_JOB)
    assert step.op is Op.KILL_JOB and step.retain == RETAIN_SOFT and step.rule is None


@pytest.mark.parametrize(
    ("phase", "final"), [(P.ABORTING, P.ABORTED), (P.COMPLETING, P.COMPLETED), (P.TERMINATING, P.TERMINATED)]
)
def test_draining_phases_finish_when_no_pod_is_left_running(phase: JobPhase, final: JobPhase) -> None:
    spec = resolve_job(JobBuilder().task("w", 2).obj())
    rule = step_for(phase, A.SYNC_JOB).rule
    assert rule is not None
    assert rule(spec, JobStatus(state=JobState(phase=phase), terminating=1, succeeded=1)) is None
    assert rule(spec, JobStatus(state=JobState(phase=phase), succeeded=1, failed=1)) == Change(final)


def _spec(min_success: int | None = None, min_available: int | None = None) -> ResolvedJob:
    b = JobBuilder().task("master", 1).task("worker", 3)
    if min_success is not None:
        b.set(minSuccess=min_success)
    if min_available is not None:
        b.set(minAvailable=min_available)
    return resolve_job(b.obj())


def _counts(**phases: dict[str, int]) -> dict[str, Any]:
    totals = {
        p: sum(t.get(p, 0) for t in phases.values()) for p in ("Pending", "Running", "Succeeded", "Failed")
    }
    return {
        "pending": totals["Pending"],
        "running": totals["Running"],
        "succeeded": totals["Succeeded"],
        "failed": totals["Failed"],
        "task_status_count": {k: TaskState(phase=dict(v)) for k, v in phases.items()},
    }


@pytest.mark.parametrize(
    ("spec", "counts", "expected"),
    [
        pytest.param(
            _spec(), _counts(master={"Running": 1}, worker={"Running": 3}), None, id="still-running"
        ),
        pytest.param(
            _spec(),
            _counts(master={"Succeeded": 1}, worker={"Succeeded": 3}),
            P.COMPLETED,
            id="all-succeeded",
        ),
        pytest.param(
            _spec(),
            _counts(master={"Succeeded": 1}, worker={"Succeeded": 2, "Failed": 1}),
            P.FAILED,
            id="a-task-below-its-min",
        ),
        pytest.param(
            _spec(min_available=2),
            _counts(master={"Succeeded": 1}, worker={"Succeeded": 1, "Failed": 2}),
            P.COMPLETED,
            id="min-available-succeeded",
        ),
        pytest.param(
            _spec(min_success=2),
            _counts(master={"Running": 1}, worker={"Succeeded": 2, "Running": 1}),
            P.COMPLETED,
            id="min-success-early",
        ),
        pytest.param(
            _spec(min_success=3),
            _counts(master={"Failed": 1}, worker={"Succeeded": 2, "Failed": 1}),
            P.FAILED,
            id="min-success-missed",
        ),
        pytest.param(
            _spec(min_available=2),
            _counts(master={"Pending": 1}, worker={"Pending": 3}),
            P.PENDING,
            id="too-many-pending",
        ),
    ],
)
def test_running_completion_rules(
    spec: ResolvedJob, counts: dict[str, Any], expected: JobPhase | None
) -> None:
    change = running_rule(spec, JobStatus(state=JobState(phase=P.RUNNING), **counts))
    assert (change.phase if change else None) == expected


def test_pending_runs_once_min_available_pods_started() -> None:
    spec = _spec(min_available=3)
    assert pending_rule(spec, JobStatus(running=2, pending=2)) is None
    assert pending_rule(spec, JobStatus(running=2, succeeded=1)) == Change(P.RUNNING)


def test_restarting_fails_when_retries_are_exhausted_and_otherwise_waits_for_pods() -> None:
    spec = replace(_spec(), max_retry=2)
    assert restarting_rule(spec, JobStatus(retry_count=2)) == Change(P.FAILED)
    assert restarting_rule(spec, JobStatus(retry_count=1, terminating=1)) is None
    assert restarting_rule(spec, JobStatus(retry_count=1)) == Change(P.PENDING)
