"""Lifecycle policy matching and delayed-action cancellation, as Volcano's applyPolicies."""

from __future__ import annotations

from ctl_builders import JobBuilder, PodBuilder, policy

from volcano_py.api.bus import Action, Event
from volcano_py.api.job_view import resolve_job
from volcano_py.controllers.job.events import on_pod_deleted, on_pod_seen
from volcano_py.controllers.job.podview import read_pod
from volcano_py.controllers.job.policies import Decision, Request, cancels_delayed, decide, superseded

SPEC = resolve_job(
    JobBuilder()
    .task("master", 1)
    .task("worker", 2, policies=[policy("RestartTask", event="PodEvicted"), policy("AbortJob", exit_code=7)])
    .policy("RestartJob", exit_code=3)
    .policy("AbortJob", event="PodPending", timeout="30s")
    .policy("TerminateJob", event="TaskFailed")
    .obj()
)


def test_exit_code_policy_matches_a_failed_pod() -> None:
    d = decide(SPEC, 0, Request(Event.POD_FAILED, task="master", pod="job-master-0", exit_code=3))
    assert d.action is Action.RESTART_JOB and d.delay_seconds == 0


def test_task_policy_wins_over_job_policy() -> None:
    assert decide(SPEC, 0, Request(Event.POD_FAILED, task="worker", exit_code=7)).action is Action.ABORT_JOB
    assert decide(SPEC, 0, Request(Event.POD_FAILED, task="worker", exit_code=3)).action is Action.RESTART_JOB
    assert decide(SPEC, 0, Request(Event.POD_EVICTED, task="worker")).action is Action.RESTART_TASK
    assert decide(SPEC, 0, Request(Event.POD_EVICTED, task="master")).action is Action.SYNC_JOB


def test_pod_pending_needs_a_timeout_and_is_delayed_by_it() -> None:
    d = decide(SPEC, 0, Request(Event.POD_PENDING, task="master", pod="job-master-0", pod_uid="u1"))
    assert d.action is Action.ABORT_JOB and d.delay_seconds == 30
    no_timeout = resolve_job(JobBuilder().task("w").policy("AbortJob", event="PodPending").obj())
    assert decide(no_timeout, 0, Request(Event.POD_PENDING, task="w")).action is Action.SYNC_JOB


def test_any_event_matches_but_not_internal_ones() -> None:
    spec = resolve_job(JobBuilder().task("w").policy("RestartJob", event="*").obj())
    assert decide(spec, 0, Request(Event.POD_FAILED, task="w", exit_code=1)).action is Action.RESTART_JOB
    assert decide(spec, 0, Request(Event.POD_RUNNING, task="w")).action is Action.SYNC_JOB
    assert decide(spec, 0, Request(Event.OUT_OF_SYNC, task="w")).action is Action.SYNC_JOB


def test_events_of_pods_from_an_older_job_version_only_sync() -> None:
    req = Request(Event.POD_FAILED, task="master", exit_code=3, job_version=1)
    assert decide(SPEC, 2, req).action is Action.SYNC_JOB
    assert decide(SPEC, 1, req).action is Action.RESTART_JOB


def test_a_command_bypasses_policies() -> None:
    req = Request(Event.COMMAND_ISSUED, action=Action.RESUME_JOB)
    assert decide(SPEC, 5, req).action is Action.RESUME_JOB


def test_delayed_pending_action_is_cancelled_when_the_pod_moves_on() -> None:
    delayed = Decision(Action.ABORT_JOB, 30, Event.POD_PENDING, "master", "job-master-0", "u1")
    assert cancels_delayed(delayed, Request(Event.POD_RUNNING, pod="job-master-0", pod_uid="u1"))
    assert not cancels_delayed(delayed, Request(Event.POD_PENDING, pod="job-master-0", pod_uid="u1"))
    assert not cancels_delayed(delayed, Request(Event.POD_RUNNING, pod="job-worker-0", pod_uid="u2"))


def test_delayed_failure_action_is_cancelled_when_the_pod_runs_again() -> None:
    delayed = Decision(Action.RESTART_JOB, 60, Event.POD_FAILED, "master", "job-master-0", "u1")
    assert cancels_delayed(delayed, Request(Event.POD_RUNNING, pod="job-master-0", pod_uid="u9"))
    assert not cancels_delayed(delayed, Request(Event.POD_FAILED, pod="job-master-0", pod_uid="u9"))


def test_executing_an_action_supersedes_delayed_ones_of_the_same_scope() -> None:
    delayed_task = Decision(Action.RESTART_TASK, 10, Event.POD_EVICTED, "worker", "job-worker-0")
    assert superseded(delayed_task, Decision(Action.RESTART_TASK, task="worker"))
    assert not superseded(delayed_task, Decision(Action.RESTART_TASK, task="master"))
    assert not superseded(delayed_task, Decision(Action.RESTART_JOB))
    assert superseded(Decision(Action.ABORT_JOB, 5), Decision(Action.RESTART_JOB))


def test_pod_events_follow_phase_changes() -> None:
    running = read_pod(PodBuilder("job", "worker", 0).phase("Running").obj())
    assert on_pod_seen(SPEC, "Pending", running, [running]).event is Event.POD_RUNNING
    assert on_pod_seen(SPEC, "Running", running, [running]).event is Event.OUT_OF_SYNC
    assert on_pod_seen(SPEC, None, running, [running]).event is Event.POD_PENDING
    failed = read_pod(PodBuilder("job", "worker", 0).exit_code(3).obj())
    req = on_pod_seen(SPEC, "Running", failed, [failed])
    assert (req.event, req.exit_code, req.task, req.pod) == (Event.POD_FAILED, 3, "worker", "job-worker-0")
    assert on_pod_seen(SPEC, "Failed", failed, [failed]).event is Event.OUT_OF_SYNC


def test_a_pod_that_failed_while_the_controller_was_down_still_fires_its_policy() -> None:
    failed = read_pod(PodBuilder("job", "master", 0).exit_code(3).obj())
    assert on_pod_seen(SPEC, None, failed, [failed]).event is Event.POD_FAILED


def test_preempted_failure_is_an_eviction() -> None:
    pod = read_pod(PodBuilder("job", "worker", 0).phase("Failed").preempted().obj())
    req = on_pod_seen(SPEC, "Running", pod, [pod])
    assert req.event is Event.POD_EVICTED and req.disrupted


def test_task_completed_when_all_replicas_succeeded() -> None:
    pods = [read_pod(PodBuilder("job", "worker", i).phase("Succeeded").obj()) for i in range(2)]
    assert on_pod_seen(SPEC, "Running", pods[1], pods).event is Event.TASK_COMPLETED
    assert on_pod_seen(SPEC, "Running", pods[1], pods[1:]).event is Event.OUT_OF_SYNC


def test_task_failed_after_three_container_restarts() -> None:
    pod = read_pod(PodBuilder("job", "worker", 0).phase("Running").restarts(3).obj())
    assert on_pod_seen(SPEC, "Running", pod, [pod]).event is Event.TASK_FAILED
    assert decide(SPEC, 0, on_pod_seen(SPEC, "Running", pod, [pod])).action is Action.TERMINATE_JOB


def test_deleted_pod_is_an_eviction_unless_the_controller_killed_it() -> None:
    pod = read_pod(PodBuilder("job", "worker", 0).phase("Running").obj())
    assert on_pod_deleted(pod, known=True).event is Event.POD_EVICTED
    killed = read_pod(PodBuilder("job", "worker", 0).phase("Running").out_of_sync().obj())
    assert on_pod_deleted(killed, known=True).event is Event.OUT_OF_SYNC
    assert on_pod_deleted(pod, known=False).event is Event.OUT_OF_SYNC


def test_job_updated_matches_only_a_policy_that_names_it() -> None:
    named = resolve_job(JobBuilder().task("w").policy("RestartJob", event="JobUpdated").obj())
    assert decide(named, 1, Request(Event.JOB_UPDATED, job_version=1)).action is Action.RESTART_JOB
    # Volcano never raises JobUpdated, so '*' has never matched a spec update.
    anything = resolve_job(JobBuilder().task("w").policy("RestartJob", event="*").obj())
    assert decide(anything, 1, Request(Event.JOB_UPDATED, job_version=1)).action is Action.SYNC_JOB


def test_restart_partition_carries_the_pods_partition_and_supersedes_only_that_partition() -> None:
    spec = resolve_job(JobBuilder().task("w", 4).policy("RestartPartition", event="PodFailed").obj())
    d = decide(spec, 0, Request(Event.POD_FAILED, task="w", pod="job-w-2", partition="1", exit_code=1))
    assert (d.action, d.task, d.partition) == (Action.RESTART_PARTITION, "w", "1")
    same = Decision(Action.RESTART_PARTITION, 5, Event.POD_FAILED, "w", "job-w-3", partition="1")
    other = Decision(Action.RESTART_PARTITION, 5, Event.POD_FAILED, "w", "job-w-0", partition="0")
    assert superseded(same, d) and not superseded(other, d)
