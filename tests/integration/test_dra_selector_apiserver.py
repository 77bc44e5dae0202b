"""Our verdict on each DRA CEL selector of tests/api/dra_selector_table.py is the real kube-apiserver's: each
selector is sent in a DeviceClass with ``kubectl create --dry-run=server`` and refused or accepted alike."""

from __future__ import annotations

import json

import pytest

from tests.api.dra_selector_table import CASES, Case
from volcano_py.api.dra_cel_check import check_selector
from volcano_py.devcluster import DevCluster

pytestmark = pytest.mark.integration


def _device_class(case: Case) -> str:
    return json.dumps(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": f"selector-{case.id}"},
            "spec": {"selectors": [{"cel": {"expression": case.expression}}]},
        }
    )


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_api_server_agrees(cluster: DevCluster, case: Case) -> None:
    done = cluster.kubectl("create", "--dry-run=server", "-o", "name", "-f", "-", input=_device_class(case),
                           check=False)  # fmt: skip
    ours = check_selector(case.expression)
    assert (done.returncode == 0) == (ours is None), done.stderr
    if ours is None:
        return
    assert f"spec.selectors[0].cel.expression: {case.refusal}" in done.stderr
    if case.same_words:
        assert ours.api_text(case.expression) in done.stderr
