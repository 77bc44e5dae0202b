"""MPI, PyTorch and TensorFlow Jobs through the real operator and scheduler: plugins applied, Completed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ctl_harness import Env, env, task, vcjob, wait_for

from volcano_py.api import constants as c
from volcano_py.kube.client import ApiError

pytestmark = pytest.mark.integration
__all__ = ["env"]


def _env(pod: dict[str, Any]) -> dict[str, Any]:
    container = pod["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


async def _get(env: Env, path: str) -> dict[str, Any]:
    found: dict[str, Any] = await env.api.get(path)
    return found


async def test_mpi_job_runs_to_completed_with_hosts_and_ssh(env: Env) -> None:
    body = vcjob(
        "mpi",
        task("master", 1, complete_after="4s"),
        task("worker", 2, complete_after="4s"),
        plugins={"mpi": [], "svc": [], "ssh": []},
    )
    await env.create_job(body)
    await env.wait_phase("mpi", "Running")
    pods = {p["metadata"]["name"]: p for p in await env.pods("mpi")}
    master = pods["mpi-master-0"]
    assert _env(master)["MPI_HOST"] == "mpi-worker-0.mpi,mpi-worker-1.mpi"
    assert master["spec"]["subdomain"] == "mpi"
    assert {v["name"] for v in master["spec"]["volumes"]} >= {"mpi-svc", "mpi-ssh"}
    service = await _get(env, f"/api/v1/namespaces/{env.ns}/services/mpi")
    assert service["spec"]["clusterIP"] == "None"
    await _get(env, f"/api/v1/namespaces/{env.ns}/secrets/mpi-ssh")
    job = await env.wait_phase("mpi", "Completed")
    assert job["status"]["succeeded"] == 3

    async def released() -> bool:
        # A finished Job gives back what its plugins made, as Volcano's OnJobDelete does.
        for path in ("services/mpi", "configmaps/mpi-svc", "secrets/mpi-ssh"):
            try:
                await env.api.get(f"/api/v1/namespaces/{env.ns}/{path}")
                return False
            except ApiError as exc:
                if not exc.not_found:
                    raise
        return True

    await wait_for("the plugin objects of the completed Job to be deleted", released)


async def test_pytorch_job_runs_to_completed_with_rendezvous_env(env: Env) -> None:
    body = vcjob(
        "pt",
        task("master", 1, complete_after="4s"),
        task("worker", 2, complete_after="4s"),
        plugins={"pytorch": ["--port=29500"], "svc": []},
    )
    await env.create_job(body)
    await env.wait_phase("pt", "Running")
    pods = {p["metadata"]["name"]: p for p in await env.pods("pt")}
    worker_env = _env(pods["pt-worker-1"])
    assert (
        worker_env["MASTER_ADDR"],
        worker_env["MASTER_PORT"],
        worker_env["WORLD_SIZE"],
        worker_env["RANK"],
    ) == (
        "pt-master-0.pt",
        "29500",
        "3",
        "2",
    )
    job = await env.wait_phase("pt", "Completed")
    assert job["status"]["succeeded"] == 3


async def test_tensorflow_job_runs_to_completed_with_tf_config(env: Env) -> None:
    body = vcjob(
        "tf",
        task("ps", 1, complete_after="4s"),
        task("worker", 2, complete_after="4s"),
        plugins={"tensorflow": [], "svc": []},
    )
    await env.create_job(body)
    await env.wait_phase("tf", "Running")
    pods = {p["metadata"]["name"]: p for p in await env.pods("tf")}
    config = json.loads(str(_env(pods["tf-worker-1"])["TF_CONFIG"]))
    assert config == {
        "cluster": {"ps": ["tf-ps-0.tf:2222"], "worker": ["tf-worker-0.tf:2222", "tf-worker-1.tf:2222"]},
        "task": {"type": "worker", "index": 1},
    }
    job = await env.wait_phase("tf", "Completed")
    assert job["status"]["succeeded"] == 3
    assert c.JOB_NAME_KEY in pods["tf-ps-0"]["metadata"]["labels"]


async def test_svc_hosts_follow_a_scale_down_to_zero_and_back(env: Env) -> None:
    # Volcano's jobp e2e "Scale down" and "Scale down to zero and scale up": the hosts file is rewritten on
    # every update of the Job, so the pods mounting it see the new size.
    await env.create_job(vcjob("sd", task("default", 2), minAvailable=2, plugins={"svc": []}))
    await env.wait_phase("sd", "Running")
    path = f"/api/v1/namespaces/{env.ns}/configmaps/sd-svc"
    assert (await _get(env, path))["data"]["VC_DEFAULT_NUM"] == "2"
    for replicas, hosts in ((1, ["sd-default-0.sd"]), (0, []), (2, ["sd-default-0.sd", "sd-default-1.sd"])):
        scaled = {
            "spec": {"minAvailable": replicas, "tasks": [task("default", replicas, min_available=replicas)]}
        }
        await env.api.patch(f"/apis/batch.volcano.sh/v1alpha1/namespaces/{env.ns}/jobs/sd", scaled)

        async def rewritten(replicas: int = replicas) -> dict[str, str] | None:
            data: dict[str, str] = (await _get(env, path)).get("data") or {}
            return data if data.get("VC_DEFAULT_NUM") == str(replicas) else None

        assert await wait_for(f"the hosts ConfigMap to list {replicas} hosts", rewritten, 30) == {
            "default.host": "\n".join(hosts),
            "VC_DEFAULT_HOSTS": ",".join(hosts),
            "VC_DEFAULT_NUM": str(replicas),
        }
