"""The Mutating/ValidatingWebhookConfiguration objects that route Volcano's kinds to the server, and the
pods Volcano's pod rules concern.

Scope is the safety property: rules name Volcano's groups and plurals, never ``*``, so when the operator is
down only Volcano objects wait, and ``timeoutSeconds`` is short so they fail fast with a clear "failed calling
webhook" instead of hanging a ``kubectl apply`` for 30 seconds. ``failurePolicy: Fail`` on these kinds is
deliberate: admitting a Job without its defaults and checks would break it later, obscurely. The pod webhook
is Volcano's (``validatepod.volcano.sh``: Fail, not in the system namespaces), narrowed further by
matchConditions to the pods its rule can refuse: scheduled by us and carrying a disruption-budget annotation.
Every other pod, any other scheduler's above all, never calls us, so an outage never blocks it.

The pod mutating webhook (``mutatepod.volcano.sh``, resource groups of ``volcano-admission.conf``) is the one
exception: a group may take every pod of a namespace, whatever its scheduler, so it must see them all (outside
the system namespaces, as Volcano's). It is therefore installed only when an admission conf is given. With
only the SchedulingGatesQueueAdmission feature on, it is installed for the queue-allocation gate alone and
sees only the pods that opt in to it. With neither, no pod ever calls us.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from volcano_py.api import constants, features
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates

JSON = dict[str, Any]
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
DEFAULT_TIMEOUT_SECONDS: Final = 5
FAILURE_POLICIES: Final = ("Fail", "Ignore")


@dataclass(frozen=True, slots=True)
class Webhook:
    """One admission endpoint: ``id`` is both the Kopf handler id and the URL path the API server calls."""

    id: str
    name: str  # Volcano's webhook name, so tools that look for it find ours
    type: Literal["mutating", "validating"]
    group: str
    version: str
    plural: str
    operations: tuple[Operation, ...]
    # Volcano's namespaceSelector: not in its own namespace nor kube-system.
    outside_system_namespaces: bool = False
    # "pods": only pods we schedule that carry a disruption-budget annotation; "default-queue": only PodGroups
    # in the default queue (the mutation changes nothing else).
    match: Literal["", "pods", "default-queue", "queue-gate"] = ""
    # The pod mutation: served only when one of its rules is on (see ``pod_mutation_match``).
    pod_mutation: bool = False


def pod_mutation_match(gates: FeatureGates, admission_conf: bool) -> Literal["", "queue-gate"] | None:
    """Which pods the pod mutating webhook must see: every pod outside the system namespaces when an admission
    conf's resource groups may take any of them; only pods that opt in to the queue-allocation gate when that
    feature alone is on; ``None``, no webhook at all, when neither is."""
    if admission_conf:
        return ""
    if features.SCHEDULING_GATES_QUEUE_ADMISSION in gates.enabled:
        return "queue-gate"
    return None


WEBHOOKS: Final = (
    Webhook(
        "mutate-job",
        "mutatejob.volcano.sh",
        "mutating",
        constants.BATCH_GROUP,
        constants.BATCH_VERSION,
        constants.JOB_PLURAL,
        ("CREATE",),
    ),
    Webhook(
        "validate-job",
        "validatejob.volcano.sh",
        "validating",
        constants.BATCH_GROUP,
        constants.BATCH_VERSION,
        constants.JOB_PLURAL,
        ("CREATE", "UPDATE"),
    ),
    Webhook(
        "mutate-queue",
        "mutatequeue.volcano.sh",
        "mutating",
        constants.SCHEDULING_GROUP,
        constants.SCHEDULING_VERSION,
        constants.QUEUE_PLURAL,
        ("CREATE",),
    ),
    Webhook(
        "validate-queue",
        "validatequeue.volcano.sh",
        "validating",
        constants.SCHEDULING_GROUP,
        constants.SCHEDULING_VERSION,
        constants.QUEUE_PLURAL,
        ("CREATE", "UPDATE", "DELETE"),
    ),
    Webhook(
        "validate-podgroup",
        "validatepodgroup.volcano.sh",
        "validating",
        constants.SCHEDULING_GROUP,
        constants.SCHEDULING_VERSION,
        constants.PODGROUP_PLURAL,
        ("CREATE",),
    ),
    Webhook(
        "mutate-podgroup",
        "mutatepodgroup.volcano.sh",
        "mutating",
        constants.SCHEDULING_GROUP,
        constants.SCHEDULING_VERSION,
        constants.PODGROUP_PLURAL,
        ("CREATE",),
        outside_system_namespaces=True,
        match="default-queue",
    ),
    Webhook(
        "mutate-pod",
        "mutatepod.volcano.sh",
        "mutating",
        "",
        "v1",
        "pods",
        ("CREATE",),
        outside_system_namespaces=True,
        pod_mutation=True,
    ),
    Webhook(
        "validate-pod",
        "validatepod.volcano.sh",
        "validating",
        "",
        "v1",
        "pods",
        ("CREATE",),
        outside_system_namespaces=True,
        match="pods",
    ),
    Webhook(
        "validate-hypernode",
        "validatehypernodes.volcano.sh",
        "validating",
        constants.TOPOLOGY_GROUP,
        constants.TOPOLOGY_VERSION,
        constants.HYPERNODE_PLURAL,
        ("CREATE", "UPDATE"),
    ),
    Webhook(
        "validate-jobflow",
        "validatejobflow.volcano.sh",
        "validating",
        constants.FLOW_GROUP,
        constants.FLOW_VERSION,
        constants.JOBFLOW_PLURAL,
        ("CREATE", "UPDATE"),
    ),
    Webhook(
        "validate-jobtemplate",
        "validatejobtemplate.volcano.sh",
        "validating",
        constants.FLOW_GROUP,
        constants.FLOW_VERSION,
        constants.JOBTEMPLATE_PLURAL,
        ("CREATE", "UPDATE"),
    ),
    Webhook(
        "validate-cronjob",
        "validatecronjob.volcano.sh",
        "validating",
        constants.BATCH_GROUP,
        constants.BATCH_VERSION,
        constants.CRONJOB_PLURAL,
        ("CREATE", "UPDATE"),
    ),
)


def _client_config(
    webhook: Webhook, *, url: str | None, service: Mapping[str, Any] | None, ca: bytes
) -> JSON:
    config: JSON = {"caBundle": base64.b64encode(ca).decode("ascii")}
    if url is not None:
        config["url"] = f"{url.rstrip('/')}/{webhook.id}"
    elif service is not None:
        config["service"] = {**service, "path": f"/{webhook.id}"}
    else:
        raise ValueError("give the webhook server's base url or its in-cluster service")
    return config


def _cel_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def match_conditions(match: str, scheduler_names: Sequence[str]) -> list[JSON]:
    """The CEL conditions that keep requests the webhook would admit unchanged from ever reaching it."""
    if match == "pods":
        names = ", ".join(_cel_string(name) for name in scheduler_names)
        keys = " || ".join(
            f"{_cel_string(key)} in object.metadata.annotations"
            for key in (constants.JDB_MIN_AVAILABLE_KEY, constants.JDB_MAX_UNAVAILABLE_KEY)
        )
        return [
            {
                "name": "scheduled-by-volcano",
                "expression": f"has(object.spec.schedulerName) && object.spec.schedulerName in [{names}]",
            },
            {
                "name": "has-disruption-budget",
                "expression": f"has(object.metadata.annotations) && ({keys})",
            },
        ]
    if match == "queue-gate":
        key = _cel_string(constants.QUEUE_ALLOCATION_GATE_KEY)
        return [
            {
                "name": "queue-allocation-gate-opt-in",
                "expression": f"has(object.metadata.annotations) && {key} in object.metadata.annotations && "
                f"object.metadata.annotations[{key}] == 'true'",
            }
        ]
    if match == "default-queue":
        default = _cel_string(constants.DEFAULT_QUEUE)
        return [
            {
                "name": "in-default-queue",
                "expression": "!has(object.spec) || !has(object.spec.queue) || "
                f"object.spec.queue == {default}",
            }
        ]
    return []


def webhook_configurations(
    *,
    name: str,
    ca_bundle: bytes,
    url: str | None = None,
    service: Mapping[str, Any] | None = None,
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS,
    failure_policy: str = "Fail",
    object_selector: Mapping[str, Any] | None = None,
    scheduler_names: Sequence[str] = (constants.SCHEDULER_NAME,),
    system_namespace: str | None = None,
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES,
    admission_conf: bool = False,
) -> tuple[JSON, JSON]:
    """``(MutatingWebhookConfiguration, ValidatingWebhookConfiguration)`` named ``name``.

    ``url`` is the server's base URL (an out-of-cluster operator, e.g. ``https://127.0.0.1:9443``); otherwise
    ``service`` is ``{"namespace", "name", "port"}`` of its in-cluster Service. ``object_selector`` narrows
    the webhooks to labelled objects (tests sharing a cluster use it). ``scheduler_names``: whose pods the pod
    rules concern; ``system_namespace``: where we run (the service's namespace, else volcano-system), which
    with kube-system is out of the pod and PodGroup hooks' reach, as Volcano keeps its own. The pod mutating
    webhook is configured only when ``admission_conf`` (the server has a volcano-admission.conf) or
    ``feature_gates`` (SchedulingGatesQueueAdmission) give it a rule (``pod_mutation_match``).
    """
    if not 1 <= timeout_seconds <= 30:
        raise ValueError(f"timeout_seconds={timeout_seconds} must be within 1..30 (the API server's limits)")
    if failure_policy not in FAILURE_POLICIES:
        raise ValueError(f"failure_policy={failure_policy!r} must be one of {', '.join(FAILURE_POLICIES)}")
    hooks: dict[str, list[JSON]] = {"mutating": [], "validating": []}
    for webhook in WEBHOOKS:
        match = webhook.match
        if webhook.pod_mutation:
            found = pod_mutation_match(feature_gates, admission_conf)
            if found is None:
                continue
            match = found
        entry: JSON = {
            "name": webhook.name,
            "clientConfig": _client_config(webhook, url=url, service=service, ca=ca_bundle),
            "rules": [
                {
                    "apiGroups": [webhook.group],
                    "apiVersions": [webhook.version],
                    "resources": [webhook.plural],
                    "operations": list(webhook.operations),
                    "scope": "*",
                }
            ],
            "failurePolicy": failure_policy,
            "matchPolicy": "Equivalent",
            "sideEffects": "None",
            "timeoutSeconds": timeout_seconds,
            "admissionReviewVersions": ["v1"],
        }
        if object_selector is not None:
            entry["objectSelector"] = dict(object_selector)
        if webhook.outside_system_namespaces:
            ours = system_namespace or (service or {}).get("namespace") or constants.VOLCANO_SYSTEM_NAMESPACE
            excluded = sorted({ours, "kube-system"})
            entry["namespaceSelector"] = {
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": excluded}
                ]
            }
        if conditions := match_conditions(match, scheduler_names):
            entry["matchConditions"] = conditions
        if webhook.type == "mutating":
            entry["reinvocationPolicy"] = "Never"
        hooks[webhook.type].append(entry)
    mutating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": hooks["mutating"],
    }
    validating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": hooks["validating"],
    }
    return mutating, validating
