"""The web dashboard: queues, jobs and why they wait, GPUs by HyperNode, scheduler health (read-only).

``views`` and ``render`` are pure (objects in, rows and HTML out); ``state`` mirrors the cluster with
watches; ``server`` serves pages, JSON and server-sent events; ``run_dashboard`` runs it all in-process.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from volcano_py.api import constants as c


@dataclass(frozen=True, slots=True)
class DashboardOptions:
    kubeconfig: str | None = None
    host: str = "127.0.0.1"
    port: int = 8090
    scheduler_conf: str | None = None
    scheduler_metrics: str | None = None
    lease_namespace: str = "volcano-system"
    lease_name: str = "vc-scheduler"
    whatif_seconds: float = 10.0
    forecast_seconds: float = 10.0
    scheduler_names: tuple[str, ...] = (c.SCHEDULER_NAME,)

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port {self.port}: must be 0-65535 (0 picks a free one)")
        if self.whatif_seconds <= 0:
            raise ValueError(f"--whatif-seconds {self.whatif_seconds}: must be > 0")
        if self.forecast_seconds <= 0:
            raise ValueError(f"--forecast-seconds {self.forecast_seconds}: must be > 0")


async def run_dashboard(
    options: DashboardOptions, stop: asyncio.Event, started: asyncio.Future[int] | None = None
) -> None:
    """Serve the dashboard until ``stop`` is set; ``started`` receives the port once it listens."""
    from volcano_py.kube.client import KubeClient, load_api_client
    from volcano_py.scheduler.core import load_conf_file

    from .inputs import scheduler_conf
    from .server import serve
    from .state import DashboardState

    # A conf file given is read (and refused, naming the bad entry) before anything connects.
    given = (
        (load_conf_file(options.scheduler_conf), options.scheduler_conf) if options.scheduler_conf else None
    )
    client = KubeClient(await load_api_client(options.kubeconfig))
    try:
        conf, source = given or await scheduler_conf(client, None)
        state = DashboardState(
            client,
            conf,
            conf_source=source,
            lease_namespace=options.lease_namespace,
            lease_name=options.lease_name,
            metrics_url=options.scheduler_metrics,
            whatif_seconds=options.whatif_seconds,
            forecast_seconds=options.forecast_seconds,
            scheduler_names=options.scheduler_names,
        )
        await serve(state, host=options.host, port=options.port, stop=stop, started=started)
    finally:
        await client.close()
