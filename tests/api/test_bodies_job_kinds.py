"""Reads of our Job-side kinds (Job, JobFlow, JobTemplate, CronJob, Command) as stored: the fields that are
there, and the zero value for a field missing, null or of the wrong shape (admission leaves that to
validation)."""

from typing import Any

import pytest

from volcano_py.api import constants as c
from volcano_py.api.bodies import command, cronjob, job, jobflow, jobtemplate
from volcano_py.api.bodies.podgroup import podgroup_written_spec
from volcano_py.api.bodies.queue import queue_podgroup_count, queue_written_spec
from volcano_py.api.bus import Action
from volcano_py.api.objects import is_named_object, with_resource_version, without_managed_fields

JOB: dict[str, Any] = {
    "metadata": {"name": "j", "namespace": "ns"},
    "spec": {
        "queue": "q",
        "schedulerName": "volcano",
        "minAvailable": 2,
        "plugins": {"svc": []},
        "tasks": [{"name": "w", "replicas": 2, "template": {"spec": {"hostname": "h"}}}],
    },
    "status": {
        "state": {"phase": "Running", "reason": "r", "message": "m", "lastTransitionTime": "t"},
        "version": 2,
        "retryCount": 1,
        "running": 2,
        "minAvailable": 2,
        "runningDuration": "1m0s",
        "taskStatusCount": {"w": {"phase": {"Running": 2}}},
    },
}


def test_a_job_reads_its_fields() -> None:
    assert (job.job_queue(JOB), job.job_scheduler_name(JOB), job.job_min_available(JOB)) == (
        "q",
        "volcano",
        2,
    )
    [task] = job.job_tasks(JOB)
    assert (job.task_name(task), job.task_replicas(task), job.task_pod_spec(task)) == (
        "w",
        2,
        {"hostname": "h"},
    )
    assert job.job_plugins(JOB) == {"svc": []}
    assert (job.job_phase(JOB), job.job_state_reason(JOB), job.job_state_message(JOB)) == (
        "Running",
        "r",
        "m",
    )
    assert job.job_state_transition_time(JOB) == "t" and job.job_running_duration(JOB) == "1m0s"
    assert (job.job_version(JOB), job.job_retry_count(JOB), job.job_pod_count(JOB, "running")) == (2, 1, 2)
    assert job.job_status_min_available(JOB) == 2
    assert job.job_task_phase_counts(JOB, "w") == {"Running": 2}
    assert job.job_with_status(JOB, {"version": 3})["status"] == {"version": 3}


def test_a_bare_or_malformed_job_reads_zero_values() -> None:
    for bare in ({}, {"spec": None, "status": None}, {"spec": [], "status": "x"}):
        assert job.job_queue(bare) == c.DEFAULT_QUEUE and job.job_scheduler_name(bare) == ""
        assert job.job_tasks(bare) == () and job.job_plugins(bare) is None and job.job_spec(bare) == {}
        assert job.job_phase(bare) == "" and job.job_version(bare) == 0 and job.job_retry_count(bare) == 0
        assert job.job_status_min_available(bare) is None and job.job_task_phase_counts(bare, "w") == {}
    assert job.job_min_available({"spec": {"minAvailable": True}}) == 0


def test_flow_kinds_read_their_fields() -> None:
    flow = {
        "spec": {"flows": [{"name": "a", "patch": {"jobSpec": {"queue": "q"}}}, {"name": "b"}]},
        "status": {"state": {"phase": "Running"}},
    }
    a, b = jobflow.jobflow_flows(flow)
    assert (jobflow.step_name(a), jobflow.step_job_spec_patch(a), jobflow.step_job_spec_patch(b)) == (
        "a",
        {"queue": "q"},
        None,
    )
    assert jobflow.jobflow_phase(flow) == "Running" and jobflow.jobflow_phase({}) == ""
    template = {"spec": {"tasks": []}, "status": {"jobDependsOnList": ["f-a"]}}
    assert jobtemplate.jobtemplate_job_spec(template) == {"tasks": []}
    assert jobtemplate.jobtemplate_status(template) == {"jobDependsOnList": ["f-a"]}
    assert jobtemplate.jobtemplate_status({}) == {}


def test_a_cronjob_reads_its_fields() -> None:
    cron = {
        "spec": {
            "schedule": "*/5 * * * *",
            "suspend": True,
            "jobTemplate": {"metadata": {"labels": {"a": "1"}}, "spec": {"queue": "q"}},
        },
        "status": {"active": [{"name": "c-1"}], "lastScheduleTime": "t1"},
    }
    assert (cronjob.cronjob_schedule(cron), cronjob.cronjob_time_zone(cron)) == ("*/5 * * * *", "")
    assert cronjob.cronjob_suspended(cron) and not cronjob.cronjob_suspended({})
    assert cronjob.cronjob_job_spec(cron) == {"queue": "q"}
    assert cronjob.cronjob_active(cron) == [{"name": "c-1"}] and cronjob.cronjob_active({}) == ()
    assert (
        cronjob.cronjob_last_schedule_time(cron) == "t1" and cronjob.cronjob_last_successful_time(cron) == ""
    )


def test_a_command_reads_its_action_and_target() -> None:
    cmd = {"action": "AbortJob", "target": {"kind": "Job", "name": "j"}}
    assert command.command_action(cmd) is Action.ABORT_JOB
    assert (command.command_target_kind(cmd), command.command_target_name(cmd)) == ("Job", "j")
    other = {"action": "Dance", "targetObject": {"kind": "Queue", "name": "q"}}
    assert command.command_action(other) is None and command.command_action_text(other) == "Dance"
    assert command.command_target_name(other) == "q" and command.command_target({}) == {}


def test_a_replacement_carries_the_version_read() -> None:
    body = {"metadata": {"name": "s"}, "data": {}}
    assert with_resource_version(body, "7") == {"metadata": {"name": "s", "resourceVersion": "7"}, "data": {}}


def test_admission_tells_a_spec_left_out_from_one_that_is_no_mapping() -> None:
    assert job.job_written_spec({}) is None and job.job_written_spec({"spec": None}) is None
    assert job.job_written_spec({"spec": {"queue": "q"}}) == {"queue": "q"}
    for bad in ([], "x", 1):
        with pytest.raises(ValueError, match="spec"):
            job.job_written_spec({"spec": bad})
        with pytest.raises(ValueError, match="spec"):
            podgroup_written_spec({"spec": bad})
        with pytest.raises(ValueError, match="spec"):
            queue_written_spec({"spec": bad})
    assert job.job_max_retry({"spec": {"maxRetry": 5}}) == 5 and job.job_max_retry({}) == 0


def test_queue_counters_and_named_objects() -> None:
    queue = {"status": {"inqueue": 2, "running": 1}}
    assert (queue_podgroup_count(queue, "inqueue"), queue_podgroup_count(queue, "pending")) == (2, 0)
    assert is_named_object({"metadata": {"name": "x"}})
    assert not any(map(is_named_object, ([], {"metadata": []}, {"metadata": {"name": ""}}, {})))


def test_a_copy_without_the_apply_ledger() -> None:
    body = {"metadata": {"name": "s", "managedFields": [{"manager": "kubectl"}]}, "spec": {}}
    assert without_managed_fields(body) == {"metadata": {"name": "s"}, "spec": {}}
    assert body["metadata"]["managedFields"]  # the original is left as it was
