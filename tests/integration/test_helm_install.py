"""The Helm chart's output installs on a real API server and runs a Job.

``helm template`` renders the chart with its defaults; the API server accepts every object in a server-side
dry run, then for real. The processes then run as the rendered Deployments say: their container args go
through our own command-line parser, their conf is the rendered ConfigMap's, and each runs under a token of
the rendered ServiceAccount with the rendered RBAC, so a Volcano Job reaching Completed proves the objects
work together. (No container runtime here, so the pods of the Deployments themselves never start; the
processes run in this test instead. Admission stays off in them: a webhook Service without endpoints would
stop every Volcano object in the shared cluster.)
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ctl_harness import task, vcjob, wait_for
from stopping import stop_within

from volcano_py.cli import controller as controller_cli
from volcano_py.cli import scheduler as scheduler_cli
from volcano_py.cli.main import build_parser
from volcano_py.controllers.operator import run_controller
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import JOBS, LEASES
from volcano_py.scheduler.runtime.runner import run_scheduler

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "volcano-py"
SYSTEM = "volcano-system"


def _rendered(helm: Path, out: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(helm), "template", "volcano", str(CHART), "-n", SYSTEM, "--include-crds"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    out.write_text(done.stdout)
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def _one(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    [found] = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def _args(objects: list[dict[str, Any]], deployment: str) -> Any:
    container = _one(objects, "Deployment", deployment)["spec"]["template"]["spec"]["containers"][0]
    return build_parser().parse_args(
        [a.replace("$(POD_NAME)", f"helm-{deployment}") for a in container["args"]]
    )


def _token_kubeconfig(cluster: Any, account: str, path: Path) -> str:
    token = cluster.kubectl("create", "token", account, "-n", SYSTEM, "--duration=1h").stdout.strip()
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    for user in config["users"]:
        user["user"] = {"token": token}
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.fixture
async def admin(cluster: Any) -> AsyncIterator[KubeClient]:
    api = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    yield api
    await api.close()


async def _phase(admin: KubeClient, namespace: str, name: str) -> str:
    body = await admin.get(JOBS.object_path(name, namespace))
    return str(((body.get("status") or {}).get("state") or {}).get("phase") or "")


async def _holder(admin: KubeClient, lease: str) -> str:
    try:
        body = await admin.get(LEASES.object_path(lease, SYSTEM))
    except ApiError as exc:
        if exc.not_found:
            return ""
        raise
    return str(body["spec"].get("holderIdentity") or "")


async def test_chart_output_installs_and_runs_a_job(
    cluster: Any, helm: Path, namespace: str, admin: KubeClient, tmp_path: Path
) -> None:
    manifest = tmp_path / "chart.yaml"
    objects = _rendered(helm, manifest)
    cluster.kubectl("create", "namespace", SYSTEM, check=False)  # `helm install --create-namespace`
    apply = ("apply", "--server-side", "--force-conflicts", "-f", str(manifest))

    dry = cluster.kubectl(*apply, "--dry-run=server", check=False)
    assert dry.returncode == 0, dry.stderr
    said = dry.stdout.splitlines()
    assert len(said) == len(objects) and all(line.endswith("(server dry run)") for line in said), said

    workloads = [o for o in objects if o["kind"] in ("Deployment", "Service")]
    try:
        real = cluster.kubectl(*apply, check=False)
        assert real.returncode == 0, real.stderr
        for obj in objects:
            ns = ["-n", obj["metadata"]["namespace"]] if "namespace" in obj["metadata"] else []
            cluster.kubectl("get", obj["kind"].lower(), obj["metadata"]["name"], *ns)

        scheduler_args, controller_args = (_args(objects, "volcano-scheduler"),
                                           _args(objects, "volcano-controllers"))  # fmt: skip
        conf = tmp_path / "volcano-scheduler.conf"
        configmap = _one(objects, "ConfigMap", "volcano-scheduler-configmap")
        conf.write_text(configmap["data"]["volcano-scheduler.conf"])
        scheduler_options = dataclasses.replace(
            scheduler_cli.options_from(scheduler_args),
            kubeconfig=_token_kubeconfig(cluster, "volcano-scheduler", tmp_path / "s.kc"),
            scheduler_conf=str(conf), metrics_host="127.0.0.1", metrics_port=0,
        )  # fmt: skip
        controller_options = dataclasses.replace(
            controller_cli.options_from(controller_args),
            kubeconfig=_token_kubeconfig(cluster, "volcano-controllers", tmp_path / "c.kc"),
            metrics_host="127.0.0.1", metrics_port=0, webhook_port=None,
        )  # fmt: skip
        for lease in (scheduler_options.lease_name, controller_options.lease_name):
            cluster.kubectl("delete", "lease", lease, "-n", SYSTEM, "--ignore-not-found")

        stop = asyncio.Event()
        processes = [
            asyncio.create_task(run_scheduler(scheduler_options, stop)),
            asyncio.create_task(run_controller(controller_options, stop)),
        ]
        try:
            await wait_for(
                "the rendered scheduler to lead",
                lambda: _is(admin, scheduler_options.lease_name, scheduler_options.identity),
                30,
            )
            job = vcjob("helm", task("worker", 2, complete_after="1s"), minAvailable=2)
            await admin.create(JOBS.collection_path(namespace), job)
            await wait_for("job helm to complete", lambda: _completed(admin, namespace), 90)
        finally:
            stop.set()
            await stop_within(processes, "the processes", 60)
        for process in processes:
            assert process.exception() is None, repr(process.exception())
    finally:
        # The Deployments' pods can never run here; remove them (and their Services), keep the shared rest.
        for obj in workloads:
            cluster.kubectl("delete", obj["kind"].lower(), obj["metadata"]["name"], "-n", SYSTEM,
                            "--ignore-not-found", "--wait=false", check=False)  # fmt: skip


async def _is(admin: KubeClient, lease: str, identity: str) -> bool:
    return await _holder(admin, lease) == identity


async def _completed(admin: KubeClient, namespace: str) -> bool:
    phase = await _phase(admin, namespace, "helm")
    if phase in ("Failed", "Aborted"):
        raise AssertionError(f"job helm ended {phase}")
    return phase == "Completed"
