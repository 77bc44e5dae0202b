"""Plans the Job controller carries out: which pods to create and delete, and the status that follows."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctl_builders import JobBuilder, PodBuilder

from volcano_py.api.batch import JobPhase, JobState, JobStatus, TaskState
from volcano_py.api.bus import Action
from volcano_py.api.common import format_time
from volcano_py.api.job_view import ResolvedJob, read_status, resolve_job
from volcano_py.controllers.job.plan import plan_step
from volcano_py.controllers.job.podview import PodView, read_pod
from volcano_py.controllers.job.state import Target, step_for

NOW = "2026-01-01T00:00:10Z"


def _job(**spec: Any) -> ResolvedJob:
    return resolve_job(JobBuilder().task("master", 1).task("worker", 3).set(**spec).obj())


def _pods(*builders: PodBuilder) -> list[PodView]:
    return [read_pod(b.obj()) for b in builders]


def test_no_pod_before_the_podgroup_is_admitted() -> None:
    spec = _job()
    plan = plan_step(
        spec,
        JobStatus(state=JobState(phase=JobPhase.PENDING)),
        [],
        "Pending",
        step_for(JobPhase.PENDING, Action.SYNC_JOB),
        NOW,
    )
    assert plan.create == () and plan.status.state.phase is JobPhase.PENDING


def test_admitted_podgroup_creates_every_replica_once() -> None:
    spec = _job()
    existing = _pods(PodBuilder("job", "worker", 1).phase("Running"))
    plan = plan_step(
        spec,
        JobStatus(state=JobState(phase=JobPhase.PENDING)),
        existing,
        "Inqueue",
        step_for(JobPhase.PENDING, Action.SYNC_JOB),
        NOW,
    )
    assert plan.create == (("master", 0), ("worker", 0), ("worker", 2))
    assert plan.status.pending == 3 and plan.status.running == 1
    assert plan.status.task_status_count == {
        "master": TaskState(phase={"Pending": 1}),
        "worker": TaskState(phase={"Pending": 2, "Running": 1}),
    }


def test_pending_job_runs_when_min_available_pods_run() -> None:
    spec = _job()
    pods = _pods(
        *(
            PodBuilder("job", t, i).phase("Running")
            for t, i in [("master", 0), ("worker", 0), ("worker", 1), ("worker", 2)]
        )
    )
    plan = plan_step(
        spec,
        JobStatus(state=JobState(phase=JobPhase.PENDING)),
        pods,
        "Running",
        step_for(JobPhase.PENDING, Action.SYNC_JOB),
        NOW,
    )
    assert plan.create == () and plan.phase_changed
    assert plan.status.state.phase is JobPhase.RUNNING
    last = plan.status.conditions[-1]
    assert (last.status, format_time(last.last_transition_time)) == ("Running", NOW)


def test_sync_is_idempotent() -> None:
    spec = _job()
    pods = _pods(
        *(
            PodBuilder("job", t, i).phase("Running")
            for t, i in [("master", 0), ("worker", 0), ("worker", 1), ("worker", 2)]
        )
    )
    step = step_for(JobPhase.RUNNING, Action.SYNC_JOB)
    first = plan_step(spec, JobStatus(state=JobState(phase=JobPhase.RUNNING)), pods, "Running", step, NOW)
    second = plan_step(spec, first.status, pods, "Running", step, "2026-01-01T00:01:00Z")
    assert second.status == first.status and not second.phase_changed and second.create == second.delete == ()


def test_scale_down_deletes_the_highest_indexes_and_scale_up_creates_new_ones() -> None:
    pods = _pods(
        *(PodBuilder("job", "worker", i).phase("Running") for i in range(3)),
        PodBuilder("job", "master", 0).phase("Running"),
    )
    down = resolve_job(JobBuilder().task("master", 1).task("worker", 2).obj())
    plan = plan_step(
        down,
        JobStatus(state=JobState(phase=JobPhase.RUNNING)),
        pods,
        "Running",
        step_for(JobPhase.RUNNING, Action.SYNC_JOB),
        NOW,
    )
    assert plan.delete == ("job-worker-2",) and plan.status.terminating == 1
    up = resolve_job(JobBuilder().task("master", 1).task("worker", 5).obj())
    plan = plan_step(
        up,
        JobStatus(state=JobState(phase=JobPhase.RUNNING)),
        pods,
        "Running",
        step_for(JobPhase.RUNNING, Action.SYNC_JOB),
        NOW,
    )
    assert plan.create == (("worker", 3), ("worker", 4))


def test_preempted_pod_is_replaced_and_not_counted_as_failed() -> None:
    spec = _job()
    pods = _pods(
        PodBuilder("job", "master", 0).phase("Running"),
        PodBuilder("job", "worker", 0).phase("Failed").preempted(),
        PodBuilder("job", "worker", 1).phase("Running"),
        PodBuilder("job", "worker", 2).phase("Running"),
    )
    plan = plan_step(
        spec,
        JobStatus(state=JobState(phase=JobPhase.RUNNING)),
        pods,
        "Running",
        step_for(JobPhase.RUNNING, Action.SYNC_JOB),
        NOW,
    )
    assert plan.delete == ("job-worker-0",)
    assert plan.status.failed == 0 and plan.status.state.phase is JobPhase.RUNNING


def test_depends_on_waits_for_the_dependency_to_be_ready() -> None:
    spec = resolve_job(
        JobBuilder().task("ps", 1).task("worker", 2, depends_on=["ps"]).set(minAvailable=1).obj()
    )
    step = step_for(JobPhase.PENDING, Action.SYNC_JOB)
    plan = plan_step(
        spec, JobStatus(), _pods(PodBuilder("job", "ps", 0).phase("Running")), "Inqueue", step, NOW
    )
    assert plan.create == () and plan.waiting_on_dependencies == ("worker",)
    ready = _pods(PodBuilder("job", "ps", 0).ready())
    assert plan_step(spec, JobStatus(), ready, "Inqueue", step, NOW).create == (("worker", 0), ("worker", 1))


def test_depends_on_any_needs_one_dependency() -> None:
    spec = resolve_job(
        JobBuilder().task("a", 1).task("b", 1).task("w", 1, depends_on=["a", "b"], any_of=True).obj()
    )
    plan = plan_step(
        spec,
        JobStatus(),
        _pods(PodBuilder("job", "b", 0).phase("Succeeded")),
        "Inqueue",
        step_for(None, Action.SYNC_JOB),
        NOW,
    )
    assert ("w", 0) in plan.create


def test_restart_job_kills_every_pod_bumps_version_and_counts_a_retry() -> None:
    spec = _job()
    pods = _pods(PodBuilder("job", "master", 0).phase("Running"), PodBuilder("job", "worker", 0).exit_code(3))
    status = read_status(JobBuilder().status(state={"phase": "Running"}, version=2).obj())
    plan = plan_step(spec, status, pods, "Running", step_for(status.state.phase, Action.RESTART_JOB), NOW)
    assert set(plan.delete) == {"job-master-0", "job-worker-0"} and plan.delete_podgroup
    assert (
        plan.status.state.phase is JobPhase.RESTARTING
        and plan.status.retry_count == 1
        and plan.status.version == 3
    )


def test_the_last_retry_keeps_finished_pods() -> None:
    spec = _job(maxRetry=2)
    pods = _pods(PodBuilder("job", "master", 0).phase("Running"), PodBuilder("job", "worker", 0).exit_code(3))
    status = JobStatus(state=JobState(phase=JobPhase.RUNNING), retry_count=1)
    plan = plan_step(spec, status, pods, "Running", step_for(status.state.phase, Action.RESTART_JOB), NOW)
    assert plan.delete == ("job-master-0",)


def test_abort_keeps_finished_pods() -> None:
    spec = _job()
    pods = _pods(
        PodBuilder("job", "master", 0).phase("Running"), PodBuilder("job", "worker", 0).phase("Succeeded")
    )
    plan = plan_step(
        spec,
        JobStatus(state=JobState(phase=JobPhase.RUNNING)),
        pods,
        "Running",
        step_for(JobPhase.RUNNING, Action.ABORT_JOB),
        NOW,
    )
    assert plan.delete == ("job-master-0",) and plan.status.state.phase is JobPhase.ABORTING
    assert plan.status.succeeded == 1 and plan.status.terminating == 1


def test_restart_task_deletes_only_that_task_and_keeps_the_podgroup() -> None:
    spec = _job()
    pods = _pods(
        PodBuilder("job", "master", 0).phase("Running"),
        *(PodBuilder("job", "worker", i).phase("Running") for i in range(3)),
    )
    step = step_for(JobPhase.RUNNING, Action.RESTART_TASK, Target("worker"))
    plan = plan_step(spec, JobStatus(state=JobState(phase=JobPhase.RUNNING)), pods, "Running", step, NOW)
    assert sorted(plan.delete) == ["job-worker-0", "job-worker-1", "job-worker-2"]
    assert not plan.delete_podgroup and plan.status.version == 0 and plan.status.retry_count == 1


def test_finished_job_sync_changes_nothing() -> None:
    spec = _job()
    pods = _pods(
        *(
            PodBuilder("job", t, i).phase("Succeeded")
            for t, i in [("master", 0), ("worker", 0), ("worker", 1), ("worker", 2)]
        )
    )
    status = JobStatus(state=JobState(phase=JobPhase.COMPLETED), version=1)
    plan = plan_step(spec, status, pods, None, step_for(status.state.phase, Action.SYNC_JOB), NOW)
    assert plan.delete == () and plan.status.version == 1 and not plan.phase_changed


def test_restart_pod_deletes_only_that_pod() -> None:
    spec = _job()
    pods = _pods(*(PodBuilder("job", "worker", i).phase("Running") for i in range(3)))
    step = step_for(JobPhase.RUNNING, Action.RESTART_POD, Target("worker", "job-worker-1"))
    plan = plan_step(spec, JobStatus(state=JobState(phase=JobPhase.RUNNING)), pods, "Running", step, NOW)
    assert plan.delete == ("job-worker-1",) and plan.status.state.phase is JobPhase.RESTARTING
    assert plan.status.running == 2 and plan.status.terminating == 1


def test_restart_partition_deletes_the_pods_of_that_partition_only() -> None:
    spec = _job()
    pods = [
        replace(read_pod(PodBuilder("job", "worker", i).phase("Running").obj()), partition=str(i // 2))
        for i in range(4)
    ]
    step = step_for(JobPhase.RUNNING, Action.RESTART_PARTITION, Target("worker", partition="1"))
    plan = plan_step(spec, JobStatus(state=JobState(phase=JobPhase.RUNNING)), pods, "Running", step, NOW)
    assert sorted(plan.delete) == ["job-worker-2", "job-worker-3"] and not plan.delete_podgroup
    assert plan.status.state.phase is JobPhase.RESTARTING and plan.status.retry_count == 1
    # A task without partitions (no pod carries the partition): Volcano leaves the Job as it is.
    unpartitioned = [replace(p, partition="") for p in pods]
    status = JobStatus(state=JobState(phase=JobPhase.RUNNING))
    plan = plan_step(spec, status, unpartitioned, "Running", step, NOW)
    assert plan.delete == () and plan.status == status and not plan.phase_changed
