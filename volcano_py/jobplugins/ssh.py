"""ssh: password-less ssh between a Job's pods, as ``mpirun`` needs.

Creates the Secret ``<job>-ssh`` holding one RSA key pair (``id_rsa``, ``id_rsa.pub``), the same public key as
``authorized_keys``, and an ssh ``config`` listing every pod by its short name. Every container mounts it at
``--ssh-key-file-path`` (default ``/root/.ssh``) with mode 0600, or 0644 elsewhere so that a non-root user can
read it. Arguments (Volcano's): ``--ssh-key-file-path``, ``--ssh-private-key`` / ``--ssh-public-key`` (bring
your own pair), ``--ssh-port`` (default 22); the removed ``--no-root`` still selects ``/etc/volcano/.ssh``.

The key pair is generated once: the Secret's policy is create-if-absent, so a restart keeps the keys that
running pods already trust.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from volcano_py.api.bodies.job import job_tasks
from volcano_py.api.objects import name_of
from volcano_py.jobplugins.flags import Flag, parse_flags, port_flag
from volcano_py.jobplugins.helpers import (
    add_volume,
    job_namespace,
    owned_metadata,
    task_host_names,
)
from volcano_py.jobplugins.types import (
    JSON,
    ApplyPolicy,
    JobPluginError,
    ManagedObject,
    ObjectRef,
)

PRIVATE_KEY = "id_rsa"
PUBLIC_KEY = "id_rsa.pub"
AUTHORIZED_KEYS = "authorized_keys"
CONFIG = "config"
ROOT_KEY_PATH = "/root/.ssh"
NO_ROOT_KEY_PATH = "/etc/volcano/.ssh"
RELATIVE_PATH = ".ssh"
FLAGS = (
    Flag("ssh-key-file-path", ROOT_KEY_PATH),
    Flag("ssh-private-key", ""),
    Flag("ssh-public-key", ""),
    Flag("ssh-port", 22),
    Flag("no-root", False, deprecated=True),
)

KeyPair = tuple[bytes, bytes]  # (PEM private key, OpenSSH public key line)


def generate_rsa_key_pair() -> KeyPair:
    """A fresh 2048-bit RSA pair: PKCS#1 PEM private key and an ``authorized_keys`` line."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return private, public + b"\n"


def _public_from_private(private_pem: str) -> bytes:
    try:
        key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise JobPluginError(
            "spec.plugins.ssh", f"--ssh-private-key is not an unencrypted PEM private key ({exc})"
        ) from None
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return public + b"\n"


def secret_name(job: Mapping[str, Any]) -> str:
    return f"{name_of(job)}-ssh"


def ssh_config(job: Mapping[str, Any], port: int) -> str:
    lines = ["StrictHostKeyChecking no", "UserKnownHostsFile /dev/null"]
    for task in job_tasks(job):
        for short, fqdn in task_host_names(job, task):
            lines += [f"Host {short}", f"  HostName {fqdn}", f"  Port {port}"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class SshPlugin:
    key_file_path: str = ROOT_KEY_PATH
    private_key: str = ""
    public_key: str = ""
    port: int = 22
    keygen: Callable[[], KeyPair] = field(default=generate_rsa_key_pair, compare=False)
    name: str = "ssh"

    @classmethod
    def from_args(
        cls, args: Sequence[str], keygen: Callable[[], KeyPair] = generate_rsa_key_pair
    ) -> SshPlugin:
        values = parse_flags("ssh", FLAGS, args)
        path = values.get_str("ssh-key-file-path")
        if values.get_bool("no-root") and "ssh-key-file-path" not in values.given:
            path = NO_ROOT_KEY_PATH
        if not path.startswith("/"):
            raise JobPluginError("spec.plugins.ssh", f"--ssh-key-file-path={path!r} must be an absolute path")
        private, public = values.get_str("ssh-private-key"), values.get_str("ssh-public-key")
        if public and not private:
            raise JobPluginError(
                "spec.plugins.ssh", "--ssh-public-key needs --ssh-private-key too; give both or neither"
            )
        if private and not public:
            public = _public_from_private(private).decode()
        return cls(path, private, public, port_flag("ssh", values, "ssh-port"), keygen)

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None:
        name = secret_name(job)
        # 0600 keeps sshd happy for root; another path is for a non-root user, who cannot read root's 0600.
        mode = 0o600 if self.key_file_path == ROOT_KEY_PATH else 0o644
        items = [
            {"key": key, "path": f"{RELATIVE_PATH}/{key}"}
            for key in (PRIVATE_KEY, PUBLIC_KEY, AUTHORIZED_KEYS, CONFIG)
        ]
        add_volume(
            pod,
            {"name": name, "secret": {"secretName": name, "items": items, "defaultMode": mode}},
            {"name": name, "mountPath": self.key_file_path, "subPath": RELATIVE_PATH},
        )

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        if self.private_key:
            private, public = self.private_key.encode(), self.public_key.encode()
        else:
            private, public = self.keygen()
        data = {
            PRIVATE_KEY: private,
            PUBLIC_KEY: public,
            AUTHORIZED_KEYS: public,
            CONFIG: ssh_config(job, self.port).encode(),
        }
        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": owned_metadata(job, secret_name(job)),
            "type": "Opaque",
            "data": {key: base64.b64encode(value).decode("ascii") for key, value in data.items()},
        }
        return [ManagedObject(body, ApplyPolicy.CREATE)]

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]:
        return [ObjectRef("v1", "Secret", job_namespace(job), secret_name(job))]
