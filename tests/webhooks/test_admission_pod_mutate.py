"""Pod mutation by resource group: the patch a new pod gets from volcano-admission.conf (Volcano's cases of
pkg/webhooks/admission/pods/mutate/mutate_pod_test.go, and the rules around them)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from volcano_py.api.admission_conf import AdmissionConf, load_admission_conf
from volcano_py.webhooks.patch import PatchOp, apply_patch
from volcano_py.webhooks.resource_groups import mutate_pod, resource_group_of

AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}
            ]
        }
    }
}
MNG_TOLERATION = {"key": "mng-taint-1", "operator": "Exists", "effect": "NoSchedule"}

CONF = load_admission_conf(
    f"""\
resourceGroups:
- resourceGroup: management
  object: {{key: namespace, value: [mng-ns-1, mng-ns-2]}}
  schedulerName: default-scheduler
  tolerations: [{json.dumps(MNG_TOLERATION)}]
  affinity: '{json.dumps(AFFINITY)}'
  labels: {{volcano.sh/nodetype: management}}
- resourceGroup: cpu
  object: {{key: annotation, value: ["volcano.sh/resource-group: cpu"]}}
  schedulerName: volcano
  labels: {{volcano.sh/nodetype: cpu}}
- resourceGroup: gpu
  schedulerName: volcano
  labels: {{volcano.sh/nodetype: gpu}}
- resourceGroup: role
  object: {{key: annotation, value: ["example.com/role: master", "example.com/tier: '1'"]}}
  tolerations: [{{key: dedicated, operator: Equal, value: role, effect: NoSchedule}}]
"""
)


def pod(
    name: str = "p", namespace: str = "default", annotations: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations is not None:
        metadata["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def add(path: str, value: Any) -> PatchOp:
    return PatchOp("add", path, value)


@pytest.mark.parametrize(
    ("new_pod", "expected"),
    [
        pytest.param(
            pod(namespace="mng-ns-1", schedulerName="default-scheduler"),
            [
                add("/spec/nodeSelector", {"volcano.sh/nodetype": "management"}),
                add("/spec/affinity", AFFINITY),
                add("/spec/tolerations", [MNG_TOLERATION]),
                add("/spec/schedulerName", "default-scheduler"),
            ],
            id="namespace-group",
        ),
        pytest.param(
            pod(annotations={"volcano.sh/resource-group": "cpu"}),
            [
                add("/spec/nodeSelector", {"volcano.sh/nodetype": "cpu"}),
                add("/spec/schedulerName", "volcano"),
            ],
            id="annotation-group",
        ),
        pytest.param(
            pod(annotations={"volcano.sh/resource-group": "gpu"}),
            [
                add("/spec/nodeSelector", {"volcano.sh/nodetype": "gpu"}),
                add("/spec/schedulerName", "volcano"),
            ],
            id="group-without-object-takes-its-name-annotation",
        ),
        pytest.param(pod(name="normal-pod"), [], id="no-group"),
        pytest.param(pod(namespace="mng-ns-3"), [], id="namespace-not-listed"),
        pytest.param(pod(annotations={"volcano.sh/resource-group": "tpu"}), [], id="annotation-of-no-group"),
        pytest.param(
            # "role" lists its annotations explicitly: its own name is no default for it.
            pod(annotations={"volcano.sh/resource-group": "role"}),
            [],
            id="explicit-annotation-group-ignores-its-name",
        ),
        pytest.param(
            pod(annotations={"example.com/tier": "1"}),
            [
                add(
                    "/spec/tolerations",
                    [{"key": "dedicated", "operator": "Equal", "value": "role", "effect": "NoSchedule"}],
                )
            ],
            id="any-listed-annotation-matches",
        ),
        pytest.param(
            pod(
                namespace="mng-ns-2",
                nodeSelector={"zone": "a", "volcano.sh/nodetype": "cpu"},
                tolerations=[{"key": "own", "operator": "Exists"}],
                affinity={"podAffinity": {}},
            ),
            [
                add("/spec/nodeSelector", {"zone": "a", "volcano.sh/nodetype": "management"}),
                add("/spec/tolerations", [{"key": "own", "operator": "Exists"}, MNG_TOLERATION]),
                add("/spec/schedulerName", "default-scheduler"),
            ],
            id="merged-with-the-pods-own-and-its-affinity-kept",
        ),
        pytest.param(
            pod(namespace="mng-ns-1", annotations={"volcano.sh/resource-group": "cpu"}),
            [
                add("/spec/nodeSelector", {"volcano.sh/nodetype": "management"}),
                add("/spec/affinity", AFFINITY),
                add("/spec/tolerations", [MNG_TOLERATION]),
                add("/spec/schedulerName", "default-scheduler"),
            ],
            id="first-group-in-conf-order-wins",
        ),
    ],
)
def test_a_new_pod_gets_its_resource_groups_patch(new_pod: dict[str, Any], expected: list[PatchOp]) -> None:
    namespace = new_pod["metadata"]["namespace"]
    assert mutate_pod(new_pod, namespace, CONF) == expected


@pytest.mark.parametrize(
    "conf", [pytest.param(None, id="no-conf"), pytest.param(AdmissionConf(), id="no-groups")]
)
def test_without_groups_no_pod_changes(conf: AdmissionConf | None) -> None:
    assert (
        mutate_pod(
            pod(namespace="mng-ns-1", annotations={"volcano.sh/resource-group": "cpu"}), "mng-ns-1", conf
        )
        == []
    )


def test_the_patch_applies_to_the_pod() -> None:
    new_pod = pod(namespace="mng-ns-1", nodeSelector={"zone": "a"})
    patched = apply_patch(json.loads(json.dumps(new_pod)), mutate_pod(new_pod, "mng-ns-1", CONF))
    assert patched["spec"]["nodeSelector"] == {"zone": "a", "volcano.sh/nodetype": "management"}
    assert patched["spec"]["schedulerName"] == "default-scheduler"
    assert patched["spec"]["tolerations"] == [MNG_TOLERATION]
    assert patched["spec"]["affinity"] == AFFINITY
    assert patched["spec"]["containers"] == new_pod["spec"]["containers"]


def test_the_group_is_found_by_namespace_of_the_request() -> None:
    group = resource_group_of(pod(namespace=""), "mng-ns-2", CONF)
    assert group is not None and group.resource_group == "management"
