"""A control plane of its own for the chaos suite: it restarts the API server and etcd and installs webhooks,
which must not disturb the integration tests' shared cluster. Fails under CI=true when it cannot be built."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from volcano_py.devcluster import BuildError, DevCluster, ToolchainMissing

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def chaos_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevCluster]:
    dev = DevCluster(tmp_path_factory.mktemp("chaos-cluster"), out=sys.__stderr__)
    try:
        dev.start()
    except (ToolchainMissing, BuildError) as err:
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            pytest.fail(f"CI=true and the control plane cannot be built: {err}", pytrace=False)
        pytest.skip(f"no local control plane (run `volcano-py dev build` to see why): {err}")
    try:
        dev.create_nodes(12, prefix="c-", cpu="32", memory="256Gi", pods=110, gpus=8)
        dev.apply_crds(REPO / "crds")
    except BaseException:
        dev.stop()
        raise
    yield dev
    dev.stop()
