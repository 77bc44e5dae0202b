"""``vcctl job run/list/view/suspend/resume/delete/why`` on the real control plane: output and API objects.

vcctl runs its own event loop (``asyncio.run``), so async tests call it in a worker thread. Suspend and resume
only write Commands; their effect on the Job (Aborted, then running again) needs the controller and the
scheduler, which the ``env`` fixture runs in-process for the test's namespace.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from ctl_harness import Env, env, task, vcjob, wait_for

from volcano_py.cli.vcctl import main as vcctl
from volcano_py.kube.kinds import PODS

pytestmark = pytest.mark.integration
__all__ = ["env"]


def _get(cluster: Any, kind: str, name: str, namespace: str) -> dict[str, Any] | None:
    done = cluster.kubectl("get", kind, name, "-n", namespace, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def _commands(cluster: Any, namespace: str) -> list[dict[str, Any]]:
    listed = cluster.kubectl("get", "commands.bus.volcano.sh", "-n", namespace, "-o", "json").stdout
    items: list[dict[str, Any]] = json.loads(listed)["items"]
    return items


def test_run_list_view_delete(
    cluster: Any, namespace: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = ["-k", str(cluster.kubeconfig)]
    run = ["job", "run", "-N", "flags", "-n", namespace, "-r", "3", "-m", "2", "-i", "nginx",
           "-R", "cpu=250m,memory=64Mi", "-L", "cpu=500m,memory=128Mi", "-q", "default", *kc]  # fmt: skip
    assert vcctl(run) == 0
    assert capsys.readouterr().out == "run job flags successfully\n"
    job = _get(cluster, "jobs.batch.volcano.sh", "flags", namespace)
    assert job is not None
    spec = job["spec"]
    assert (spec["minAvailable"], spec["queue"], spec["schedulerName"]) == (2, "default", "volcano")
    [only] = spec["tasks"]
    assert only["replicas"] == 3
    [container] = only["template"]["spec"]["containers"]
    assert container["image"] == "nginx"
    assert container["resources"] == {"requests": {"cpu": "250m", "memory": "64Mi"},
                                      "limits": {"cpu": "500m", "memory": "128Mi"}}  # fmt: skip

    manifest = vcjob("fromfile", task("worker", 2))
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(manifest))
    assert vcctl(["job", "run", "-f", str(path), "-n", namespace, *kc]) == 0
    assert capsys.readouterr().out == "run job fromfile successfully\n"
    assert _get(cluster, "jobs.batch.volcano.sh", "fromfile", namespace) is not None

    assert vcctl(["job", "list", "-n", namespace, *kc]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert rows[0][0] == "Name"
    assert sorted(r[0] for r in rows[1:]) == ["flags", "fromfile"]
    assert vcctl(["job", "list", "-n", namespace, "--selector", "from", *kc]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == ["fromfile"]
    assert vcctl(["job", "list", "-n", namespace, "-S", "other-scheduler", *kc]) == 0
    assert capsys.readouterr().out == "No resources found\n"
    assert vcctl(["job", "list", "--all-namespaces", "--selector", "flags", *kc]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert rows[0][:2] == ["Namespace", "Name"] and [namespace, "flags"] in [r[:2] for r in rows[1:]]

    assert vcctl(["job", "view", "-N", "flags", "-n", namespace, *kc]) == 0
    view = capsys.readouterr().out
    assert "Name:         flags\n" in view and f"Namespace:    {namespace}\n" in view
    assert "Min Available: 2\n" in view and "Queue:        default\n" in view

    assert vcctl(["job", "delete", "-N", "flags", "-n", namespace, *kc]) == 0
    assert capsys.readouterr().out == "delete job flags successfully\n"
    cluster.wait_for(
        "job flags to be gone", lambda: _get(cluster, "jobs.batch.volcano.sh", "flags", namespace) is None
    )
    assert vcctl(["job", "view", "-N", "flags", "-n", namespace, *kc]) == 1
    assert capsys.readouterr().err == f"Error: job {namespace}/flags not found\n"
    assert vcctl(["job", "delete", "-n", namespace, *kc]) == 1
    assert "--name" in capsys.readouterr().err


def test_suspend_and_resume_write_commands_owned_by_the_job(
    cluster: Any, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = ["-k", str(cluster.kubeconfig)]
    assert vcctl(["job", "run", "-N", "cmd", "-n", namespace, *kc]) == 0
    job = _get(cluster, "jobs.batch.volcano.sh", "cmd", namespace)
    assert job is not None
    assert vcctl(["job", "suspend", "-N", "cmd", "-n", namespace, *kc]) == 0
    assert vcctl(["job", "resume", "-N", "cmd", "-n", namespace, *kc]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "suspend job cmd successfully",
        "resume job cmd successfully",
    ]
    commands = _commands(cluster, namespace)
    assert sorted(c["action"] for c in commands) == ["AbortJob", "ResumeJob"]
    owner = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": "cmd",
        "uid": job["metadata"]["uid"],
    }
    for command in commands:
        assert owner.items() <= command["target"].items()
        assert [owner.items() <= ref.items() for ref in command["metadata"]["ownerReferences"]] == [True]
    assert vcctl(["job", "suspend", "-N", "missing", "-n", namespace, *kc]) == 1
    assert capsys.readouterr().err == f"Error: job {namespace}/missing not found\n"


async def _vcctl(*argv: str) -> int:
    return await asyncio.to_thread(vcctl, list(argv))


# The in-process scheduler and controller log to the same stdout; vcctl's lines are the others.
_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[")


def _printed(capsys: pytest.CaptureFixture[str]) -> str:
    return "".join(
        line for line in capsys.readouterr().out.splitlines(keepends=True) if not _LOG_LINE.match(line)
    )


async def test_suspend_aborts_and_resume_runs_again(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    kc = ("-k", env.kubeconfig)
    await env.create_job(vcjob("long", task("worker", 2)))  # KWOK keeps pods without annotations Running
    await env.wait_phase("long", "Running")
    assert await _vcctl("job", "suspend", "-N", "long", "-n", env.ns, *kc) == 0
    await env.wait_phase("long", "Aborted")
    assert await _vcctl("job", "view", "-N", "long", "-n", env.ns, *kc) == 0
    assert "Phase:        Aborted\n" in _printed(capsys)
    assert await _vcctl("job", "resume", "-N", "long", "-n", env.ns, *kc) == 0
    await env.wait_phase("long", "Running")
    assert await _vcctl("job", "list", "-n", env.ns, *kc) == 0
    row = next(line.split() for line in _printed(capsys).splitlines() if line.split()[:1] == ["long"])
    assert "Running" in row
    assert await env.commands() == []  # the controller consumed both, once each


async def test_why_explains_a_pending_job_and_a_placed_one(
    env: Env, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = ("-k", env.kubeconfig)
    # 64 CPUs per pod: the queue and the cluster (8 x 32 CPUs) admit it, but no single node fits one pod.
    assert await _vcctl("job", "run", "-N", "huge", "-n", env.ns, "-R", "cpu=64,memory=1Gi",
                        "-L", "cpu=64,memory=1Gi", *kc) == 0  # fmt: skip
    capsys.readouterr()

    async def explained() -> str | None:
        assert await _vcctl("job", "why", "huge", "-n", env.ns, *kc) == 0
        out = _printed(capsys)
        return out if "Why pending:" in out else None

    out = await wait_for("vcctl job why to give a reason", explained, 60)
    lines = out.splitlines()
    assert lines[0] == f"Job {env.ns}/huge: phase Pending"
    assert lines[1].startswith("PodGroup huge-") and "queue default" in lines[1]
    assert "cpu" in out.lower()
    # The what-if: no number of nodes like these helps, since none can hold one 64-CPU pod.
    assert "What would make it run" in out
    assert "No node in the cluster is large enough for one of its pods" in out

    await env.create_job(vcjob("small", task("worker", 1)))
    await env.wait_phase("small", "Running")
    assert await _vcctl("job", "why", "-N", "small", "-n", env.ns, *kc) == 0
    placed = _printed(capsys).splitlines()
    assert "Not pending: the scheduler placed this job." in placed
    assert placed[-1] == "  Nothing: it is not waiting (its gang already holds minAvailable tasks)"
    assert await _vcctl("job", "why", "nothing", "-n", env.ns, *kc) == 1
    assert capsys.readouterr().err == f"Error: job, podgroup or pod {env.ns}/nothing not found\n"
    # A pod with neither Job nor PodGroup (an agent scheduler's; none runs here): what its scheduler said.
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "sandbox", "annotations": {"scheduling.volcano.sh/queue-name": "default"}},
        "spec": {"schedulerName": "agent-scheduler", "containers": [{"name": "c", "image": "busybox"}]},
    }
    await env.api.create(PODS.collection_path(env.ns), pod)
    assert await _vcctl("job", "why", "sandbox", "-n", env.ns, *kc) == 0
    assert _printed(capsys).splitlines()[0] == (
        f"Pod {env.ns}/sandbox: scheduler agent-scheduler, queue default, not bound"
    )
