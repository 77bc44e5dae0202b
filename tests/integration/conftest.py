"""Fixtures for tests against a real local control plane (``volcano_py.devcluster``).

``cluster``: one control plane for the whole session, with 8 Ready fake nodes ``node-0..7`` (8 nvidia.com/gpu,
32 CPU, 256Gi, 110 pods, zone/spine/rack labels) and the CRDs of ``crds/`` Established. ``namespace``: a fresh
namespace per test, deleted afterwards. Outside CI a missing toolchain skips these tests with the reason; with
``CI=true`` it fails them, because CI must run them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from volcano_py.devcluster import BuildError, DevCluster, ToolchainMissing

REPO = Path(__file__).resolve().parents[2]
CRDS = REPO / "crds"
SESSION_NODES = 8
# test_rbac.py runs our processes under the deployed ServiceAccounts of volcano-system and reads what they
# requested from the API server's audit log; nothing else runs as them, so nothing else is logged. Pod
# deletions are logged for everyone: a Job test that counts one eviction too many names who deleted what.
AUDITED_GROUPS = ("system:serviceaccounts:volcano-system",)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevCluster]:
    # Build progress goes straight to the terminal: a cold build takes minutes and pytest would hide it.
    dev = DevCluster(
        tmp_path_factory.mktemp("devcluster"),
        out=sys.__stderr__,
        audit_user_groups=AUDITED_GROUPS,
        audit_pod_deletes=True,
    )
    try:
        dev.start()
    except (ToolchainMissing, BuildError) as err:
        if _in_ci():
            pytest.fail(f"CI=true and the control plane cannot be built: {err}", pytrace=False)
        pytest.skip(f"no local control plane (run `volcano-py dev build` to see why): {err}")
    try:
        dev.create_nodes(SESSION_NODES, prefix="node-", cpu="32", memory="256Gi", pods=110, gpus=8)
        if CRDS.is_dir() and any(CRDS.glob("*.yaml")):
            dev.apply_crds(CRDS)
    except BaseException:
        dev.stop()
        raise
    yield dev
    dev.stop()


@pytest.fixture
def namespace(cluster: DevCluster) -> Iterator[str]:
    """A new namespace whose default ServiceAccount exists (pods can be created at once); deleted after."""
    name = cluster.create_namespace()
    yield name
    cluster.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found", check=False)
