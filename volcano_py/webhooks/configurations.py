"""The Mutating/ValidatingWebhookConfiguration objects that route our kinds (and only them) to the server.

Scope is the safety property: rules name Volcano's groups and plurals, never pods or ``*``, so when the
operator is down only Volcano objects wait, and ``timeoutSeconds`` is short so they fail fast with a clear
"failed calling webhook" instead of hanging a ``kubectl apply`` for 30 seconds. ``failurePolicy: Fail`` on
these kinds is deliberate: admitting a Job without its defaults and checks would break it later, obscurely.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from volcano_py.api import constants

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


def webhook_configurations(
    *,
    name: str,
    ca_bundle: bytes,
    url: str | None = None,
    service: Mapping[str, Any] | None = None,
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS,
    failure_policy: str = "Fail",
    object_selector: Mapping[str, Any] | None = None,
) -> tuple[JSON, JSON]:
    """``(MutatingWebhookConfiguration, ValidatingWebhookConfiguration)`` named ``name``.

    ``url`` is the server's base URL (an out-of-cluster operator, e.g. ``https://127.0.0.1:9443``); otherwise
    ``service`` is ``{"namespace", "name", "port"}`` of its in-cluster Service. ``object_selector`` narrows
    the webhooks to labelled objects (tests sharing a cluster use it).
    """
    if not 1 <= timeout_seconds <= 30:
        raise ValueError(f"timeout_seconds={timeout_seconds} must be within 1..30 (the API server's limits)")
    if failure_policy not in FAILURE_POLICIES:
        raise ValueError(f"failure_policy={failure_policy!r} must be one of {', '.join(FAILURE_POLICIES)}")
    hooks: dict[str, list[JSON]] = {"mutating": [], "validating": []}
    for webhook in WEBHOOKS:
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
