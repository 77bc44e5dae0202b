"""`volcano-py validate` refuses what the API server refuses, in the cases the differential test
(tests/integration/test_validate_differential.py) found it did not: each rule here is one the API server
applies to the same manifest, field named as kubectl shows it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from volcano_py.api.validation import validate_object


def _problems(obj: dict[str, Any]) -> list[str]:
    return [str(problem) for problem in validate_object(obj)]


def _pod(**spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [container], **spec},
    }


def _spread(**fields: Any) -> dict[str, Any]:
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", **fields}
    return {key: value for key, value in constraint.items() if value is not None}


# --- Pods ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(
            {**_pod(), "metadata": {"name": "a/b"}},
            "metadata.name: 'a/b' is not a DNS-1123 subdomain (use lower-case letters, digits, '-' and '.', "
            "starting and ending with a letter or digit)",
            id="name-not-a-subdomain",
        ),
        pytest.param(
            _pod(topologySpreadConstraints=[_spread(maxSkew=0)]),
            "spec.topologySpreadConstraints[0].maxSkew: must be greater than zero, got 0 (e.g. 'maxSkew: 1')",
            id="spread-max-skew-zero",
        ),
        pytest.param(
            _pod(topologySpreadConstraints=[_spread(whenUnsatisfiable="Sometimes")]),
            "spec.topologySpreadConstraints[0].whenUnsatisfiable: 'Sometimes' is not allowed "
            "(use one of DoNotSchedule, ScheduleAnyway)",
            id="spread-when-unsatisfiable",
        ),
        pytest.param(
            _pod(topologySpreadConstraints=[_spread(topologyKey=None)]),
            "spec.topologySpreadConstraints[0].topologyKey: is required (name a node label, "
            "e.g. 'topology.kubernetes.io/zone')",
            id="spread-topology-key-missing",
        ),
        pytest.param(
            _pod(topologySpreadConstraints=[_spread(whenUnsatisfiable="ScheduleAnyway", minDomains=2)]),
            "spec.topologySpreadConstraints[0].minDomains: only applies with whenUnsatisfiable: "
            "DoNotSchedule, not 'ScheduleAnyway' (remove minDomains or use DoNotSchedule)",
            id="spread-min-domains-without-do-not-schedule",
        ),
        pytest.param(
            _pod(topologySpreadConstraints=[_spread(minDomains=0)]),
            "spec.topologySpreadConstraints[0].minDomains: must be greater than zero, got 0",
            id="spread-min-domains-zero",
        ),
        pytest.param(
            _pod(topologySpreadConstraints=[_spread(), _spread(maxSkew=2)]),
            "spec.topologySpreadConstraints[0]: constraint [1] has the same topologyKey 'zone' and "
            "whenUnsatisfiable 'DoNotSchedule' (merge them: one constraint per key and mode)",
            id="spread-duplicate",
        ),
        pytest.param(
            _pod(topologySpreadConstraints=[_spread(nodeAffinityPolicy="Maybe")]),
            "spec.topologySpreadConstraints[0].nodeAffinityPolicy: 'Maybe' is not allowed "
            "(use one of Honor, Ignore)",
            id="spread-node-affinity-policy",
        ),
        pytest.param(
            _pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}}),
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
            "is required (name the node label that defines 'together', e.g. 'kubernetes.io/hostname')",
            id="pod-affinity-topology-key",
        ),
        pytest.param(
            _pod(
                affinity={
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 0,
                                "preference": {"matchExpressions": [{"key": "z", "operator": "Exists"}]},
                            }
                        ]
                    }
                }
            ),
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
            "must be from 1 to 100, got 0",
            id="preferred-weight-zero",
        ),
        pytest.param(
            _pod(
                hostNetwork=True,
                containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 81}]}],
            ),
            "spec.containers[0].ports[0].hostPort: 81 must match containerPort 80 when hostNetwork is true "
            "(set it to the containerPort or leave it out)",
            id="host-network-port-differs",
        ),
        pytest.param(
            _pod(nodeSelector={"Bad Key!": "x"}),
            "spec.nodeSelector.Bad Key!: 'Bad Key!' is not a valid key (the name part takes letters, digits, "
            "'-', '_' and '.', starting and ending with a letter or digit, at most 63 characters, "
            "e.g. 'team' or 'example.com/team')",
            id="node-selector-key",
        ),
        pytest.param(
            _pod(nodeSelector={"zone": "not valid!"}),
            "spec.nodeSelector.zone: 'not valid!' is not a valid label value (use letters, digits, '-', '_' "
            "and '.', starting and ending with a letter or digit, at most 63 characters, or leave it empty)",
            id="node-selector-value",
        ),
        pytest.param(
            _pod(priority=10),
            "spec.priority: 10 may not be set: the API server computes priority from priorityClassName "
            "(remove priority and name a PriorityClass instead)",
            id="priority-without-class",
        ),
        pytest.param(
            _pod(
                containers=[{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]
            ),
            "spec.containers[0].resources.limits.nvidia.com/gpu: is required: nvidia.com/gpu cannot be "
            "overcommitted, so its limit must be set (give limits.nvidia.com/gpu the same quantity as the "
            "request)",
            id="extended-resource-without-limit",
        ),
        pytest.param(
            _pod(tolerations=[{"key": "gpu", "operator": "Exists", "value": "x"}]),
            "spec.tolerations[0].operator: Exists takes no value, got value 'x' (remove value, or use "
            "operator Equal)",
            id="toleration-exists-with-value-named-at-operator",
        ),
    ],
)
def test_pod_refused_as_the_api_server_refuses_it(pod: dict[str, Any], expected: str) -> None:
    assert _problems(pod) == [expected]


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(_pod(restartPolicy=""), id="empty-restart-policy-is-always"),
        pytest.param(
            _pod(
                hostNetwork=True, containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]
            ),
            id="host-network-port-left-out",
        ),
        pytest.param(_pod(priority=0), id="priority-zero"),
        pytest.param(_pod(priority=1000, priorityClassName="high"), id="priority-with-class-left-to-server"),
        pytest.param(
            _pod(topologySpreadConstraints=[_spread(), _spread(whenUnsatisfiable="ScheduleAnyway")]),
            id="spread-same-key-other-mode",
        ),
    ],
)
def test_pod_accepted_as_the_api_server_accepts_it(pod: dict[str, Any]) -> None:
    assert _problems(pod) == []


def test_a_job_task_template_gets_the_same_pod_rules() -> None:
    template = {"spec": {**_pod(topologySpreadConstraints=[_spread(maxSkew=0)])["spec"]}}
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"tasks": [{"name": "w", "replicas": 1, "template": template}]},
    }
    assert _problems(job) == [
        "spec.tasks[0].template.spec.topologySpreadConstraints[0].maxSkew: must be greater than zero, got 0 "
        "(e.g. 'maxSkew: 1')"
    ]


# --- DRA ----------------------------------------------------------------------------------------------------

OPAQUE = {"driver": "gpu.example.com", "parameters": {"sharing": "mps"}}


def _claim(**devices: Any) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [request], **devices}},
    }


def _device_class(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": "true"}}], **spec},
    }


def _with_request(claim: dict[str, Any], **exactly: Any) -> dict[str, Any]:
    out = copy.deepcopy(claim)
    out["spec"]["devices"]["requests"][0]["exactly"].update(exactly)
    return out


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            {**_device_class(), "metadata": {"name": "Upper-Case"}},
            "metadata.name: 'Upper-Case' is not a DNS-1123 subdomain (use lower-case letters, digits, '-' "
            "and '.', starting and ending with a letter or digit)",
            id="class-name",
        ),
        pytest.param(
            {**_claim(), "metadata": {}},
            "metadata.name: is required (name the object)",
            id="claim-name-missing",
        ),
        pytest.param(
            {**_claim(), "metadata": {"name": "c", "labels": {"app": "not valid!"}}},
            "metadata.labels[app]: 'not valid!' is not a valid label value (use letters, digits, '-', '_' "
            "and '.', starting and ending with a letter or digit, at most 63 characters, or leave it empty)",
            id="claim-label",
        ),
        pytest.param(
            _device_class(config=[{"opaque": {**OPAQUE, "driver": "Not_A_Domain"}}]),
            "spec.config[0].opaque.driver: 'Not_A_Domain' is not a driver name (a DNS subdomain, "
            "e.g. 'gpu.example.com')",
            id="class-opaque-driver",
        ),
        pytest.param(
            _device_class(config=[{"opaque": {**OPAQUE, "parameters": ["a", "list"]}}]),
            "spec.config[0].opaque.parameters: must be an object (the driver's configuration), got list",
            id="class-opaque-parameters",
        ),
        pytest.param(
            _device_class(config=[{}]),
            "spec.config[0].opaque: is required (give the driver and its parameters)",
            id="class-config-without-opaque",
        ),
        pytest.param(
            _device_class(selector=[]),
            "spec.selector: unknown field (remove it or fix the spelling; did you mean 'selectors'?)",
            id="class-unknown-field",
        ),
        pytest.param(
            _claim(requests=[{"name": "Upper", "exactly": {"deviceClassName": "gpu.example.com"}}]),
            "spec.devices.requests[0].name: 'Upper' is not a DNS-1123 label (use lower-case letters, digits "
            "and '-', starting and ending with a letter or digit, e.g. 'worker-0')",
            id="request-name",
        ),
        pytest.param(
            _claim(requests=[{"name": "g", "exactly": {"deviceClassName": "x"}}] * 2),
            "spec.devices.requests[1].name: duplicated request name 'g' (name each request once)",
            id="request-name-duplicate",
        ),
        pytest.param(
            _with_request(_claim(), deviceClassName="sp ace"),
            "spec.devices.requests[0].exactly.deviceClassName: 'sp ace' is not a DNS-1123 subdomain (use "
            "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit)",
            id="request-class-name",
        ),
        pytest.param(
            _with_request(_claim(), allocationMode="All", count=2),
            "spec.devices.requests[0].exactly.count: must not be set when allocationMode is All, got 2 "
            "(remove it)",
            id="all-with-count",
        ),
        pytest.param(
            _claim(constraints=[{"requests": ["gpu"], "matchAttribute": "model"}]),
            "spec.devices.constraints[0].matchAttribute: 'model' must include a domain (write e.g. "
            "'gpu.example.com/model')",
            id="match-attribute-unqualified",
        ),
        pytest.param(
            _claim(constraints=[{"matchAttribute": "Bad_Domain/model"}]),
            "spec.devices.constraints[0].matchAttribute: the domain of 'Bad_Domain/model': 'Bad_Domain' is "
            "not a driver name (a DNS subdomain, e.g. 'gpu.example.com')",
            id="match-attribute-bad-domain",
        ),
        pytest.param(
            _claim(constraints=[{"matchAttribute": "gpu.example.com/9lives"}]),
            "spec.devices.constraints[0].matchAttribute: the name in 'gpu.example.com/9lives' is not a C "
            "identifier (letters, digits and '_', not starting with a digit)",
            id="match-attribute-bad-identifier",
        ),
        pytest.param(
            _claim(constraints=[{"requests": ["nonesuch"], "matchAttribute": "gpu.example.com/model"}]),
            "spec.devices.constraints[0].requests[0]: 'nonesuch' is not the name of a request of this claim "
            "(use one of gpu)",
            id="constraint-unknown-request",
        ),
        pytest.param(
            _claim(config=[{"requests": ["gpu"], "opaque": {"parameters": {"a": 1}}}]),
            "spec.devices.config[0].opaque.driver: is required (name the driver, e.g. 'gpu.example.com')",
            id="claim-opaque-driver-missing",
        ),
        pytest.param(
            _claim(config=[{"requests": ["gpu"], "opaque": {**OPAQUE, "driver": "a" * 64 + ".com"}}]),
            f"spec.devices.config[0].opaque.driver: {'a' * 64 + '.com'!r} is longer than 63 characters (use "
            "the driver's name)",
            id="claim-opaque-driver-too-long",
        ),
        pytest.param(
            _claim(request=[]),
            "spec.devices.request: unknown field (remove it or fix the spelling; did you mean 'requests'?)",
            id="claim-unknown-field",
        ),
    ],
)
def test_dra_object_refused_as_the_api_server_refuses_it(obj: dict[str, Any], expected: str) -> None:
    assert _problems(obj) == [expected]


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(_with_request(_claim(), count=0), id="count-zero-is-one"),
        pytest.param(
            _claim(config=[{"requests": ["gpu"], "opaque": {**OPAQUE, "driver": "GPU.Example.com"}}]),
            id="driver-name-any-case",
        ),
        pytest.param(_device_class(extendedResourceName="example.com/gpu"), id="extended-resource-name"),
    ],
)
def test_dra_object_accepted_as_the_api_server_accepts_it(obj: dict[str, Any]) -> None:
    assert _problems(obj) == []


def test_claim_template_gets_the_claim_rules_under_its_inner_spec() -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t"},
        "spec": {"spec": _claim(constraints=[{"matchAttribute": "model"}])["spec"]},
    }
    assert _problems(template) == [
        "spec.spec.devices.constraints[0].matchAttribute: 'model' must include a domain (write e.g. "
        "'gpu.example.com/model')"
    ]


# --- Volcano kinds ------------------------------------------------------------------------------------------


def test_numatopology_name_is_checked() -> None:
    topo = {
        "apiVersion": "nodeinfo.volcano.sh/v1alpha1",
        "kind": "Numatopology",
        "metadata": {"name": "a" * 254},
        "spec": {"policies": {"CPUManagerPolicy": "static"}},
    }
    assert _problems(topo) == [f"metadata.name: {'a' * 254!r} is longer than 253 characters (shorten it)"]
    del topo["metadata"]["name"]
    assert _problems(topo) == ["metadata.name: is required (name the object)"]


def test_queue_weight_zero_is_admissions_default_of_one() -> None:
    queue = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "q"},
        "spec": {"weight": 0},
    }
    assert _problems(queue) == []
    queue["spec"]["weight"] = -1
    assert _problems(queue) == ["spec.weight: -1 is too small (use a value >= 1)"]
