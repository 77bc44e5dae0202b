"""The admission shell: Kopf handlers around the pure decisions, the TLS server, the webhook configurations.

How the operator wires it, before ``kopf.operator(registry=registry, settings=settings, ...)``::

    enable_admission(registry, settings, client, cert_dir=path, port=9443, url="https://127.0.0.1:9443")

which is these three steps (call them yourself for anything unusual)::

    register(registry, queues=ApiQueues(client), namespaces=ApiNamespaces(client))  # the Kopf handlers
    cert = configure_server(settings, port=9443, hosts=["127.0.0.1"], cert_dir=path)
    await install_configurations(client, name="volcano-py", ca_bundle=cert.ca_pem, url="https://127.0.0.1:9443")

For an in-cluster operator pass ``service={"namespace": ..., "name": ..., "port": 443}`` instead of ``url``
and the Service's DNS name in ``hosts``. ``client`` must be created in the event loop Kopf runs in (its
aiohttp session is bound to that loop): the handlers list queues through it on every admission.

``configure_server`` leaves ``settings.admission.managed`` unset: Kopf's managed configurations would use a
30-second timeout and its own names; ours (``configurations``) are short-timeout and scoped to Volcano kinds.
The API server calls ``<url>/<handler id>``, which Kopf routes to that one handler.
"""

from __future__ import annotations

import datetime
import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

import kopf

from volcano_py.api import constants
from volcano_py.api.admission_conf import AdmissionConf
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.api.objects import annotations_of, name_of, resource_version_of, with_resource_version
from volcano_py.api.problems import Problem
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import plain
from volcano_py.log import get_logger
from volcano_py.webhooks.admission_conf_file import AdmissionConfFile
from volcano_py.webhooks.common import Queues, denial
from volcano_py.webhooks.configurations import WEBHOOKS, pod_mutation_match, webhook_configurations
from volcano_py.webhooks.endpoint import AdmissionEndpoint
from volcano_py.webhooks.flow import validate_flow_object
from volcano_py.webhooks.hypernode import validate_hypernode_write
from volcano_py.webhooks.job import job_warnings, mutate_job, validate_job_create, validate_job_update
from volcano_py.webhooks.patch import PatchOp, apply_patch
from volcano_py.webhooks.pod import validate_pod_create
from volcano_py.webhooks.pod_gates import queue_allocation_gate
from volcano_py.webhooks.podgroup import in_default_queue, mutate_podgroup, validate_podgroup_create
from volcano_py.webhooks.queue import mutate_queue, validate_queue_delete, validate_queue_write
from volcano_py.webhooks.resource_groups import mutate_pod
from volcano_py.webhooks.review import GroupVersionResource
from volcano_py.webhooks.tls import WebhookCertificate, generate_certificate

_log = get_logger(__name__)
# What the API server reports to the client for a refused object: a bad request, not a server fault.
REJECTED = 400
ADMISSION_API = "/apis/admissionregistration.k8s.io/v1"
QUEUES_PATH = f"/apis/{constants.SCHEDULING_API_VERSION}/{constants.QUEUE_PLURAL}"


class QueueSource(Protocol):
    """Where admission reads the queues from; called once per request that needs them."""

    async def queues(self) -> Queues: ...


class NamespaceSource(Protocol):
    """Where PodGroup mutation reads a namespace's annotations from; None when it cannot be read."""

    async def annotations(self, namespace: str) -> Mapping[str, Any] | None: ...


class AdmissionConfSource(Protocol):
    """Where pod mutation reads the resource groups from (``AdmissionConfFile``); called per pod created."""

    def conf(self) -> AdmissionConf: ...


class ApiNamespaces:
    """A namespace's annotations read from the API server per PodGroup in the default queue."""

    def __init__(self, client: KubeClient) -> None:
        self._client = client

    async def annotations(self, namespace: str) -> Mapping[str, Any] | None:
        try:
            body = await self._client.get(f"/api/v1/namespaces/{namespace}")
        except ApiError as err:
            # As Volcano: a namespace that cannot be read leaves the PodGroup in its queue.
            _log.warning("could not read the namespace of a PodGroup", namespace=namespace, error=str(err))
            return None
        return annotations_of(body)


class ApiQueues:
    """Queues listed from the API server per request: never stale, and admissions are rare next to pods."""

    def __init__(self, client: KubeClient) -> None:
        self._client = client

    async def queues(self) -> Queues:
        listing = await self._client.get(QUEUES_PATH)
        return {name_of(item): item for item in listing.get("items", [])}


def _reject_if(problems: Sequence[Problem], *, kind: str, name: str, operation: str) -> None:
    if problems:
        _log.info(
            "admission denied", kind=kind, name=name, operation=operation, problems=[str(p) for p in problems]
        )
        raise kopf.AdmissionError(denial(problems), code=REJECTED)


def _apply_later(patch: kopf.Patch, ops: list[PatchOp]) -> None:
    # Kopf diffs the original body against the body after these functions to build the JSON Patch it returns.
    def transform(body: kopf.RawBody) -> None:
        apply_patch(cast(dict[str, Any], body), ops)

    if ops:
        patch.fns.append(transform)


# Called with (webhook id, "allowed" | "denied" | "error") after each admission request.
AdmissionRecorder = Callable[[str, str], None]


def _counted(webhook: str, handler: Callable[..., Any], record: AdmissionRecorder) -> Callable[..., Any]:
    async def counted(**kwargs: Any) -> None:
        try:
            result = handler(**kwargs)
            if inspect.isawaitable(result):
                await result
        except kopf.AdmissionError:
            record(webhook, "denied")
            raise
        except Exception:
            record(webhook, "error")  # Kopf answers 500: the API server applies the failurePolicy
            raise
        record(webhook, "allowed")

    return counted


def register(
    registry: kopf.OperatorRegistry,
    *,
    queues: QueueSource,
    namespaces: NamespaceSource | None = None,
    record: AdmissionRecorder | None = None,
    scheduler_names: Sequence[str] = (constants.SCHEDULER_NAME,),
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES,
    admission_conf: AdmissionConfSource | None = None,
) -> None:
    """Register the admission handlers into ``registry``; without ``namespaces`` a PodGroup does not take its
    namespace's queue. ``record`` hears each request's outcome (the controller's admission metric);
    ``scheduler_names``: whose pods the pod rules concern; ``feature_gates``: Volcano's, as given to
    admission; ``admission_conf``: the resource groups pods are mutated by. The pod mutating webhook is
    registered only when one of its rules is on (``pod_mutation_match``)."""

    def mutate_job_handler(body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
        _apply_later(patch, mutate_job(plain(body)))

    async def validate_job_handler(
        body: kopf.Body,
        old: kopf.Body | None,
        operation: str,
        name: str,
        warnings: list[str],
        **_: Any,
    ) -> None:
        if operation == "UPDATE" and old is not None:
            problems = validate_job_update(plain(old), plain(body))
        else:
            problems = validate_job_create(plain(body), await queues.queues())
            warnings.extend(job_warnings(plain(body)))
        _reject_if(problems, kind="Job", name=name, operation=operation)

    def mutate_queue_handler(body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
        _apply_later(patch, mutate_queue(plain(body)))

    async def validate_queue_handler(
        body: kopf.Body, old: kopf.Body | None, operation: str, name: str, **_: Any
    ) -> None:
        snapshot = await queues.queues()
        if operation == "DELETE":
            problems = validate_queue_delete(name, snapshot)
        else:
            previous = plain(old) if operation == "UPDATE" and old is not None else None
            problems = validate_queue_write(plain(body), snapshot, previous)
        _reject_if(problems, kind="Queue", name=name, operation=operation)

    async def mutate_podgroup_handler(
        body: kopf.Body, patch: kopf.Patch, namespace: str | None, **_: Any
    ) -> None:
        podgroup = plain(body)
        if namespaces is None or not in_default_queue(podgroup):
            return  # only a PodGroup in the default queue costs a namespace read
        _apply_later(patch, mutate_podgroup(podgroup, await namespaces.annotations(namespace or "default")))

    def mutate_pod_handler(body: kopf.Body, patch: kopf.Patch, namespace: str | None, **_: Any) -> None:
        # Volcano's order: the resource group's patch, then the queue-allocation gate.
        pod = plain(body)
        ops = mutate_pod(pod, namespace or "", admission_conf.conf()) if admission_conf is not None else []
        _apply_later(patch, [*ops, *queue_allocation_gate(pod, feature_gates)])

    def validate_pod_handler(body: kopf.Body, operation: str, name: str, **_: Any) -> None:
        problems = validate_pod_create(plain(body), scheduler_names)
        _reject_if(problems, kind="Pod", name=name, operation=operation)

    def validate_hypernode_handler(body: kopf.Body, operation: str, name: str, **_: Any) -> None:
        _reject_if(validate_hypernode_write(plain(body)), kind="HyperNode", name=name, operation=operation)

    async def validate_podgroup_handler(body: kopf.Body, operation: str, name: str, **_: Any) -> None:
        problems = validate_podgroup_create(plain(body), await queues.queues())
        _reject_if(problems, kind="PodGroup", name=name, operation=operation)

    def validate_flow_handler(body: kopf.Body, operation: str, name: str, **_: Any) -> None:
        flow = plain(body)
        _reject_if(validate_flow_object(flow), kind=str(flow.get("kind")), name=name, operation=operation)

    handlers: dict[str, Callable[..., Any]] = {
        "mutate-job": mutate_job_handler,
        "validate-job": validate_job_handler,
        "mutate-queue": mutate_queue_handler,
        "validate-queue": validate_queue_handler,
        "validate-podgroup": validate_podgroup_handler,
        "mutate-podgroup": mutate_podgroup_handler,
        "mutate-pod": mutate_pod_handler,
        "validate-pod": validate_pod_handler,
        "validate-hypernode": validate_hypernode_handler,
        "validate-jobflow": validate_flow_handler,
        "validate-jobtemplate": validate_flow_handler,
        "validate-cronjob": validate_flow_handler,
    }
    for webhook in WEBHOOKS:
        if webhook.pod_mutation and pod_mutation_match(feature_gates, admission_conf is not None) is None:
            continue
        decorator = kopf.on.mutate if webhook.type == "mutating" else kopf.on.validate
        decorator(
            webhook.group,
            webhook.version,
            webhook.plural,
            id=webhook.id,
            operations=list(webhook.operations),
            registry=registry,
        )(handlers[webhook.id] if record is None else _counted(webhook.id, handlers[webhook.id], record))


def admitted_resources() -> dict[str, GroupVersionResource]:
    """Each webhook's path (its id) and the resource it admits: a review for another is refused."""
    return {hook.id: GroupVersionResource(hook.group, hook.version, hook.plural) for hook in WEBHOOKS}


def configure_server(
    settings: kopf.OperatorSettings,
    *,
    cert_dir: Path,
    hosts: Sequence[str] = ("127.0.0.1", "localhost"),
    addr: str = "0.0.0.0",
    port: int = 9443,
    now: datetime.datetime | None = None,
) -> WebhookCertificate:
    """Serve admission over TLS with a new self-signed certificate for ``hosts``; return it (for caBundle).
    The server holds clients to ``endpoint.WEBHOOK_LIMITS``."""
    cert = generate_certificate(hosts, now=now or datetime.datetime.now(datetime.UTC))
    cert_dir.mkdir(parents=True, exist_ok=True)
    files = {"ca.crt": cert.ca_pem, "tls.crt": cert.cert_pem, "tls.key": cert.key_pem}
    for filename, content in files.items():
        path = cert_dir / filename
        path.write_bytes(content)
        path.chmod(0o600)
    settings.admission.server = AdmissionEndpoint(
        addr=addr,
        port=port,
        host=hosts[0],
        certfile=cert_dir / "tls.crt",
        pkeyfile=cert_dir / "tls.key",
        cafile=cert_dir / "ca.crt",
        webhooks=admitted_resources(),
    )
    settings.admission.managed = None
    return cert


async def _upsert(client: KubeClient, plural: str, body: dict[str, Any]) -> None:
    path = f"{ADMISSION_API}/{plural}"
    name = name_of(body)
    try:
        current = await client.get(f"{path}/{name}")
    except ApiError as err:
        if not err.not_found:
            raise
        await client.create(path, body)
        return
    await client.replace(f"{path}/{name}", with_resource_version(body, resource_version_of(current)))


async def install_configurations(
    client: KubeClient,
    *,
    name: str,
    ca_bundle: bytes,
    url: str | None = None,
    service: Mapping[str, Any] | None = None,
    timeout_seconds: int = 5,
    failure_policy: str = "Fail",
    object_selector: Mapping[str, Any] | None = None,
    scheduler_names: Sequence[str] = (constants.SCHEDULER_NAME,),
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES,
    admission_conf: bool = False,
) -> None:
    """Create or replace our Mutating- and ValidatingWebhookConfiguration named ``name``; ``admission_conf``
    adds the pod mutating webhook (the server has a volcano-admission.conf)."""
    mutating, validating = webhook_configurations(
        name=name,
        ca_bundle=ca_bundle,
        url=url,
        service=service,
        timeout_seconds=timeout_seconds,
        failure_policy=failure_policy,
        object_selector=object_selector,
        scheduler_names=scheduler_names,
        feature_gates=feature_gates,
        admission_conf=admission_conf,
    )
    await _upsert(client, "mutatingwebhookconfigurations", mutating)
    await _upsert(client, "validatingwebhookconfigurations", validating)
    _log.info("webhook configurations installed", name=name, url=url, service=service)


async def remove_configurations(client: KubeClient, *, name: str) -> None:
    """Delete both configurations (a stopped operator should not leave Volcano kinds failing admission)."""
    for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        try:
            await client.delete(f"{ADMISSION_API}/{plural}/{name}")
        except ApiError as err:
            if not err.not_found:
                raise


def enable_admission(
    registry: kopf.OperatorRegistry,
    settings: kopf.OperatorSettings,
    client: KubeClient,
    *,
    cert_dir: Path,
    port: int = 9443,
    addr: str = "0.0.0.0",
    hosts: Sequence[str] = ("127.0.0.1", "localhost"),
    url: str | None = None,
    service: Mapping[str, Any] | None = None,
    name: str = "volcano-py",
    timeout_seconds: int = 5,
    failure_policy: str = "Fail",
    record: AdmissionRecorder | None = None,
    scheduler_names: Sequence[str] = (constants.SCHEDULER_NAME,),
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES,
    admission_conf: str | None = None,
) -> WebhookCertificate:
    """Handlers, TLS server and (at Kopf startup) webhook configurations: admission for one operator.

    The configurations are installed from a startup handler, just before Kopf starts serving; they stay when
    the operator stops, so Volcano kinds fail fast until a leader serves again (pods too when
    ``admission_conf``, a volcano-admission.conf path, adds the pod mutating webhook; a bad conf raises here).
    """
    conf_file = AdmissionConfFile(admission_conf) if admission_conf else None
    register(
        registry,
        queues=ApiQueues(client),
        namespaces=ApiNamespaces(client),
        record=record,
        scheduler_names=scheduler_names,
        feature_gates=feature_gates,
        admission_conf=conf_file,
    )
    cert = configure_server(settings, cert_dir=cert_dir, hosts=hosts, addr=addr, port=port)
    base_url = url if url is not None or service is not None else f"https://{hosts[0]}:{port}"

    async def install(**_: Any) -> None:
        await install_configurations(
            client,
            name=name,
            ca_bundle=cert.ca_pem,
            url=base_url,
            service=service,
            timeout_seconds=timeout_seconds,
            failure_policy=failure_policy,
            scheduler_names=scheduler_names,
            feature_gates=feature_gates,
            admission_conf=conf_file is not None,
        )

    kopf.on.startup(id="install-webhook-configurations", registry=registry)(install)
    return cert
