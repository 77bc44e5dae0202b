"""Our admission webhooks served in-process against the session's real control plane, for integration tests.

The webhook configurations carry an objectSelector on a label of the caller's, so only the caller's objects
go through them and other tests sharing the session cluster never depend on this server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import kopf

from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.webhooks.admission_conf_file import AdmissionConfFile
from volcano_py.webhooks.server import (
    ApiNamespaces,
    ApiQueues,
    configure_server,
    install_configurations,
    register,
    remove_configurations,
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class AdmissionServer(threading.Thread):
    """Kopf with only our admission handlers, on its own event loop, so blocking kubectl cannot stall it."""

    def __init__(
        self,
        cluster: DevCluster,
        cert_dir: Path,
        label: Mapping[str, str],
        feature_gates: FeatureGates = DEFAULT_FEATURE_GATES,
        admission_conf: Path | None = None,
    ) -> None:
        super().__init__(daemon=True, name="admission-server")
        self.feature_gates = feature_gates
        self.cluster = cluster
        # A volcano-admission.conf: adds the pod mutating webhook, as ``--admission-conf`` does.
        self.admission_conf = admission_conf
        self.cert_dir = cert_dir
        self.label = dict(label)
        self.port = free_port()
        self.name_ = f"volcano-py-test-{'-'.join(self.label.values())}"
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as err:  # surfaced by the fixture
            self.error = err
            self.ready.set()

    async def _main(self) -> None:
        client = KubeClient(await load_api_client(str(self.cluster.kubeconfig)))
        registry = kopf.OperatorRegistry()
        conf = AdmissionConfFile(self.admission_conf) if self.admission_conf is not None else None
        register(
            registry,
            queues=ApiQueues(client),
            namespaces=ApiNamespaces(client),
            feature_gates=self.feature_gates,
            admission_conf=conf,
        )

        @kopf.on.login(registry=registry)
        def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
            return kopf.login_with_kubeconfig(**kwargs)

        settings = kopf.OperatorSettings()
        settings.posting.enabled = False
        cert = configure_server(
            settings, cert_dir=self.cert_dir, hosts=["127.0.0.1"], addr="127.0.0.1", port=self.port
        )
        operator = asyncio.ensure_future(
            kopf.operator(
                registry=registry, settings=settings, standalone=True, clusterwide=True, stop_flag=self.stop
            )
        )
        try:
            await self._wait_listening(operator)
            await install_configurations(
                client,
                name=self.name_,
                ca_bundle=cert.ca_pem,
                url=f"https://127.0.0.1:{self.port}",
                object_selector={"matchLabels": self.label},
                feature_gates=self.feature_gates,
                admission_conf=conf is not None,
            )
            self.ready.set()
            await operator
        finally:
            await remove_configurations(client, name=self.name_)
            await client.close()

    async def _wait_listening(self, operator: asyncio.Future[None]) -> None:
        for _ in range(300):
            if operator.done():
                operator.result()
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return
            await asyncio.sleep(0.1)
        raise TimeoutError(f"the admission server did not listen on 127.0.0.1:{self.port} within 30s")


@contextlib.contextmanager
def serving_admission(
    cluster: DevCluster,
    cert_dir: Path,
    label: Mapping[str, str],
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES,
    admission_conf: Path | None = None,
) -> Iterator[AdmissionServer]:
    """Admission for objects carrying ``label`` while the block runs; the configurations are removed after.
    ``feature_gates``: admission's ``--feature-gates``; ``admission_conf``: a volcano-admission.conf, whose
    resource groups then mutate the labelled pods."""
    previous = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = str(cluster.kubeconfig)  # read by kopf.login_with_kubeconfig
    server = AdmissionServer(cluster, cert_dir, label, feature_gates, admission_conf)
    server.start()
    server.ready.wait(60)
    try:
        if server.error is not None:
            raise server.error
        assert server.ready.is_set(), "the admission server did not become ready in 60s"
        yield server
    finally:
        server.stop.set()
        server.join(30)
        if previous is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = previous
