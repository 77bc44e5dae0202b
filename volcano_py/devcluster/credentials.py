"""The throw-away credentials of a dev cluster: an admin token, the service-account signing key, a kubeconfig.

Token auth keeps the PKI to one RSA key: kube-apiserver makes its own self-signed serving certificate in
``--cert-dir``, and the kubeconfig trusts exactly that certificate. The admin user is in ``system:masters``,
which RBAC lets do anything, so tests and controllers need no role bindings.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

ADMIN_USER = "volcano-py-admin"
ADMIN_GROUP = "system:masters"
CONTEXT = "volcano-py-dev"


def new_token() -> str:
    return secrets.token_hex(24)


def token_file_line(token: str, user: str = ADMIN_USER, group: str = ADMIN_GROUP) -> str:
    """One line of kube-apiserver's ``--token-auth-file`` CSV: token,user,uid,"groups"."""
    if "," in token or not token:
        raise ValueError("token must be non-empty and contain no comma")
    return f'{token},{user},{user}-uid,"{group}"\n'


def service_account_key_pem() -> bytes:
    """A fresh RSA key (PKCS#8 PEM) that signs and verifies service-account tokens."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    )


def kubeconfig(server: str, token: str, ca_file: Path) -> str:
    """A kubeconfig that kubectl, kopf, kubernetes_asyncio, kwok and kube-controller-manager all accept."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": {"server": server, "certificate-authority": str(ca_file)}}],
        "users": [{"name": ADMIN_USER, "user": {"token": token}}],
        "contexts": [
            {"name": CONTEXT, "context": {"cluster": CONTEXT, "user": ADMIN_USER, "namespace": "default"}}
        ],
        "current-context": CONTEXT,
    }
    return yaml.safe_dump(config, sort_keys=False)
