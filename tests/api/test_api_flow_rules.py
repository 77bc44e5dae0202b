"""JobFlow, JobTemplate and CronJob: what `volcano-py validate` and admission say about bad ones."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from volcano_py.api.cron import ScheduleError, parse_schedule
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
    ("obj", "expected"),
    [
        pytest.param(
            flow(("a", ["c"]), ("b", ["a"]), ("c", ["b"])),
            "spec.flows[0].dependsOn.targets: the flow is not a DAG: a -> c -> b -> a depend on each other "
            "in a cycle (remove one of these dependencies)",
            id="cycle",
        ),
        pytest.param(
            flow(("a", ["a"])),
            "spec.flows[0].dependsOn.targets: the flow is not a DAG: a -> a",
            id="self-dependency",
        ),
        pytest.param(
            flow(("a", []), ("b", ["x"])),
            "spec.flows[1].dependsOn.targets[0]: 'x' is not a step of this flow (name one of: a, b)",
            id="unknown-target",
        ),
        pytest.param(
            flow(("a", []), ("a", [])),
            "spec.flows[1].name: 'a' is also spec.flows[0]",
            id="duplicate-step",
        ),
        pytest.param(flow(), "spec.flows: is empty", id="no-steps"),
        pytest.param(
            flow(("a", []), jobRetainPolicy="keep"),
            "spec.jobRetainPolicy: 'keep' is not allowed (use one of 'retain', 'delete')",
            id="retain-policy",
        ),
        pytest.param(
            {**flow(("a", [])), "spec": {"flows": 3}}, "spec.flows: expected a list", id="garbage-spec"
        ),
        pytest.param(
            flow(("s" * 40, []), name="f" * 30),
            "spec.flows[0].name: the Job '" + "f" * 30 + "-" + "s" * 40 + "' would be longer than 63",
            id="job-name-too-long",
        ),
        pytest.param(
            cronjob("61 * * * *"), "spec.schedule: '61 * * * *' is not a valid cron expression", id="bad-cron"
        ),
        pytest.param(cronjob("* * * * * *"), "spec.schedule: '* * * * * *' has 6 fields", id="six-fields"),
        pytest.param(cronjob("0 0 31 2 *"), "spec.schedule: '0 0 31 2 *' never fires", id="never"),
        pytest.param(
            cronjob("TZ=UTC 0 * * * *"), "spec.schedule: 'TZ=UTC 0 * * * *' carries a TZ", id="tz-prefix"
        ),
        pytest.param(
            cronjob(timeZone="Mars/Olympus"), "spec.timeZone: unknown time zone 'Mars/Olympus'", id="bad-zone"
        ),
        pytest.param(cronjob(timeZone="Local"), "spec.timeZone: 'Local' is not allowed", id="local-zone"),
        pytest.param(
            cronjob(name="n" * 53), "metadata.name: '" + "n" * 53 + "' is longer than 52", id="long-name"
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
    ["*/5 * * * *", "@hourly", "@every 90s", "0 9 * * 1-5", "30 6-16/4 * * *"],
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


def test_unknown_descriptor_lists_the_known_ones() -> None:
    with pytest.raises(ScheduleError, match="@hourly"):
        parse_schedule("@fortnightly")


def test_find_cycle_returns_none_for_a_dag() -> None:
    assert find_cycle({"a": [], "b": ["a"], "c": ["a", "b"]}) is None


def test_flows_checked_with_their_templates_name_a_missing_one() -> None:
    objects = [flow(("prepare", []), ("train", ["prepare"])), template("prepare")]
    found = [str(p) for _, p in templates_missing_across(objects)]
    assert found == [
        "spec.flows[1].name: no JobTemplate 'train' in namespace default "
        "(create the JobTemplate first, or fix the name)"
    ]
    assert templates_missing_across([*objects, template("train")]) == []
    # Checked without any template, the templates may already be in the cluster: nothing to say.
    assert templates_missing_across(objects[:1]) == []


def test_a_patch_is_partial_and_gets_no_defaults() -> None:
    obj = flow(("a", []))
    obj["spec"]["flows"][0]["patch"] = {"jobSpec": {"tasks": [{"name": "work", "replicas": 3}]}}
    assert lines(obj) == []
