"""JobFlow and CronJob controllers' pure decisions: what they create, delete and report, at a given time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from volcano_py.api import constants as c
from volcano_py.controllers.flow.cronjob import job_name, plan_cronjob
from volcano_py.controllers.flow.jobflow import patched_spec, plan_jobflow

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
POD = {
    "spec": {"containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}
}


def template(name: str) -> dict[str, Any]:
    return {
        "apiVersion": c.FLOW_API_VERSION,
        "kind": c.JOBTEMPLATE_KIND,
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"queue": "default", "tasks": [{"name": "work", "replicas": 1, "template": POD}]},
    }


TEMPLATES = {n: template(n) for n in ("a", "b", "c", "d")}


def jobflow(*steps: tuple[str, list[str]], phase: str | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": c.FLOW_API_VERSION,
        "kind": c.JOBFLOW_KIND,
        "metadata": {"name": "f", "namespace": "ns", "uid": "flow-uid"},
        "spec": {"flows": [{"name": n, **({"dependsOn": {"targets": t}} if t else {})} for n, t in steps],
                 **spec},
    }  # fmt: skip
    if phase:
        body["status"] = {"state": {"phase": phase}}
    return body


DIAMOND = (("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"]))


def vcjob(name: str, phase: str, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                     "creationTimestamp": "2026-05-01T11:00:00Z"},
        "status": {"state": {"phase": phase}, **status},
    }  # fmt: skip


def created(plan: Any) -> list[str]:
    return [j["metadata"]["name"] for j in plan.create]


@pytest.mark.parametrize(
    ("jobs", "want_created", "want_phase"),
    [
        pytest.param({}, ["f-a"], "Pending", id="start-the-roots"),
        pytest.param({"f-a": "Running"}, [], "Running", id="wait-for-target"),
        pytest.param({"f-a": "Completed"}, ["f-b", "f-c"], "Running", id="fan-out"),
        pytest.param({"f-a": "Completed", "f-b": "Completed", "f-c": "Running"}, [], "Running",
                     id="join-waits"),
        pytest.param({"f-a": "Completed", "f-b": "Completed", "f-c": "Completed"}, ["f-d"], "Running",
                     id="join"),
        pytest.param({"f-a": "Completed", "f-b": "Failed", "f-c": "Running"}, [], "Failed",
                     id="a-step-fails"),
    ],
)  # fmt: skip
def test_diamond_runs_in_dependency_order(
    jobs: dict[str, str], want_created: list[str], want_phase: str
) -> None:
    phase = "Running" if jobs else None
    plan = plan_jobflow(
        jobflow(*DIAMOND, phase=phase), TEMPLATES, {n: vcjob(n, p) for n, p in jobs.items()}, T0
    )
    assert created(plan) == want_created
    assert plan.status is not None and plan.status["state"]["phase"] == want_phase


def test_every_step_completed_is_succeed_and_a_failed_flow_starts_nothing() -> None:
    done = {n: vcjob(f"f-{n}", "Completed") for n in "abcd"}
    plan = plan_jobflow(
        jobflow(*DIAMOND, phase="Running"), TEMPLATES, {f"f-{n}": j for n, j in done.items()}, T0
    )
    assert plan.status is not None and plan.status["state"]["phase"] == "Succeed"
    assert plan.status["completedJobs"] == ["f-a", "f-b", "f-c", "f-d"]
    failed = plan_jobflow(
        jobflow(*DIAMOND, phase="Failed"), TEMPLATES, {"f-a": vcjob("f-a", "Completed")}, T0
    )
    assert failed.create == []


def test_created_job_is_owned_marked_and_patched() -> None:
    flow = jobflow(("a", []))
    flow["spec"]["flows"][0]["patch"] = {
        "jobSpec": {"tasks": [{"name": "work", "replicas": 3, "template": {"spec": {"containers": [
            {"name": "main", "resources": {"requests": {"cpu": "2"}}}]}}}]}
    }  # fmt: skip
    (job,) = plan_jobflow(flow, TEMPLATES, {}, T0).create
    meta = job["metadata"]
    assert meta["labels"] == {c.CREATED_BY_JOB_TEMPLATE_KEY: "ns.a", c.CREATED_BY_JOB_FLOW_KEY: "ns.f"}
    assert meta["ownerReferences"][0] | {} == {
        "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": "f", "uid": "flow-uid",
        "controller": True, "blockOwnerDeletion": True,
    }  # fmt: skip
    (task,) = job["spec"]["tasks"]
    assert task["replicas"] == 3
    assert task["template"]["spec"]["containers"] == [
        {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "2"}}}
    ]
    assert job["spec"]["queue"] == "default"  # untouched by the patch


def test_patch_adds_tasks_it_does_not_name() -> None:
    spec = patched_spec({"tasks": [{"name": "a", "replicas": 1}]}, {"tasks": [{"name": "b", "replicas": 2}]})
    assert [t["name"] for t in spec["tasks"]] == ["a", "b"]


def test_a_flow_applied_before_its_templates_waits_pending_then_starts_when_they_exist() -> None:
    early = plan_jobflow(jobflow(("x", []), ("a", [])), TEMPLATES, {}, T0)
    # Volcano's sync stops at the first step it cannot create: the steps listed after it wait too.
    assert created(early) == []
    assert [(e.type, e.reason) for e in early.events] == [("Warning", "TemplateNotFound")]
    assert "no JobTemplate 'x' in namespace ns" in early.events[0].message
    assert early.status is None  # as Volcano's sync that stops at the step: the flow is not written
    later = plan_jobflow(jobflow(("x", []), ("a", [])), {**TEMPLATES, "x": template("x")}, {}, T0)
    assert (created(later), later.events) == (["f-x", "f-a"], [])


def test_a_missing_template_of_a_later_step_waits_only_once_that_step_is_due() -> None:
    plan = plan_jobflow(jobflow(("a", []), ("x", ["a"])), TEMPLATES, {}, T0)
    assert (created(plan), plan.events) == (["f-a"], [])
    due = plan_jobflow(jobflow(("a", []), ("x", ["a"]), phase="Running"), TEMPLATES,
                       {"f-a": vcjob("f-a", "Completed")}, T0)  # fmt: skip
    assert created(due) == [] and [e.reason for e in due.events] == ["TemplateNotFound"]
    assert due.status is None


def test_a_step_name_listed_twice_runs_once_and_the_flow_still_succeeds() -> None:
    steps = (("a", []), ("a", []), ("b", ["a"]))
    first = plan_jobflow(jobflow(*steps), TEMPLATES, {}, T0)
    assert created(first) == ["f-a"]
    done = {n: vcjob(n, "Completed") for n in ("f-a", "f-b")}
    last = plan_jobflow(jobflow(*steps, phase="Running"), TEMPLATES, done, T0)
    assert last.create == [] and last.status is not None and last.status["state"]["phase"] == "Succeed"


def test_a_duplicate_runs_from_whichever_entry_is_ready_first() -> None:
    # "c" twice: after "b" (only starting now) or after "a" (completed): the second entry starts it.
    steps = (("a", []), ("b", ["a"]), ("c", ["b"]), ("c", ["a"]))
    plan = plan_jobflow(jobflow(*steps, phase="Running"), TEMPLATES, {"f-a": vcjob("f-a", "Completed")}, T0)
    assert created(plan) == ["f-b", "f-c"]


def test_an_empty_flow_stays_pending_as_volcanos_does() -> None:
    plan = plan_jobflow(jobflow(), TEMPLATES, {}, T0)
    assert (plan.create, plan.events, plan.status) == ([], [], {"state": {"phase": "Pending"}})
    again = plan_jobflow(jobflow(phase="Pending"), TEMPLATES, {}, T0)
    assert again.status is None


def test_a_job_name_longer_than_a_job_may_have_waits_with_a_warning() -> None:
    flow = jobflow(("a" * 62, []))
    plan = plan_jobflow(flow, {"a" * 62: template("a" * 62)}, {}, T0)
    assert plan.create == [] and [e.reason for e in plan.events] == ["InvalidJobName"]


def test_retain_policy_delete_removes_the_jobs_of_a_succeeded_flow() -> None:
    jobs = {"f-a": vcjob("f-a", "Completed")}
    keep = plan_jobflow(jobflow(("a", []), phase="Succeed"), TEMPLATES, jobs, T0)
    drop = plan_jobflow(jobflow(("a", []), phase="Succeed", jobRetainPolicy="delete"), TEMPLATES, jobs, T0)
    assert (keep.delete, drop.delete) == ([], ["f-a"])


def test_status_is_not_rewritten_when_nothing_changed() -> None:
    first = plan_jobflow(jobflow(("a", [])), TEMPLATES, {"f-a": vcjob("f-a", "Running")}, T0)
    assert first.status is not None
    again = jobflow(("a", []))
    again["status"] = first.status
    later = plan_jobflow(again, TEMPLATES, {"f-a": vcjob("f-a", "Running")}, T0 + timedelta(minutes=1))
    assert later.status is None
    history = first.status["jobStatusList"][0]["runningHistories"]
    assert history == [{"startTimestamp": "2026-05-01T12:00:00Z", "state": "Running"}]


# --- CronJob ------------------------------------------------------------------------------------------


def cron(
    schedule: str = "*/5 * * * *", *, status: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.CRONJOB_KIND,
        "metadata": {"name": "nightly", "namespace": "ns", "uid": "cron-uid",
                     "creationTimestamp": "2026-05-01T11:58:00Z"},
        "spec": {"schedule": schedule, "jobTemplate": {"metadata": {"labels": {"app": "x"}},
                                                       "spec": TEMPLATES["a"]["spec"]}, **spec},
        **({"status": status} if status else {}),
    }  # fmt: skip


def run(
    name: str, phase: str, created: str = "2026-05-01T12:00:00Z", finished: str | None = None
) -> dict[str, Any]:
    state: dict[str, Any] = {"phase": phase}
    if finished:
        state["lastTransitionTime"] = finished
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "creationTimestamp": created},
            "status": {"state": state}}  # fmt: skip


def test_first_run_is_named_after_its_time_and_annotated_in_the_zone() -> None:
    plan = plan_cronjob(cron(timeZone="Asia/Shanghai"), [], T0 + timedelta(seconds=3))
    assert plan.create is not None
    meta = plan.create["metadata"]
    assert meta["name"] == f"nightly-{int(T0.timestamp()) // 60}"
    assert meta["annotations"][c.CRONJOB_SCHEDULED_TIMESTAMP_KEY] == "2026-05-01T20:00:00+08:00"
    assert meta["labels"] == {"app": "x"}
    assert meta["ownerReferences"][0]["kind"] == "CronJob"
    assert plan.status is not None and plan.status["lastScheduleTime"] == "2026-05-01T12:00:00Z"
    assert plan.requeue_after == pytest.approx(5 * 60 - 3 + 0.1)


def test_nothing_due_waits_for_the_next_time() -> None:
    plan = plan_cronjob(
        cron(status={"lastScheduleTime": "2026-05-01T12:00:00Z"}), [], T0 + timedelta(minutes=2)
    )
    assert plan.create is None
    assert plan.requeue_after == pytest.approx(3 * 60 + 0.1)


@pytest.mark.parametrize(
    ("policy", "want_create", "want_delete", "reason"),
    [
        pytest.param("Allow", True, [], None, id="allow"),
        pytest.param("Forbid", False, [], "ForbidConcurrent", id="forbid-skips"),
        pytest.param("Replace", True, ["nightly-old"], "ReplaceConcurrent", id="replace"),
    ],
)
def test_concurrency_policy_with_a_run_still_active(policy: str, want_create: bool, want_delete: list[str],
                                                    reason: str | None) -> None:  # fmt: skip
    body = cron(concurrencyPolicy=policy, status={"lastScheduleTime": "2026-05-01T11:55:00Z"})
    plan = plan_cronjob(
        body, [run("nightly-old", "Running", "2026-05-01T11:55:00Z")], T0 + timedelta(seconds=1)
    )
    assert (plan.create is not None) is want_create
    assert plan.delete == want_delete
    assert [e.reason for e in plan.events] == ([reason] if reason else [])


def test_forbid_runs_the_missed_time_once_the_active_run_finished() -> None:
    body = cron(concurrencyPolicy="Forbid", status={"lastScheduleTime": "2026-05-01T11:55:00Z"})
    done = run("nightly-old", "Completed", "2026-05-01T11:55:00Z", finished="2026-05-01T12:01:00Z")
    plan = plan_cronjob(body, [done], T0 + timedelta(minutes=1, seconds=5))
    assert plan.create is not None and plan.create["metadata"]["name"] == job_name("nightly", T0)
    assert plan.status is not None and plan.status["lastSuccessfulTime"] == "2026-05-01T12:01:00Z"


def test_starting_deadline_skips_runs_missed_for_too_long() -> None:
    body = cron(startingDeadlineSeconds=60, status={"lastScheduleTime": "2026-05-01T11:00:00Z"})
    late = plan_cronjob(body, [], T0 + timedelta(minutes=2))
    assert late.create is None
    in_time = plan_cronjob(body, [], T0 + timedelta(seconds=30))
    assert in_time.create is not None


def test_a_restart_after_creating_adopts_the_run_instead_of_repeating_it() -> None:
    # The Job was created but the status write was lost: active is rebuilt from the owned Job, and the
    # scheduled time maps to the same name, so the shell's create hits AlreadyExists.
    name = job_name("nightly", T0)
    plan = plan_cronjob(cron(), [run(name, "Running")], T0 + timedelta(seconds=10))
    assert plan.status is not None and [r["name"] for r in plan.status["active"]] == [name]
    assert plan.create is None


def test_history_limits_delete_the_oldest_finished_runs() -> None:
    jobs = [run(f"nightly-{i}", "Completed", f"2026-05-01T1{i}:00:00Z") for i in range(5)]
    jobs += [
        run("nightly-f1", "Failed", "2026-05-01T10:00:00Z"),
        run("nightly-f2", "Failed", "2026-05-01T11:00:00Z"),
    ]
    plan = plan_cronjob(cron(suspend=True, successfulJobsHistoryLimit=3, failedJobsHistoryLimit=1), jobs, T0)
    assert plan.delete == ["nightly-0", "nightly-1", "nightly-f1"]
    assert plan.create is None  # suspended


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        pytest.param({"timeZone": "Mars/Olympus"}, "InvalidTimeZone", id="zone"),
        pytest.param({"schedule": "99 * * * *"}, "InvalidSchedule", id="grammar"),
        # Admitted, as Volcano admits it, but it never fires: Volcano's controller reports it the same way.
        pytest.param({"schedule": "0 0 31 2 *"}, "InvalidSchedule", id="never-fires"),
    ],
)
def test_an_unusable_schedule_is_reported_not_run(spec: dict[str, Any], reason: str) -> None:
    body = cron()
    body["spec"].update(spec)
    plan = plan_cronjob(body, [], T0)
    assert plan.create is None
    assert [e.reason for e in plan.events] == [reason]


def test_sub_minute_schedules_name_runs_by_the_second() -> None:
    first = plan_cronjob(cron("@every 10s"), [], datetime(2026, 5, 1, 11, 58, 10, tzinfo=UTC))
    assert first.create is not None
    assert (
        first.create["metadata"]["name"]
        == f"nightly-{int(datetime(2026, 5, 1, 11, 58, 10, tzinfo=UTC).timestamp())}"
    )


@pytest.mark.parametrize(
    ("zone", "annotation"),
    [
        pytest.param(None, "2026-05-01T12:00:00Z", id="utc"),
        pytest.param("Europe/London", "2026-05-01T13:00:00+01:00", id="summer-offset"),
        pytest.param("Africa/Abidjan", "2026-05-01T12:00:00Z", id="zero-offset-zone"),
    ],
)
def test_the_scheduled_time_annotation_is_rfc3339_as_go_writes_it(zone: str | None, annotation: str) -> None:
    body = cron(**({"timeZone": zone} if zone else {}))
    plan = plan_cronjob(body, [], T0 + timedelta(seconds=3))
    assert plan.create is not None
    assert plan.create["metadata"]["annotations"][c.CRONJOB_SCHEDULED_TIMESTAMP_KEY] == annotation


def test_a_finished_run_leaves_active_with_volcanos_event() -> None:
    name = job_name("nightly", T0)
    active = {"lastScheduleTime": "2026-05-01T12:00:00Z",
              "active": [{"kind": "Job", "name": name, "uid": f"uid-{name}"}]}  # fmt: skip
    done = run(name, "Completed", finished="2026-05-01T12:01:00Z")
    plan = plan_cronjob(cron(status=active), [done], T0 + timedelta(minutes=2))
    assert plan.status is not None and "active" not in plan.status
    assert [(e.type, e.reason, e.message) for e in plan.events] == [
        ("Normal", "SawCompletedJob", f"Saw completed job: {name} in active, remove")
    ]


def test_an_active_run_deleted_by_someone_else_is_a_stale_reference() -> None:
    active = {"lastScheduleTime": "2026-05-01T12:00:00Z",
              "active": [{"kind": "Job", "name": "nightly-gone", "uid": "uid-gone"}]}  # fmt: skip
    plan = plan_cronjob(cron(status=active), [], T0 + timedelta(minutes=2))
    assert plan.status is not None and "active" not in plan.status
    assert [(e.type, e.reason, e.message) for e in plan.events] == [
        ("Warning", "StaleReference", 'Active job "nightly-gone" no longer exists (UID: uid-gone)')
    ]


def test_more_than_a_hundred_missed_runs_warn_and_run_the_latest() -> None:
    body = cron("* * * * *", status={"lastScheduleTime": "2026-05-01T08:00:00Z"})
    plan = plan_cronjob(body, [], T0 + timedelta(seconds=5))
    assert plan.create is not None and plan.create["metadata"]["name"] == job_name("nightly", T0)
    assert [(e.reason, e.message) for e in plan.events] == [
        (
            "TooManyMissedTimes",
            "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
        )
    ]
