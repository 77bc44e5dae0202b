"""Run the operator in-process: leader election, Kopf's watches, the work queues, events and metrics.

``run_controller(options, stop_event)`` is what ``volcano-py controller``, ``volcano-py up`` and the
integration tests call. Only the holder of the Lease runs handlers (Kopf in standalone mode, so no peering
CRD is needed); a standby waits for the Lease and takes over with empty caches that Kopf refills before any
handler runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import kopf

from volcano_py.api.controller_gates import HYPERNODE_CONTROLLER, SHARDING_CONTROLLER
from volcano_py.controllers.flow.worker import FlowControllers
from volcano_py.controllers.handlers import build_registry, register_job_watch
from volcano_py.controllers.hypernode.worker import TopologyDiscovery
from volcano_py.controllers.job.watch import JOB_POD_SELECTOR, KOPF_WATCH, InformerWatch, JobFeed, KopfWatch
from volcano_py.controllers.job.worker import JobWorker
from volcano_py.controllers.podgroup.worker import PlainPodGroups
from volcano_py.controllers.queue.worker import QueueWorker
from volcano_py.controllers.runtime.context import ControllerContext, ControllerOptions
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.controllers.sharding.worker import ShardingController
from volcano_py.kube import eventloop
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.health import MetricsServer
from volcano_py.kube.leader import LeaderElector, run_while_leading
from volcano_py.kube.waiting import within
from volcano_py.log import get_logger
from volcano_py.webhooks.server import enable_admission

_log = get_logger(__name__)

# Kopf's selector of core pods, for the server-side label selector of ``--job-watch kopf``.
PODS_SELECTOR = ("v1", "pods")

__all__ = ["ControllerOptions", "run_controller"]


def _connection_info(client: KubeClient) -> kopf.ConnectionInfo:
    """Kopf's credentials from the same configuration our own client uses (kubeconfig or in-cluster)."""
    cfg: Any = client.api_client.configuration
    token = None
    auth = (cfg.api_key or {}).get("authorization") or (cfg.api_key or {}).get("BearerToken")
    if auth:
        token = str(auth).removeprefix("Bearer ").strip()
    return kopf.ConnectionInfo(
        server=str(cfg.host),
        ca_path=cfg.ssl_ca_cert or None,
        insecure=not cfg.verify_ssl,
        scheme="Bearer" if token else None,
        token=token,
        certificate_path=cfg.cert_file or None,
        private_key_path=cfg.key_file or None,
        default_namespace="default",
    )


def _enable_webhooks(
    options: ControllerOptions,
    registry: kopf.OperatorRegistry,
    settings: kopf.OperatorSettings,
    client: KubeClient,
    metrics: ControllerMetrics,
) -> None:
    """Serve admission from this term's Kopf, with a certificate made now for the webhook's host names."""
    port = options.webhook_port
    assert port is not None
    service: dict[str, Any] | None = None
    hosts = list(options.webhook_hosts)
    if options.webhook_service:
        namespace, _, name = options.webhook_service.partition("/")
        if not namespace or not name:
            raise ValueError(f"--webhook-service {options.webhook_service!r}: write it as NAMESPACE/NAME")
        service = {"namespace": namespace, "name": name, "port": 443}
        hosts = [f"{name}.{namespace}.svc", f"{name}.{namespace}.svc.cluster.local", *hosts]
    cert_dir = Path(options.webhook_cert_dir or tempfile.mkdtemp(prefix="volcano-py-webhook-"))
    enable_admission(
        registry,
        settings,
        client,
        cert_dir=cert_dir,
        port=port,
        addr=options.webhook_addr,
        timeout_seconds=options.webhook_timeout_seconds,
        failure_policy=options.webhook_failure_policy,
        hosts=hosts,
        service=service,
        record=metrics.record_admission,
        scheduler_names=options.scheduler_names,
        feature_gates=options.feature_gates,
        admission_conf=options.admission_conf,
    )


async def _run_term(options: ControllerOptions, client: KubeClient, metrics: ControllerMetrics,
                    stop: asyncio.Event, may_write: Callable[[str], bool] = lambda _what: True,
                    ) -> None:  # fmt: skip
    """One leadership term: Kopf plus our workers until ``stop`` is set; ``may_write`` is the fence."""
    # Kopf logs every handler call at INFO; ours log what matters.
    logging.getLogger("kopf").setLevel(logging.WARNING)
    recorder = EventRecorder(client, component="volcano-py-controller")
    ctx = ControllerContext(
        options=options, client=client, recorder=recorder, metrics=metrics, may_write=may_write
    )
    registry = build_registry(ctx)
    flows = FlowControllers(ctx)
    flows.register(registry)
    topology = TopologyDiscovery(ctx) if options.controllers.enabled(HYPERNODE_CONTROLLER) else None
    if topology is not None:
        topology.register(registry)

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return _connection_info(client)

    settings = kopf.OperatorSettings()
    if options.webhook_port is not None:
        _enable_webhooks(options, registry, settings, client, metrics)
    # Jobs, their pods and PodGroups come from informers of our own (the pods by a server-side label
    # selector), not from Kopf indexes (runtime/context.py says why); ``--job-watch kopf`` has Kopf watch them
    # instead, with plain event handlers (job/watch.py). The workers start once all of them have listed, so
    # no Job is reconciled against a partial view of its pods or its PodGroup.
    namespaces = list(options.namespaces)
    scopes = list[str | None](namespaces) or [None]
    feed = JobFeed(ctx, flows.job_changed)
    watch: InformerWatch | KopfWatch
    if options.job_watch == KOPF_WATCH:
        watch = KopfWatch(client, feed, scopes)
        register_job_watch(registry, watch)
        settings.watching.label_selectors[PODS_SELECTOR] = JOB_POD_SELECTOR
    else:
        watch = InformerWatch(client, feed, scopes)
    jobs, queues = JobWorker(ctx), QueueWorker(ctx)
    kopf_stop = asyncio.Event()
    operator = asyncio.ensure_future(
        kopf.operator(
            registry=registry,
            settings=settings,
            standalone=True,
            clusterwide=not namespaces,
            namespaces=namespaces,
            stop_flag=kopf_stop,
        )
    )

    plain_pods = PlainPodGroups(ctx)
    plain_pod_informers = plain_pods.informers(scopes)

    async def once_listed(work: Callable[[], Awaitable[None]]) -> None:
        await ctx.ready.wait()
        await work()

    async def run_jobs_once_listed() -> None:
        clock = asyncio.get_running_loop().time
        began = clock()
        await watch.listed()
        ctx.ready.set()
        _log.info(
            "jobs listed", watch=options.job_watch, seconds=round(clock() - began, 2),
            jobs=len(ctx.jobs), podgroups=len(ctx.podgroups_by_key),
            pods=sum(len(pods) for pods in ctx.pods_by_job.values()),
        )  # fmt: skip
        await ctx.job_queue.run(jobs.handle, options.workers)

    async def run_plain_pods() -> None:
        async with asyncio.TaskGroup() as group:
            for informer in plain_pod_informers:
                group.create_task(informer.run())
            group.create_task(plain_pods.run())

    # Whatever a new Job does not wait for starts once its lists are in: a restarted controller's first
    # PodGroup should not wait while every pod of ours and every node is listed and decoded too.
    workers = [
        asyncio.ensure_future(recorder.run()),
        asyncio.ensure_future(watch.run()),
        asyncio.ensure_future(run_jobs_once_listed()),
        asyncio.ensure_future(once_listed(run_plain_pods)),
        # A queue's recount reads the PodGroups; a flow's sync reads the Jobs it owns.
        asyncio.ensure_future(once_listed(lambda: ctx.queue_queue.run(queues.handle, 2))),
        asyncio.ensure_future(once_listed(flows.run)),
    ]
    if topology is not None:
        workers.append(asyncio.ensure_future(once_listed(topology.run)))
    if options.controllers.enabled(SHARDING_CONTROLLER):
        # Informers of its own, and no Job waits for it: it starts at once.
        sharding = ShardingController(
            ctx, configmap=options.sharding_configmap, namespace=options.sharding_configmap_namespace
        )
        workers.append(asyncio.ensure_future(sharding.run()))
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([operator, stopper, *workers], return_when=asyncio.FIRST_COMPLETED)
    finally:
        # Our tasks first: Kopf waits for every task it did not see at its start before it returns.
        for task in [*workers, stopper]:
            task.cancel()
        await asyncio.gather(*workers, stopper, return_exceptions=True)
        kopf_stop.set()
        try:
            await within(asyncio.shield(operator), 10)
        except Exception as exc:  # the operator failed or would not stop: say so, and tear down anyway
            _log.warning("kopf operator ended abnormally", error=repr(exc))
            operator.cancel()
        await asyncio.gather(operator, return_exceptions=True)
        for key in list(ctx.delayed) + list(ctx.ttl_timers):
            ctx.cancel_timers(key)
        flows.stop()
    if operator.done() and not operator.cancelled() and operator.exception() and not stop.is_set():
        raise RuntimeError("the Kopf operator stopped") from operator.exception()


async def run_controller(options: ControllerOptions, stop_event: asyncio.Event) -> None:
    """Run until ``stop_event`` is set. Serves metrics throughout; handles resources while leader.

    The operator gets an event loop of its own, in a thread: when Kopf stops it cancels every task created
    in its loop after it started, which would take the caller's tasks (a scheduler or a test running in the
    same loop) down with it.
    """
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[BaseException | None] = loop.create_future()
    thread_stop = _CrossLoopStop()

    def report(outcome: BaseException | None) -> None:
        if not finished.done():
            finished.set_result(outcome)

    def thread_main() -> None:
        outcome: BaseException | None = None
        try:
            eventloop.run(_operator_main(options, thread_stop), options.event_loop)
        except BaseException as exc:  # handed to the caller's loop, which raises it
            outcome = exc
        with contextlib.suppress(RuntimeError):  # the caller's loop is already closed
            loop.call_soon_threadsafe(report, outcome)

    thread = threading.Thread(target=thread_main, name="volcano-py-controller", daemon=True)
    thread.start()
    stopped: asyncio.Future[Any] = asyncio.ensure_future(stop_event.wait())
    try:
        await asyncio.wait([finished, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        thread_stop.request()
        stopped.cancel()
        outcome = await asyncio.shield(finished)
    if outcome is not None:
        raise outcome


class _CrossLoopStop:
    """A stop request from the caller's loop delivered as an asyncio.Event in the operator's loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requested = False
        self._target: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

    def bind(self) -> asyncio.Event:
        event = asyncio.Event()
        with self._lock:
            self._target = (asyncio.get_running_loop(), event)
            if self._requested:
                event.set()
        return event

    def request(self) -> None:
        with self._lock:
            self._requested = True
            if self._target is not None:
                loop, event = self._target
                with contextlib.suppress(RuntimeError):  # the operator's loop has already finished
                    loop.call_soon_threadsafe(event.set)


async def _operator_main(options: ControllerOptions, stop: _CrossLoopStop) -> None:
    await _lead_or_stand_by(options, stop.bind())


async def _lead_or_stand_by(options: ControllerOptions, stop_event: asyncio.Event) -> None:
    api_client = await load_api_client(options.kubeconfig)
    client = KubeClient(api_client)
    metrics = ControllerMetrics()
    endpoint = MetricsServer(
        metrics, host=options.metrics_host, port=options.metrics_port, component="controller"
    )
    await endpoint.start()
    identity = options.identity or f"{socket.gethostname()}-{os.getpid()}"
    try:
        if not options.leader_elect:
            await _run_term(options, client, metrics, stop_event)
            return
        elector = LeaderElector(
            client,
            namespace=options.lease_namespace,
            name=options.lease_name,
            identity=identity,
            timing=options.lease_timing,
        )

        async def term(term_stop: asyncio.Event) -> None:
            await _run_term(options, client, metrics, term_stop, elector.may_write)

        await run_while_leading(elector, stop_event, term)
    finally:
        await endpoint.stop()
        await client.close()
