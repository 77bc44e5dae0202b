"""mpi, pytorch, tensorflow, ray, hcclrank: the env, ports, commands and objects each framework reads."""

from __future__ import annotations

import json

import pytest
from plugin_builders import env_of, make_job, make_pod

from volcano_py.api import constants
from volcano_py.jobplugins import ApplyPolicy, JobPluginError, ObjectRef, build_plugins


def _pod(job: dict, task: str, index: int) -> dict:
    pod = make_pod(job, task, index)
    build_plugins(job).on_pod_create(job, pod, task, index)
    return pod


# --- mpi ----------------------------------------------------------------------------------------------------


def test_mpi_master_gets_worker_hosts_and_every_pod_opens_port_22() -> None:
    job = make_job("lm").task("master", 1, init=1).task("worker", 2).plugin("mpi").obj()
    master = _pod(job, "master", 0)
    for container in [*master["spec"]["containers"], *master["spec"]["initContainers"]]:
        assert env_of(container) == {"MPI_HOST": "lm-worker-0.lm,lm-worker-1.lm"}
        assert container["ports"] == [{"name": "mpijob-port", "containerPort": 22}]
    worker = _pod(job, "worker", 1)
    assert "env" not in worker["spec"]["containers"][0]
    assert worker["spec"]["containers"][0]["ports"] == [{"name": "mpijob-port", "containerPort": 22}]


def test_mpi_custom_task_names_and_port() -> None:
    job = (
        make_job("lm")
        .task("launcher", 1)
        .task("node", 1)
        .plugin("mpi", "--master=launcher", "--worker=node", "--port=5000")
        .obj()
    )
    launcher = _pod(job, "launcher", 0)
    assert env_of(launcher["spec"]["containers"][0]) == {"MPI_HOST": "lm-node-0.lm"}
    assert launcher["spec"]["containers"][0]["ports"] == [{"name": "mpijob-port", "containerPort": 5000}]


def test_mpi_keeps_a_port_the_user_already_declared() -> None:
    job = make_job("lm").task("master", 1).task("worker", 1).plugin("mpi").obj()
    job["spec"]["tasks"][1]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "ssh", "containerPort": 22}
    ]
    assert _pod(job, "worker", 0)["spec"]["containers"][0]["ports"] == [{"name": "ssh", "containerPort": 22}]


def test_mpi_without_master_task_is_an_error_naming_the_fix() -> None:
    job = make_job("lm").task("worker", 2).plugin("mpi").obj()
    with pytest.raises(JobPluginError) as err:
        build_plugins(job)
    assert str(err.value) == (
        "spec.tasks: the mpi plugin's master task 'master' was not found; "
        "add a task with that name or pass --master=<task name>"
    )


# --- pytorch ------------------------------------------------------------------------------------------------


def test_pytorch_master_and_worker_env() -> None:
    job = make_job("pt").task("master", 1).task("worker", 3).plugin("pytorch").obj()
    master = env_of(_pod(job, "master", 0)["spec"]["containers"][0])
    assert master == {"MASTER_ADDR": "pt-master-0.pt", "MASTER_PORT": "23456", "WORLD_SIZE": "4", "RANK": "0"}
    worker = _pod(job, "worker", 2)["spec"]["containers"][0]
    assert env_of(worker) == {
        "MASTER_ADDR": "pt-master-0.pt",
        "MASTER_PORT": "23456",
        "WORLD_SIZE": "4",
        "RANK": "3",
    }
    assert worker["ports"] == [{"name": "pytorchjob-port", "containerPort": 23456}]


def test_pytorch_other_tasks_get_rendezvous_but_no_rank() -> None:
    job = (
        make_job("pt")
        .task("master", 1)
        .task("worker", 1)
        .task("eval", 1)
        .plugin("pytorch", "--port=29500")
        .obj()
    )
    env = env_of(_pod(job, "eval", 0)["spec"]["containers"][0])
    assert env == {"MASTER_ADDR": "pt-master-0.pt", "MASTER_PORT": "29500", "WORLD_SIZE": "2"}


def test_pytorch_wait_for_master_init_container_only_on_workers() -> None:
    job = (
        make_job("pt")
        .task("master", 1)
        .task("worker", 1)
        .plugin(
            "pytorch", "--wait-master-enabled", "--wait-master-timeout=60", "--wait-master-image=alpine:3"
        )
        .obj()
    )
    worker = _pod(job, "worker", 0)
    (wait,) = worker["spec"]["initContainers"]
    assert wait["name"] == "wait-for-master"
    assert wait["image"] == "alpine:3"
    assert wait["command"][:2] == ["sh", "-c"]
    assert "nc -z pt-master-0.pt 23456" in wait["command"][2]
    assert "+ 60 ))" in wait["command"][2]
    assert "initContainers" not in _pod(job, "master", 0)["spec"]


def test_pytorch_without_master_task_leaves_pods_alone() -> None:
    job = make_job("pt").task("worker", 2).plugin("pytorch").obj()
    assert "env" not in _pod(job, "worker", 0)["spec"]["containers"][0]


# --- tensorflow ---------------------------------------------------------------------------------------------


def test_tf_config_lists_every_role_and_the_pods_own_task() -> None:
    job = make_job("tf").task("ps", 1).task("worker", 2).task("chief", 1).plugin("tensorflow").obj()
    raw = env_of(_pod(job, "worker", 1)["spec"]["containers"][0])["TF_CONFIG"]
    assert raw == (
        '{"cluster":{"ps":["tf-ps-0.tf:2222"],"worker":["tf-worker-0.tf:2222","tf-worker-1.tf:2222"],'
        '"chief":["tf-chief-0.tf:2222"]},"task":{"type":"worker","index":1}}'
    )
    chief = json.loads(env_of(_pod(job, "chief", 0)["spec"]["containers"][0])["TF_CONFIG"])
    assert chief["task"] == {"type": "chief", "index": 0}


def test_tf_renamed_roles_and_port() -> None:
    job = (
        make_job("tf")
        .task("params", 1)
        .task("trainer", 1)
        .plugin("tensorflow", "--ps=params", "--worker=trainer", "--port=3333")
        .obj()
    )
    config = json.loads(env_of(_pod(job, "params", 0)["spec"]["containers"][0])["TF_CONFIG"])
    assert config == {
        "cluster": {"ps": ["tf-params-0.tf:3333"], "worker": ["tf-trainer-0.tf:3333"]},
        "task": {"type": "ps", "index": 0},
    }


def test_tf_single_pod_job_gets_no_tf_config() -> None:
    job = make_job("tf").task("worker", 1).plugin("tensorflow").obj()
    assert "env" not in _pod(job, "worker", 0)["spec"]["containers"][0]


# --- ray ----------------------------------------------------------------------------------------------------


def test_ray_head_and_worker_commands_and_head_ports() -> None:
    job = make_job("rc").task("head", 1).task("worker", 2).plugin("ray").obj()
    head = _pod(job, "head", 0)["spec"]["containers"][0]
    assert head["command"] == [
        "sh",
        "-c",
        "ray start --head --block --dashboard-host=0.0.0.0 --port=6379 --dashboard-port=8265 "
        "--ray-client-server-port=10001",
    ]
    assert head["ports"] == [
        {"name": "gcs", "containerPort": 6379},
        {"name": "dashboard", "containerPort": 8265},
        {"name": "client-server", "containerPort": 10001},
    ]
    worker = _pod(job, "worker", 1)["spec"]["containers"][0]
    assert worker["command"] == ["sh", "-c", "ray start --block --address=rc-head-0.rc:6379"]


def test_ray_only_touches_the_named_containers() -> None:
    job = make_job("rc").task("head", 1, containers=2).task("worker", 1).plugin("ray").obj()
    sidecar = _pod(job, "head", 0)["spec"]["containers"][1]
    assert "command" not in sidecar and "ports" not in sidecar


def test_ray_head_service_selects_the_head_task() -> None:
    job = make_job("rc").task("head", 1).task("worker", 1).plugin("ray", "--dashboardPort=9000").obj()
    (svc,) = build_plugins(job).on_job_add(job)
    assert svc.policy is ApplyPolicy.CREATE
    assert svc.body["metadata"]["name"] == "rc-head-svc"
    assert svc.body["spec"]["selector"] == {
        constants.JOB_NAME_KEY: "rc",
        constants.JOB_NAMESPACE_KEY: "ns1",
        constants.TASK_SPEC_KEY: "head",
    }
    assert svc.body["spec"]["ports"][1] == {
        "name": "dashboard",
        "port": 9000,
        "targetPort": "dashboard",
        "protocol": "TCP",
    }
    assert build_plugins(job).on_job_delete(job) == [ObjectRef("v1", "Service", "ns1", "rc-head-svc")]


def test_ray_without_head_task_is_an_error() -> None:
    job = make_job("rc").task("worker", 1).plugin("ray").obj()
    with pytest.raises(JobPluginError, match=r"the ray plugin's head task 'head' was not found"):
        build_plugins(job)


# --- hcclrank -----------------------------------------------------------------------------------------------


def test_hcclrank_takes_rank_from_pytorch_env() -> None:
    job = make_job("npu").task("master", 1).task("worker", 2).plugin("pytorch").plugin("hcclrank").obj()
    assert _pod(job, "worker", 1)["metadata"]["annotations"]["hccl/rankIndex"] == "2"


def test_hcclrank_alone_numbers_workers_after_masters() -> None:
    job = make_job("npu").task("master", 2).task("worker", 2).plugin("hcclrank").obj()
    assert _pod(job, "master", 1)["metadata"]["annotations"]["hccl/rankIndex"] == "1"
    assert _pod(job, "worker", 1)["metadata"]["annotations"]["hccl/rankIndex"] == "3"


def test_tf_pinned_hostname_still_lists_one_entry_per_replica() -> None:
    job = make_job("tf").task("ps", 1).task("worker", 2, hostname="trainer").plugin("tensorflow").obj()
    config = json.loads(env_of(_pod(job, "ps", 0)["spec"]["containers"][0])["TF_CONFIG"])
    assert config["cluster"]["worker"] == ["trainer.tf:2222", "trainer.tf:2222"]
