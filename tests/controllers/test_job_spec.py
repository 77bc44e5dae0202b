"""Reading a Job body: Volcano's defaults, and errors that name the field and the fix."""

from __future__ import annotations

from typing import Any

import pytest
from ctl_builders import JobBuilder, policy

from volcano_py.api.batch import Job
from volcano_py.api.bus import Action, Event
from volcano_py.api.job_rules import validate_job
from volcano_py.api.job_view import JobSpecError, parse_duration, resolve_job


def test_defaults_follow_volcanos_webhook() -> None:
    spec = resolve_job(JobBuilder().task("master").task("worker", 3).obj())
    assert spec.queue == "default"
    assert spec.scheduler_name == "volcano"
    assert spec.max_retry == 3
    assert spec.min_available == 4
    assert [t.min_available for t in spec.tasks] == [1, 3]
    assert spec.podgroup_name == "job-uid-1234"
    assert spec.total_replicas == 4


def test_policies_are_parsed_at_job_and_task_level() -> None:
    body = (
        JobBuilder()
        .task("w", 2, policies=[policy("RestartTask", event="PodEvicted")])
        .policy("RestartJob", exit_code=3)
        .policy("AbortJob", event="PodPending", timeout="1m30s")
        .obj()
    )
    spec = resolve_job(body)
    assert spec.tasks[0].policies[0].events == (Event.POD_EVICTED,)
    assert spec.policies[0].action is Action.RESTART_JOB and spec.policies[0].exit_code == 3
    assert spec.policies[1].timeout_seconds == 90.0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10s", 10.0), ("1m30s", 90.0), ("500ms", 0.5), ("1h", 3600.0), ("1.5m", 90.0)],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text, field_name="timeout") == seconds


def _job_with(**changes: Any) -> dict[str, Any]:
    return JobBuilder().task("w", 2).set(**changes).obj()


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param({"metadata": {"name": "j"}, "spec": {}}, "spec.tasks", id="no-tasks"),
        pytest.param(
            _job_with(minAvailable=5),
            "spec.minAvailable: job 'minAvailable' should not be greater than",
            id="min-available-too-big",
        ),
        pytest.param(_job_with(minSuccess=3), "spec.minSuccess", id="min-success-too-big"),
        pytest.param(_job_with(maxRetry="x"), "spec.maxRetry: 'x' is not an integer", id="max-retry-type"),
        pytest.param(
            _job_with(policies=[{"action": "Explode", "event": "PodFailed"}]),
            "spec.policies[0].action: invalid policy action; 'Explode'",
            id="unknown-action",
        ),
        pytest.param(
            _job_with(policies=[{"action": "RestartJob", "event": "PodFailed", "exitCode": 1}]),
            "keep one of event and exitCode",
            id="event-and-exit-code",
        ),
        pytest.param(
            _job_with(policies=[{"action": "RestartJob", "exitCode": 0}]), "0 means success", id="exit-code-0"
        ),
        pytest.param(
            _job_with(policies=[{"action": "AbortJob", "event": "PodPending", "timeout": "soon"}]),
            "spec.policies[0].timeout: 'soon' is not a duration",
            id="bad-timeout",
        ),
        pytest.param(
            _job_with(volumes=[{"mountPath": "/data"}]),
            "spec.volumes[0]: either VolumeClaim or VolumeClaimName",
            id="vol",
        ),
    ],
)
def test_bad_jobs_name_the_field(body: dict[str, Any], fragment: str) -> None:
    with pytest.raises(JobSpecError) as err:
        resolve_job(body)
    assert fragment in str(err.value)


def test_task_min_available_above_replicas_is_rejected() -> None:
    with pytest.raises(JobSpecError, match=r"spec.tasks\[0\].minAvailable: .* 3 is greater than replicas 2"):
        resolve_job(JobBuilder().task("w", 2, min_available=3).obj())


def test_depends_on_unknown_task_is_rejected() -> None:
    with pytest.raises(JobSpecError, match=r"spec.tasks\[0\].dependsOn.name\[0\]: task 'ps' does not exist"):
        resolve_job(JobBuilder().task("w", 2, depends_on=["ps"]).obj())


def test_the_controller_refuses_what_admission_refuses_in_the_same_words() -> None:
    body = JobBuilder().task("w", 6).obj()
    body["spec"]["tasks"][0].update(
        minAvailable=5, partitionPolicy={"totalPartitions": 3, "partitionSize": 2, "minPartitions": 2}
    )
    with pytest.raises(JobSpecError) as err:
        resolve_job(body)
    assert str(err.value) == "; ".join(map(str, validate_job(Job.model_validate(body))))


@pytest.mark.parametrize("policy_doc", [{"event": "JobUpdated", "action": "RestartJob"},
                                        {"event": "PodFailed", "action": "RestartPartition"}])  # fmt: skip
def test_policies_the_webhook_admits_are_read(policy_doc: dict[str, Any]) -> None:
    spec = resolve_job(JobBuilder().task("w", 2).set(policies=[policy_doc]).obj())
    assert spec.policies[0].action == policy_doc["action"]
    assert spec.policies[0].events == (policy_doc["event"],)


def test_generated_claim_name_is_stable() -> None:
    body = _job_with(volumes=[{"mountPath": "/data", "volumeClaim": {"accessModes": ["ReadWriteOnce"]}}])
    assert (
        resolve_job(body).volumes[0].claim_name
        == resolve_job(body).volumes[0].claim_name
        == "job-pvc-uid-1234-0"
    )
