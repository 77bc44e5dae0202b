"""``vcctl nodeshard list/get`` on the real control plane: a NodeShard the controller would write, read back
with the owner of each of its nodes."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from volcano_py.cli.vcctl import main as vcctl

pytestmark = pytest.mark.integration


def test_list_and_get_show_the_shard_and_who_owns_its_nodes(
    cluster: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = ["-k", str(cluster.kubeconfig)]
    name = f"shard-{uuid.uuid4().hex[:8]}"
    manifest = tmp_path / "shard.json"
    body = {"apiVersion": "shard.volcano.sh/v1alpha1", "kind": "NodeShard", "metadata": {"name": name},
            "spec": {"nodesDesired": [f"{name}-n1", f"{name}-n2"]}}  # fmt: skip
    manifest.write_text(json.dumps(body))
    cluster.kubectl("create", "-f", str(manifest))
    try:
        assert vcctl(["nodeshard", "list", *kc]) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[0].split() == ["Name", "Desired", "InUse", "ToAdd", "ToRemove"]
        assert [line.split() for line in out.splitlines() if line.startswith(f"{name} ")] == [
            [name, "2", "0", "0", "0"]
        ]

        assert vcctl(["nodeshard", "get", "-N", name, *kc]) == 0
        # No scheduler runs this shard, so it has not started using the nodes it is given.
        assert [line.split() for line in capsys.readouterr().out.splitlines()[3:]] == [
            ["Node", "Owner"],
            [f"{name}-n1", name, "(waiting)"],
            [f"{name}-n2", name, "(waiting)"],
        ]
    finally:
        cluster.kubectl("delete", "nodeshard.shard.volcano.sh", name, "--ignore-not-found")
    assert vcctl(["nodeshard", "get", "-N", name, *kc]) == 1
    assert capsys.readouterr().err == f"Error: nodeshard {name} not found\n"
