"""JobFlow, JobTemplate and CronJob: what `volcano-py validate` and admission say about bad ones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from volcano_py.api.cron_parse import parse_schedule
from volcano_py.api.cron_schedule import ScheduleError
from volcano_py.api.flow_rules import find_cycle, templates_missing_across
from volcano_py.api.validation import validate_object

POD = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
TASKS = [{"name": "work", "replicas": 1, "template": POD}]


def flow(*steps: tuple[str, list[str]], name: str = "pipeline", **spec: Any) -> dict[str, Any]:
    flows = [{"name": n, **({"dependsOn": {"targets": t}} if t else {})} for n, t in steps]
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"flows": flows, **spec},
    }


def cronjob(schedule: str = "*/5 * * * *", name: str = "nightly", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": schedule, "jobTemplate": {"spec": {"tasks": TASKS}}, **spec},
    }


def template(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {"tasks": TASKS, **spec},
    }


def lines(obj: dict[str, Any]) -> list[str]:
    return [str(p) for p in validate_object(obj)]


def test_a_diamond_flow_is_valid() -> None:
    assert lines(flow(("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"]))) == []


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(flow(), id="empty-flows"),
        pytest.param(flow(("a", []), ("a", []), ("b", ["a"])), id="duplicate-names"),
        # Volcano's graph keeps the last entry of a name: "c" after "b", so no cycle, no unknown target.
        pytest.param(flow(("a", []), ("b", ["a"]), ("c", ["a"]), ("c", ["b"])), id="duplicate-other-targets"),
        pytest.param(flow(("a", ["b"]), ("b", []), ("a", [])), id="shadowed-cycle"),
        pytest.param(flow(("s" * 40, []), name="f" * 30), id="long-job-name"),
    ],
)
def test_flows_volcano_admits_are_admitted(obj: dict[str, Any]) -> None:
    assert lines(obj) == []


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            flow(("a", ["c"]), ("b", ["a"]), ("c", ["b"])),
            "spec.flows[0].dependsOn.targets: jobflow Flow is not DAG; a -> c -> b -> a depend on each other "
            "in a cycle (remove one of these dependencies)",
            id="cycle",
        ),
        pytest.param(
            flow(("a", ["a"])),
            "spec.flows[0].dependsOn.targets: jobflow Flow is not DAG; a -> a",
            id="self-dependency",
        ),
        pytest.param(
            flow(("a", []), ("b", ["x"])),
            "spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: x; "
            "'x' is not a step of this flow (name one of: a, b)",
            id="unknown-target",
        ),
        pytest.param(
            flow(("a", []), jobRetainPolicy="keep"),
            "spec.jobRetainPolicy: 'keep' is not allowed (use one of 'retain', 'delete')",
            id="retain-policy",
        ),
        pytest.param(
            {**flow(("a", [])), "spec": {"flows": 3}}, "spec.flows: expected a list", id="garbage-spec"
        ),
        pytest.param(
            cronjob("61 * * * *"),
            "spec.schedule: schedule is not a valid cron expression; '61 * * * *': minute field '61': '61' "
            "goes above 59 (use 0-59)",
            id="bad-cron",
        ),
        pytest.param(
            cronjob("* * * * * *"),
            "spec.schedule: schedule is not a valid cron expression; '* * * * * *' has 6 fields",
            id="six-fields",
        ),
        pytest.param(
            cronjob("@fortnightly"),
            "spec.schedule: schedule is not a valid cron expression; '@fortnightly' is not a known "
            "descriptor",
            id="descriptor",
        ),
        pytest.param(
            cronjob(""), "spec.schedule: schedule is required, but got empty; write a cron", id="no-schedule"
        ),
        pytest.param(
            cronjob("TZ=UTC 0 * * * *"),
            "spec.schedule: schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone "
            "field; remove the prefix from 'TZ=UTC 0 * * * *'",
            id="tz-prefix",
        ),
        pytest.param(
            cronjob(timeZone="Mars/Olympus"),
            "spec.timeZone: invalid timeZone; unknown time zone 'Mars/Olympus'",
            id="bad-zone",
        ),
        pytest.param(
            cronjob(timeZone="Bad Zone/../x"),
            "spec.timeZone: unknown timeZone unknown timeZone invalid timeZone; unknown time zone",
            id="malformed-zone",
        ),
        pytest.param(
            cronjob(timeZone=""),
            "spec.timeZone: timeZone must be nil or non-empty string, got empty string; remove timeZone",
            id="empty-zone",
        ),
        pytest.param(
            cronjob(timeZone="Local"),
            "spec.timeZone: timeZone can't be Local, and must be defined in https://www.iana.org/time-zones; "
            "'Local' is not allowed",
            id="local-zone",
        ),
        pytest.param(
            cronjob(name="n" * 53),
            "metadata.name: cronJob name must be no more than 52 characters to accommodate job name suffix "
            "(max 63 total); '" + "n" * 53 + "' has 53",
            id="long-name",
        ),
        pytest.param(
            cronjob(concurrencyPolicy="Sometimes"),
            "spec.concurrencyPolicy: 'Sometimes' is not allowed (use one of 'Allow', 'Forbid', 'Replace')",
            id="concurrency",
        ),
        pytest.param(
            cronjob(startingDeadlineSeconds=-1),
            "spec.startingDeadlineSeconds: -1 is too small",
            id="deadline",
        ),
        pytest.param(
            {
                **cronjob(),
                "spec": {**cronjob()["spec"], "jobTemplate": {"spec": {"tasks": TASKS, "minAvailable": 5}}},
            },
            "spec.jobTemplate.spec.minAvailable: job 'minAvailable' should not be greater than total "
            "replicas in tasks; 5 is greater than the sum of task replicas 1",
            id="cron-job-spec-rules",
        ),
        pytest.param(
            template("train", minAvailable=3),
            "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks; 3 is "
            "greater than the sum of task replicas 1",
            id="template-job-spec-rules",
        ),
    ],
)
def test_bad_objects_are_refused_with_the_field_named(obj: dict[str, Any], expected: str) -> None:
    found = lines(obj)
    assert any(line.startswith(expected) for line in found), found


@pytest.mark.parametrize(
    "schedule",
    # Volcano admits a schedule that never fires (31 February) and a sub-second @every (run each second).
    ["*/5 * * * *", "@hourly", "@every 90s", "0 9 * * 1-5", "30 6-16/4 * * *", "0 0 31 2 *", "@every 500ms"],
)
def test_good_schedules_are_accepted(schedule: str) -> None:
    assert lines(cronjob(schedule, timeZone="Asia/Shanghai")) == []


def test_the_schedule_follows_the_time_zone_across_daylight_saving() -> None:
    daily = parse_schedule("0 9 * * *", "Europe/Paris")
    winter = daily.next_after(datetime(2026, 3, 27, 12, tzinfo=UTC))
    summer = daily.next_after(datetime(2026, 3, 29, 12, tzinfo=UTC))
    assert (winter.hour, summer.hour) == (8, 7)  # 09:00 in Paris is 08:00 UTC in winter, 07:00 in summer


def test_every_runs_at_the_interval_after_the_previous_run() -> None:
    every = parse_schedule("@every 1h30m")
    assert every.next_after(datetime(2026, 1, 1, 0, 0, 10, 500, tzinfo=UTC)) == datetime(
        2026, 1, 1, 1, 30, 10, tzinfo=UTC
    )


def test_every_runs_at_whole_seconds_at_least_one_apart_as_robfig_cron() -> None:
    assert parse_schedule("@every 500ms").every == timedelta(seconds=1)
    assert parse_schedule("@every 2.7s").every == timedelta(seconds=2)


def test_a_schedule_that_never_fires_is_refused_where_it_must_fire() -> None:
    with pytest.raises(ScheduleError, match="never fires"):
        parse_schedule("0 0 31 2 *")


def test_unknown_descriptor_lists_the_known_ones() -> None:
    with pytest.raises(ScheduleError, match="@hourly"):
        parse_schedule("@fortnightly")


def test_find_cycle_returns_none_for_a_dag() -> None:
    assert find_cycle({"a": [], "b": ["a"], "c": ["a", "b"]}) is None


def test_flows_checked_with_their_templates_name_a_missing_one() -> None:
    objects = [flow(("prepare", []), ("train", ["prepare"])), template("prepare")]
    found = [str(p) for _, p in templates_missing_across(objects)]
    assert found == [
        "spec.flows[1].name: no JobTemplate 'train' among these files (the flow waits until one of that name "
        "exists in namespace default; add it, or fix the name)"
    ]
    assert templates_missing_across([*objects, template("train")]) == []
    # Checked without any template, the templates may already be in the cluster: nothing to say.
    assert templates_missing_across(objects[:1]) == []


def test_a_patch_is_partial_and_gets_no_defaults() -> None:
    obj = flow(("a", []))
    obj["spec"]["flows"][0]["patch"] = {"jobSpec": {"tasks": [{"name": "work", "replicas": 3}]}}
    assert lines(obj) == []
