"""vcctl's flow, cronjob and pod printouts and the one-verb aliases' flags, without a server."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

import pytest

from volcano_py.cli.vcctl import aliases, build_parser
from volcano_py.cli.vcctl.flows import cronjob_rows, pod_rows, pod_status

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def test_cronjob_rows_show_schedule_zone_suspend_active_and_last_run() -> None:
    cron = {
        "metadata": {"name": "nightly", "namespace": "ns", "creationTimestamp": "2026-11-30T10:00:00Z"},
        "spec": {"schedule": "0 3 * * *", "timeZone": "Europe/Paris", "suspend": True},
        "status": {"active": [{"name": "nightly-1"}], "lastScheduleTime": "2026-11-30T11:59:00Z"},
    }
    header, row = cronjob_rows([cron], all_namespaces=True, now=NOW).splitlines()
    assert header.split() == [
        "Namespace",
        "Name",
        "Schedule",
        "TimeZone",
        "Suspend",
        "Active",
        "LastSchedule",
        "Age",
    ]
    assert row.split() == [
        "ns",
        "nightly",
        "0",
        "3",
        "*",
        "*",
        "*",
        "Europe/Paris",
        "True",
        "1",
        "60s",
        "120m",
    ]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        pytest.param({"phase": "Pending"}, ("0/1", "Pending", 0), id="pending"),
        pytest.param(
            {
                "phase": "Running",
                "containerStatuses": [{"ready": True, "restartCount": 2, "state": {"running": {}}}],
            },
            ("1/1", "Running", 2),
            id="running",
        ),
        pytest.param(
            {"phase": "Succeeded", "containerStatuses": [{"state": {"terminated": {"reason": "Completed"}}}]},
            ("0/1", "Completed", 0),
            id="completed",
        ),
        pytest.param(
            {
                "phase": "Pending",
                "containerStatuses": [{"state": {"waiting": {"reason": "ImagePullBackOff"}}}],
            },
            ("0/1", "ImagePullBackOff", 0),
            id="waiting",
        ),
    ],
)
def test_pod_status_reads_like_kubectl(status: dict[str, Any], expected: tuple[str, str, int]) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}, "status": status}
    assert pod_status(pod) == expected


def test_pod_rows_and_empty_listing() -> None:
    pod = {"metadata": {"name": "job-worker-0", "creationTimestamp": "2026-11-30T11:59:30Z"},
           "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending"}}  # fmt: skip
    assert pod_rows([pod], all_namespaces=False, now=NOW).splitlines()[1].split() == [
        "job-worker-0", "0/1", "Pending", "0", "30s"
    ]  # fmt: skip
    assert pod_rows([], all_namespaces=False, now=NOW) == "No resources found\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["jobflow", "create", "-f", "flow.yaml"],
        ["jobflow", "describe", "-N", "f", "-o", "json"],
        ["jobtemplate", "delete", "-f", "t.yaml"],
        ["cronjob", "suspend", "-N", "nightly", "-n", "ns"],
        ["pod", "list", "-j", "job", "-q", "default", "--all-namespaces"],
    ],
)
def test_new_verbs_parse(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert (args.group, args.verb) == (argv[0], argv[1])


def _capture(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, argparse.Namespace]]:
    seen: list[tuple[str, argparse.Namespace]] = []
    monkeypatch.setattr(aliases, "run", lambda handler, args: seen.append((handler.__name__, args)) or 0)
    return seen


def test_aliases_take_volcanos_flags_and_run_the_vcctl_verb(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _capture(monkeypatch)
    aliases.vsub(["-n", "demo", "-N", "team", "-r", "3", "-i", "nginx"])
    aliases.vjobs(["-N", "team"])
    aliases.vjobs(["-N", "team", "-n", "demo"])
    aliases.vqueues([])
    aliases.vcancel(["-N", "team", "-n", "demo"])
    aliases.vsuspend(["-n", "demo"])
    aliases.vresume(["-n", "demo"])
    assert [name for name, _ in seen] == [
        "job_run", "job_list", "job_view", "queue_list", "job_delete", "job_suspend", "job_resume"
    ]  # fmt: skip
    sub = seen[0][1]
    assert (sub.name, sub.namespace, sub.replicas, sub.image, sub.filename) == (
        "demo",
        "team",
        3,
        "nginx",
        "",
    )
    assert (seen[4][1].namespace, seen[4][1].name) == ("team", "demo")
    assert seen[5][1].namespace == "default"
