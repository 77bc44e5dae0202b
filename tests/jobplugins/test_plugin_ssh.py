"""ssh: one key pair per Job in a Secret, mounted into every container, and an ssh config naming every pod."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import serialization
from plugin_builders import fixed_keys, make_job, make_pod

from volcano_py.jobplugins import ApplyPolicy, JobPluginError, ObjectRef, build_plugins
from volcano_py.jobplugins.ssh import generate_rsa_key_pair


def _secret_data(job: dict) -> dict[str, str]:
    (secret,) = build_plugins(job, ssh_keygen=fixed_keys).on_job_add(job)
    assert secret.policy is ApplyPolicy.CREATE
    assert secret.body["metadata"]["name"] == f"{job['metadata']['name']}-ssh"
    return {k: base64.b64decode(v).decode() for k, v in secret.body["data"].items()}


def test_secret_holds_key_pair_authorized_keys_and_config_for_every_pod() -> None:
    job = make_job("mpi").task("master", 1).task("worker", 2).plugin("ssh").obj()
    data = _secret_data(job)
    private, public = fixed_keys()
    assert data["id_rsa"] == private.decode()
    assert data["id_rsa.pub"] == data["authorized_keys"] == public.decode()
    assert data["config"] == (
        "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
        "Host mpi-master-0\n  HostName mpi-master-0.mpi\n  Port 22\n"
        "Host mpi-worker-0\n  HostName mpi-worker-0.mpi\n  Port 22\n"
        "Host mpi-worker-1\n  HostName mpi-worker-1.mpi\n  Port 22\n"
    )


def test_ssh_port_argument_goes_into_the_config() -> None:
    job = make_job("j").task("w", 1).plugin("ssh", "--ssh-port=2222").obj()
    assert "  Port 2222\n" in _secret_data(job)["config"]


def test_generated_key_pair_matches() -> None:
    private, public = generate_rsa_key_pair()
    key = serialization.load_pem_private_key(private, password=None)
    derived = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert public == derived + b"\n"
    assert private.startswith(b"-----BEGIN RSA PRIVATE KEY-----")


def test_user_provided_private_key_derives_the_public_key() -> None:
    private, public = generate_rsa_key_pair()
    job = make_job("j").task("w", 1).plugin("ssh", f"--ssh-private-key={private.decode()}").obj()
    data = _secret_data(job)
    assert data["id_rsa"] == private.decode()
    assert data["authorized_keys"] == public.decode()


def test_mount_at_root_ssh_with_mode_0600_in_every_container() -> None:
    job = make_job("j").task("w", 2, containers=2, init=1).plugin("ssh").obj()
    pod = make_pod(job, "w", 0)
    build_plugins(job).on_pod_create(job, pod, "w", 0)
    (volume,) = pod["spec"]["volumes"]
    assert volume["secret"]["secretName"] == "j-ssh"
    assert volume["secret"]["defaultMode"] == 0o600
    assert [item["path"] for item in volume["secret"]["items"]] == [
        ".ssh/id_rsa",
        ".ssh/id_rsa.pub",
        ".ssh/authorized_keys",
        ".ssh/config",
    ]
    for container in [*pod["spec"]["containers"], *pod["spec"]["initContainers"]]:
        assert container["volumeMounts"] == [{"name": "j-ssh", "mountPath": "/root/.ssh", "subPath": ".ssh"}]


def test_non_root_path_is_readable_0644() -> None:
    job = make_job("j").task("w", 1).plugin("ssh", "--ssh-key-file-path=/home/mpi/.ssh").obj()
    pod = make_pod(job, "w", 0)
    build_plugins(job).on_pod_create(job, pod, "w", 0)
    assert pod["spec"]["volumes"][0]["secret"]["defaultMode"] == 0o644
    assert pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] == "/home/mpi/.ssh"


def test_legacy_no_root_selects_etc_volcano() -> None:
    job = make_job("j").task("w", 1).plugin("ssh", "--no-root").obj()
    pod = make_pod(job, "w", 0)
    build_plugins(job).on_pod_create(job, pod, "w", 0)
    assert pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] == "/etc/volcano/.ssh"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--ssh-port=70000"], "spec.plugins.ssh: --ssh-port=70000 is not a port; use 1-65535", id="port"
        ),
        pytest.param(
            ["--ssh-key-file-path=keys"],
            "spec.plugins.ssh: --ssh-key-file-path='keys' must be an absolute path",
            id="relative-path",
        ),
        pytest.param(
            ["--ssh-public-key=ssh-rsa AAA"],
            "spec.plugins.ssh: --ssh-public-key needs --ssh-private-key too; give both or neither",
            id="public-only",
        ),
    ],
)
def test_bad_arguments_are_rejected(args: list[str], message: str) -> None:
    job = make_job("j").task("w", 1).plugin("ssh", *args).obj()
    with pytest.raises(JobPluginError) as err:
        build_plugins(job)
    assert str(err.value) == message


def test_delete_removes_the_secret() -> None:
    job = make_job("j").task("w", 1).plugin("ssh").obj()
    assert build_plugins(job).on_job_delete(job) == [ObjectRef("v1", "Secret", "ns1", "j-ssh")]
