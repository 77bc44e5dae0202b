"""Our admission webhook server served in-process without a cluster, for the webhook benchmark and tests.

``WebhookThread`` runs the real ``AdmissionEndpoint`` with Kopf's real admission engine and our registered
handlers (``webhooks.server.register``) on an event loop of its own, in a thread, as the controller does;
only the queue listing is a fixed one instead of the API server's. Kopf's engine is bound here the way
Kopf's reactor binds it (its insights list the resources our webhooks admit, as discovery would).
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import ssl
import tempfile
import threading
from pathlib import Path
from typing import Any

import kopf
from kopf._cogs.structs import ephemera, references
from kopf._core.engines import admission, indexing
from kopf._core.reactor import inventory

from benchmarks.benchlib.objects import container, gang_job
from volcano_py.kube import eventloop
from volcano_py.kube.serving import ServingLimits
from volcano_py.webhooks.common import Queues
from volcano_py.webhooks.endpoint import WEBHOOK_LIMITS, AdmissionEndpoint
from volcano_py.webhooks.server import admitted_resources, register
from volcano_py.webhooks.tls import generate_certificate

JOB_RESOURCE = {"group": "batch.volcano.sh", "version": "v1alpha1", "resource": "jobs"}
QUEUES: Queues = {"default": {"metadata": {"name": "default"}, "status": {"state": "Open"}}}


def job(name: str = "bench", workers: int = 4) -> dict[str, Any]:
    """A valid Volcano Job with a master and ``workers`` workers."""
    return gang_job(name, workers, container("main", cpu="1", memory="1Gi")).ns("default").obj()


def job_review(uid: str, body: dict[str, Any] | None = None, operation: str = "CREATE") -> dict[str, Any]:
    """The AdmissionReview the API server sends for a Job ``operation``."""
    obj = body if body is not None else job()
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "batch.volcano.sh", "version": "v1alpha1", "kind": "Job"},
            "resource": dict(JOB_RESOURCE),
            "name": obj["metadata"]["name"],
            "namespace": obj["metadata"].get("namespace", "default"),
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
            "object": obj,
            "oldObject": obj if operation == "UPDATE" else None,
            "dryRun": False,
        },
    }


class _FixedQueues:
    async def queues(self) -> Queues:
        return QUEUES


def kopf_engine(registry: kopf.OperatorRegistry) -> kopf.WebhookFn:
    """Kopf's admission engine for ``registry``, bound as Kopf's reactor binds it."""
    insights = references.Insights()
    for hook in admitted_resources().values():
        insights.webhook_resources.add(references.Resource(hook.group, hook.version, hook.resource))
    return functools.partial(
        admission.serve_admission_request,
        settings=kopf.OperatorSettings(),
        registry=registry,
        insights=insights,
        memories=inventory.ResourceMemories(),
        memobase=ephemera.AnyMemo(ephemera.Memo()),
        indices=indexing.OperatorIndexers().indices,
    )


class WebhookThread(threading.Thread):
    """The webhook server on 127.0.0.1 (a free port), in a thread with its own ``event_loop``."""

    def __init__(
        self, limits: ServingLimits = WEBHOOK_LIMITS, event_loop: str = eventloop.DEFAULT_EVENT_LOOP
    ) -> None:
        super().__init__(daemon=True, name="webhook-server")
        self.cert_dir = Path(tempfile.mkdtemp(prefix="volcano-py-webhook-"))
        cert = generate_certificate(["127.0.0.1"], now=datetime.datetime.now(datetime.UTC))
        for filename, content in {
            "ca.crt": cert.ca_pem,
            "tls.crt": cert.cert_pem,
            "tls.key": cert.key_pem,
        }.items():
            (self.cert_dir / filename).write_bytes(content)
        self.client_tls = ssl.create_default_context(cafile=str(self.cert_dir / "ca.crt"))
        self.endpoint = AdmissionEndpoint(
            addr="127.0.0.1",
            port=0,
            host="127.0.0.1",
            certfile=self.cert_dir / "tls.crt",
            pkeyfile=self.cert_dir / "tls.key",
            cafile=self.cert_dir / "ca.crt",
            webhooks=admitted_resources(),
            limits=limits,
        )
        self.event_loop = event_loop
        self.ready = threading.Event()
        self._stopper: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self.error: BaseException | None = None

    @property
    def port(self) -> int:
        return self.endpoint.port

    def run(self) -> None:
        try:
            eventloop.run(self._main(), self.event_loop)
        except BaseException as err:  # surfaced by start_serving
            self.error = err
            self.ready.set()

    async def _main(self) -> None:
        stop = asyncio.Event()
        self._stopper = (asyncio.get_running_loop(), stop)
        registry = kopf.OperatorRegistry()
        register(registry, queues=_FixedQueues())
        serving = self.endpoint(kopf_engine(registry))
        await anext(serving)
        self.ready.set()
        await stop.wait()
        await serving.aclose()

    def start_serving(self) -> WebhookThread:
        self.start()
        self.ready.wait(30)
        if self.error is not None:
            raise self.error
        assert self.ready.is_set(), "the webhook server did not listen within 30 s"
        return self

    def stop(self) -> None:
        if self._stopper is not None:
            loop, event = self._stopper
            loop.call_soon_threadsafe(event.set)
        self.join(10)
