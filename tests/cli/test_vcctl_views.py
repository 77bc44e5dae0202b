"""vcctl's objects and printouts, without a server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from volcano_py.cli.vcctl import build_parser, commands, objects, views
from volcano_py.cli.vcctl import main as vcctl_main
from volcano_py.cli.vcctl.render import human_duration
from volcano_py.forecast import Basis, Eta, Forecast
from volcano_py.kube.client import ApiError

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def test_run_flags_build_a_one_task_job_with_volcano_defaults() -> None:
    args = build_parser().parse_args(["job", "run", "-N", "demo", "-r", "4", "-m", "2"])
    job = objects.job_from_flags(
        name=args.name,
        namespace=args.namespace,
        image=args.image,
        min_available=args.min,
        replicas=args.replicas,
        requests=objects.parse_resource_list(args.requests, flag="--requests"),
        limits=objects.parse_resource_list(args.limits, flag="--limits"),
        scheduler=args.scheduler,
    )
    assert job["metadata"] == {"name": "demo", "namespace": "default"}
    assert job["spec"]["minAvailable"] == 2
    assert job["spec"]["schedulerName"] == "volcano"
    task = job["spec"]["tasks"][0]
    assert task["replicas"] == 4
    container = task["template"]["spec"]["containers"][0]
    assert container["image"] == "busybox"
    assert container["resources"]["requests"] == {"cpu": "1000m", "memory": "100Mi"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cpu", "--requests: 'cpu' is not <resource>=<quantity>"),
        ("cpu=1,memory=lots", "--requests: memory: 'lots' is not a Kubernetes quantity"),
        ("=1", "--requests: '=1' is not <resource>=<quantity>"),
    ],
)
def test_bad_resource_lists_name_the_flag(spec: str, message: str) -> None:
    with pytest.raises(objects.UsageError, match=message.replace("(", r"\(")):
        objects.parse_resource_list(spec, flag="--requests")


def test_run_without_a_name_says_which_flag_is_missing() -> None:
    with pytest.raises(objects.UsageError, match="--name: job name cannot be left blank"):
        objects.job_from_flags(
            name="", namespace="default", image="busybox", min_available=1, replicas=1,
            requests={}, limits={}, scheduler="volcano",
        )  # fmt: skip


def test_min_above_replicas_is_refused() -> None:
    with pytest.raises(objects.UsageError, match=r"--min: must be between 0 and --replicas \(2\), got 3"):
        objects.job_from_flags(
            name="x", namespace="default", image="busybox", min_available=3, replicas=2,
            requests={}, limits={}, scheduler="volcano",
        )  # fmt: skip


def test_commands_are_owned_by_their_target_like_volcanos() -> None:
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j1", "uid": "u-1"}}
    cmd = objects.command_for(job, action="AbortJob", namespace="team-a")
    assert cmd["metadata"]["generateName"] == "j1-abortjob-"
    assert cmd["metadata"]["namespace"] == "team-a"
    assert cmd["action"] == "AbortJob"
    assert cmd["target"]["uid"] == "u-1"
    assert cmd["metadata"]["ownerReferences"] == [cmd["target"]]


def _job(name: str, phase: str, **status: int) -> dict[str, object]:
    return {
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-11-30T11:00:00Z"},
        "spec": {"minAvailable": 2, "tasks": [{"name": "w", "replicas": 3}]},
        "status": {"state": {"phase": phase}, "minAvailable": 2, **status},
    }


def test_job_list_has_volcanos_columns() -> None:
    out = views.job_list([_job("train", "Running", running=3)], all_namespaces=False)
    header, row = out.splitlines()
    assert header.split() == list(views.JOB_LIST_HEADERS)
    assert row.split() == ["train", "2026-11-30", "Running", "Batch", "3", "2", "0", "3", "0", "0", "0", "0"]
    assert views.job_list([], all_namespaces=False) == "No resources found\n"
    assert views.job_list([_job("a", "Pending")], all_namespaces=True).splitlines()[1].startswith("ns ")


def test_why_prints_the_schedulers_explanation() -> None:
    pg = {
        "metadata": {"name": "train-u1"},
        "spec": {"queue": "team-a"},
        "status": {
            "phase": "Inqueue",
            "conditions": [
                {
                    "type": "Unschedulable",
                    "status": "True",
                    "lastTransitionTime": "2026-11-30T11:59:00Z",
                    "message": "3/8 tasks unschedulable: 5 nodes insufficient nvidia.com/gpu",
                }
            ],
        },
    }
    out = views.why(_job("train", "Pending"), pg, [], NOW)
    assert "PodGroup train-u1: phase Inqueue, queue team-a" in out
    assert "Why pending: 3/8 tasks unschedulable: 5 nodes insufficient nvidia.com/gpu" in out


def test_why_without_podgroup_points_at_the_controller() -> None:
    assert "No PodGroup yet" in views.why(_job("train", "Pending"), None, [], NOW)


def test_queue_list() -> None:
    queues = [
        {"metadata": {"name": "team-a"}, "spec": {"weight": 3}, "status": {"state": "Open", "running": 2}}
    ]
    header, row = views.queue_list(queues).splitlines()
    assert header.split() == list(views.QUEUE_HEADERS)
    assert row.split() == ["team-a", "3", "Open", "root", "0", "0", "2", "0", "0"]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(5, "5s"), (119, "119s"), (250, "4m10s"), (3600, "60m"), (4 * 3600, "4h"), (50 * 3600, "2d2h")],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


def test_queue_object_refuses_bad_weight_and_state() -> None:
    with pytest.raises(objects.UsageError, match="--weight: must be a positive integer, got 0"):
        objects.queue_object(name="q", weight=0, state="Open")
    with pytest.raises(objects.UsageError, match="--state: must be Open or Closed, got 'Closing'"):
        objects.queue_object(name="q", weight=1, state="Closing")


def test_queue_get_lists_waiting_jobs_in_order_with_their_estimated_start() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    etas = {
        "default/a-u1": Eta(
            "default/a-u1", "q", 1, 2, now + timedelta(minutes=9), Basis.DECLARED, shown="default/a"
        ),
        "default/b": Eta(
            "default/b", "q", 2, 2, None, Basis.UNKNOWN, "no start within the horizon (7d ahead)"
        ),
        "default/c": Eta("default/c", "other", 1, 1, now, Basis.NOW),
    }
    text = views.queue_forecast(Forecast(now, etas), "q", "the built-in default conf")
    assert text.splitlines()[1:] == [
        "Waiting jobs in the scheduler's order, estimated starts from sessions of the built-in default conf "
        "run forward:",
        "Position   Job         Estimated start                          Basis",
        "1          default/a   in 9m (2026-01-01T00:09:00Z)             declared",
        "2          default/b   no start within the horizon (7d ahead)   unknown",
    ]
    assert views.queue_forecast(Forecast(now, {}), "q", "x") == "\nNo job waits in queue q.\n"


class _QueueOnly:
    """An API that lets the user read Queues and nothing else (RBAC as Volcano's vcctl needs it)."""

    async def get(self, path: str, **_params: Any) -> dict[str, Any]:
        if path.endswith("/queues/q"):
            return {"metadata": {"name": "q"}, "spec": {"weight": 1}, "status": {"state": "Open"}}
        raise ApiError(403, "Forbidden", f"cannot list {path}")

    async def close(self) -> None:
        pass


def test_queue_get_without_rights_to_read_the_cluster_prints_the_table_and_says_why_no_forecast(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def client(_args: object) -> _QueueOnly:
        return _QueueOnly()

    monkeypatch.setattr(commands, "_client", client)
    assert vcctl_main(["queue", "get", "-n", "q", "-k", "/nonexistent"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:3] == ["q", "1", "Open"]
    assert out[3] == ("No forecast of its waiting jobs: cannot read the cluster (cannot list /api/v1/nodes)")


def test_why_shows_that_the_scheduler_moved_the_jobs_pods() -> None:
    pg = {"metadata": {"name": "filler"}, "spec": {"queue": "default"}, "status": {"phase": "Running"}}
    moved = {
        "type": "Normal",
        "reason": "Consolidated",
        "lastTimestamp": "2026-11-30T11:58:00Z",
        "message": "1 pod moved to make room for PodGroup default/big: filler-0",
    }
    out = views.why(_job("filler", "Running"), pg, [moved], NOW)
    assert "Consolidated  2m ago  1 pod moved to make room for PodGroup default/big: filler-0" in out


def test_why_of_an_agent_schedulers_pod_shows_what_its_scheduler_wrote() -> None:
    pod = {
        "metadata": {
            "name": "sandbox-1",
            "namespace": "ns",
            "annotations": {"scheduling.volcano.sh/queue-name": "agents"},
        },
        "spec": {"schedulerName": "agent-scheduler"},
        "status": {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/4 nodes are available: 4 nodes do not match nodeSelector gpu=a100",
                }
            ]
        },
    }
    event = {
        "reason": "FailedScheduling",
        "type": "Warning",
        "message": "0/4 nodes are available: 4 nodes do not match nodeSelector gpu=a100",
        "lastTimestamp": "2026-01-01T00:00:00Z",
        "count": 2,
    }
    text = views.pod_why(pod, [event], datetime(2026, 1, 1, 0, 1, tzinfo=UTC))
    assert text.splitlines()[0] == "Pod ns/sandbox-1: scheduler agent-scheduler, queue agents, not bound"
    assert "Unschedulable: 0/4 nodes are available: 4 nodes do not match nodeSelector gpu=a100" in text
    assert "Recent scheduling events:" in text
