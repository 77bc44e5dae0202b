"""The shell's pure parts: webhook configurations scoped to our kinds, TLS certificate, handler routing."""

from __future__ import annotations

import base64
import datetime
import ipaddress
from pathlib import Path
from typing import Any, cast

import kopf
import pytest
from cryptography import x509

from volcano_py.api.features import parse_feature_gates
from volcano_py.kube.client import KubeClient
from volcano_py.webhooks.common import Queues
from volcano_py.webhooks.configurations import webhook_configurations
from volcano_py.webhooks.endpoint import AdmissionEndpoint
from volcano_py.webhooks.review import GroupVersionResource
from volcano_py.webhooks.server import enable_admission, register
from volcano_py.webhooks.tls import generate_certificate

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def test_configurations_cover_volcano_kinds_and_its_pod_rule_with_short_timeout_and_fail_policy() -> None:
    mutating, validating = webhook_configurations(name="vp", ca_bundle=b"CA", url="https://127.0.0.1:9443/")
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    assert validating["kind"] == "ValidatingWebhookConfiguration"
    rules = {
        (hook["name"], rule["apiGroups"][0], rule["resources"][0], tuple(rule["operations"]))
        for config in (mutating, validating)
        for hook in config["webhooks"]
        for rule in hook["rules"]
    }
    assert rules == {
        ("mutatejob.volcano.sh", "batch.volcano.sh", "jobs", ("CREATE",)),
        ("validatejob.volcano.sh", "batch.volcano.sh", "jobs", ("CREATE", "UPDATE")),
        ("mutatequeue.volcano.sh", "scheduling.volcano.sh", "queues", ("CREATE",)),
        ("validatequeue.volcano.sh", "scheduling.volcano.sh", "queues", ("CREATE", "UPDATE", "DELETE")),
        ("validatepodgroup.volcano.sh", "scheduling.volcano.sh", "podgroups", ("CREATE",)),
        ("mutatepodgroup.volcano.sh", "scheduling.volcano.sh", "podgroups", ("CREATE",)),
        ("validatepod.volcano.sh", "", "pods", ("CREATE",)),
        ("validatehypernodes.volcano.sh", "topology.volcano.sh", "hypernodes", ("CREATE", "UPDATE")),
        ("validatejobflow.volcano.sh", "flow.volcano.sh", "jobflows", ("CREATE", "UPDATE")),
        ("validatejobtemplate.volcano.sh", "flow.volcano.sh", "jobtemplates", ("CREATE", "UPDATE")),
        ("validatecronjob.volcano.sh", "batch.volcano.sh", "cronjobs", ("CREATE", "UPDATE")),
    }
    for hook in [*mutating["webhooks"], *validating["webhooks"]]:
        assert hook["timeoutSeconds"] == 5
        assert hook["failurePolicy"] == "Fail"
        assert hook["sideEffects"] == "None"
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == b"CA"
    urls = sorted(hook["clientConfig"]["url"] for hook in validating["webhooks"])
    assert urls == [
        "https://127.0.0.1:9443/validate-cronjob",
        "https://127.0.0.1:9443/validate-hypernode",
        "https://127.0.0.1:9443/validate-job",
        "https://127.0.0.1:9443/validate-jobflow",
        "https://127.0.0.1:9443/validate-jobtemplate",
        "https://127.0.0.1:9443/validate-pod",
        "https://127.0.0.1:9443/validate-podgroup",
        "https://127.0.0.1:9443/validate-queue",
    ]


def test_pod_and_podgroup_hooks_reach_only_what_their_rules_concern() -> None:
    service = {"namespace": "batch-system", "name": "volcano-py-admission", "port": 443}
    mutating, validating = webhook_configurations(
        name="vp", ca_bundle=b"CA", service=service, scheduler_names=("volcano", "gang")
    )
    hooks = {hook["name"]: hook for hook in [*mutating["webhooks"], *validating["webhooks"]]}
    outside = {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["batch-system", "kube-system"],
            }
        ]
    }
    pod = hooks["validatepod.volcano.sh"]
    assert pod["namespaceSelector"] == outside
    assert pod["matchConditions"] == [
        {
            "name": "scheduled-by-volcano",
            "expression": "has(object.spec.schedulerName) && "
            "object.spec.schedulerName in ['volcano', 'gang']",
        },
        {
            "name": "has-disruption-budget",
            "expression": "has(object.metadata.annotations) && ('volcano.sh/jdb-min-available' in "
            "object.metadata.annotations || 'volcano.sh/jdb-max-unavailable' in object.metadata.annotations)",
        },
    ]
    podgroup = hooks["mutatepodgroup.volcano.sh"]
    assert podgroup["namespaceSelector"] == outside
    assert podgroup["matchConditions"] == [
        {
            "name": "in-default-queue",
            "expression": "!has(object.spec) || !has(object.spec.queue) || object.spec.queue == 'default'",
        }
    ]
    for name in ("mutatejob.volcano.sh", "validatehypernodes.volcano.sh", "validatepodgroup.volcano.sh"):
        assert "namespaceSelector" not in hooks[name] and "matchConditions" not in hooks[name]


def test_in_cluster_service_and_object_selector() -> None:
    service = {"namespace": "volcano-system", "name": "volcano-py-admission", "port": 443}
    selector = {"matchLabels": {"team": "a"}}
    mutating, _ = webhook_configurations(
        name="vp", ca_bundle=b"CA", service=service, object_selector=selector
    )
    hook = mutating["webhooks"][0]
    assert hook["clientConfig"]["service"] == {**service, "path": "/mutate-job"}
    assert hook["objectSelector"] == selector


@pytest.mark.parametrize("timeout", [0, 31])
def test_timeout_outside_api_server_limits_is_refused(timeout: int) -> None:
    with pytest.raises(ValueError, match=f"timeout_seconds={timeout} must be within 1..30"):
        webhook_configurations(name="vp", ca_bundle=b"CA", url="https://x", timeout_seconds=timeout)


def test_configuration_needs_an_address() -> None:
    with pytest.raises(ValueError, match="base url or its in-cluster service"):
        webhook_configurations(name="vp", ca_bundle=b"CA")


def test_certificate_is_signed_by_the_ca_for_every_host() -> None:
    cert = generate_certificate(["127.0.0.1", "volcano-py-admission.volcano-system.svc"], now=NOW)
    ca = x509.load_pem_x509_certificate(cert.ca_pem)
    server = x509.load_pem_x509_certificate(cert.cert_pem)
    server.verify_directly_issued_by(ca)
    sans = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert sans.get_values_for_type(x509.DNSName) == ["volcano-py-admission.volcano-system.svc"]
    assert server.not_valid_after_utc == NOW + datetime.timedelta(days=365)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert b"PRIVATE KEY" in cert.key_pem


def test_certificate_needs_a_host() -> None:
    with pytest.raises(ValueError, match="at least one DNS name or IP"):
        generate_certificate([], now=NOW)


class _NoQueues:
    async def queues(self) -> Queues:
        return {}


def test_register_adds_one_handler_per_webhook_id() -> None:
    registry = kopf.OperatorRegistry()
    register(registry, queues=_NoQueues())
    ids = sorted(handler.id for handler in registry._webhooks.get_all_handlers())
    assert ids == [
        "mutate-job", "mutate-podgroup", "mutate-queue", "validate-cronjob", "validate-hypernode",
        "validate-job", "validate-jobflow", "validate-jobtemplate", "validate-pod", "validate-podgroup",
        "validate-queue",
    ]  # fmt: skip


def test_enable_admission_wires_handlers_server_certificate_and_startup(tmp_path: Path) -> None:
    registry = kopf.OperatorRegistry()
    settings = kopf.OperatorSettings()
    cert = enable_admission(registry, settings, KubeClient(cast(Any, None)), cert_dir=tmp_path, port=18443)
    server = settings.admission.server
    assert isinstance(server, AdmissionEndpoint)
    assert (server.port, server.host) == (18443, "127.0.0.1")
    assert server.limits.max_body_bytes == 3 * 1024 * 1024  # Volcano's and the API server's
    assert server.webhooks["validate-job"] == GroupVersionResource("batch.volcano.sh", "v1alpha1", "jobs")
    assert settings.admission.managed is None
    assert (tmp_path / "ca.crt").read_bytes() == cert.ca_pem
    assert (tmp_path / "tls.key").stat().st_mode & 0o777 == 0o600
    assert len(registry._webhooks.get_all_handlers()) == 11
    startup = [handler.id for handler in registry._activities.get_all_handlers()]
    assert "install-webhook-configurations" in startup


def test_the_pod_mutating_webhook_comes_only_with_an_admission_conf() -> None:
    without, _ = webhook_configurations(name="vp", ca_bundle=b"CA", url="https://127.0.0.1:9443")
    assert "mutatepod.volcano.sh" not in {hook["name"] for hook in without["webhooks"]}
    mutating, _ = webhook_configurations(
        name="vp", ca_bundle=b"CA", url="https://127.0.0.1:9443", admission_conf=True
    )
    (hook,) = [hook for hook in mutating["webhooks"] if hook["name"] == "mutatepod.volcano.sh"]
    assert hook["rules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "resources": ["pods"],
            "operations": ["CREATE"],
            "scope": "*",
        }
    ]
    assert hook["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate-pod"
    assert hook["failurePolicy"] == "Fail" and hook["reinvocationPolicy"] == "Never"
    # Every pod outside the system namespaces, whatever its scheduler: a group may take a whole namespace.
    assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system", "volcano-system"]
    assert "matchConditions" not in hook


@pytest.mark.parametrize(
    ("gates", "admission_conf", "conditions"),
    [
        ("", False, None),
        ("", True, []),
        ("SchedulingGatesQueueAdmission=true", False, ["queue-allocation-gate-opt-in"]),
        # Resource groups may take any pod, so the gate's narrowing must not hide pods from them.
        ("SchedulingGatesQueueAdmission=true", True, []),
    ],
)
def test_one_pod_mutating_webhook_sees_the_pods_its_rules_need(
    gates: str, admission_conf: bool, conditions: list[str] | None
) -> None:
    mutating, _ = webhook_configurations(
        name="vp",
        ca_bundle=b"CA",
        url="https://127.0.0.1:9443",
        feature_gates=parse_feature_gates(gates),
        admission_conf=admission_conf,
    )
    hooks = [hook for hook in mutating["webhooks"] if hook["name"] == "mutatepod.volcano.sh"]
    if conditions is None:
        assert hooks == []
        return
    (hook,) = hooks
    assert [c["name"] for c in hook.get("matchConditions", [])] == conditions


def test_enable_admission_with_a_conf_registers_pod_mutation_and_refuses_a_bad_conf(tmp_path: Path) -> None:
    conf = tmp_path / "volcano-admission.conf"
    conf.write_text("resourceGroups:\n- resourceGroup: gpu\n")
    registry = kopf.OperatorRegistry()
    client = KubeClient(cast(Any, None))
    enable_admission(
        registry,
        kopf.OperatorSettings(),
        client,
        cert_dir=tmp_path / "c",
        port=18443,
        admission_conf=str(conf),
    )
    assert "mutate-pod" in {handler.id for handler in registry._webhooks.get_all_handlers()}
    conf.write_text("resourceGroups:\n- resourceGroup: gpu\n  object: {key: label}\n")
    with pytest.raises(ValueError, match=r"--admission-conf .*: resourceGroups\[0\]\.object\.key: 'label'"):
        enable_admission(
            kopf.OperatorRegistry(),
            kopf.OperatorSettings(),
            client,
            cert_dir=tmp_path / "c",
            port=18443,
            admission_conf=str(conf),
        )
