"""``volcano-py dashboard``: the read-only web dashboard (see ``volcano_py.dashboard``)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Any

from volcano_py.api import constants as c
from volcano_py.dashboard import DashboardOptions, run_dashboard
from volcano_py.scheduler.core import ConfError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dashboard",
        help="serve the web dashboard: queues, jobs and why they wait, GPUs by HyperNode, scheduler health",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then $KUBECONFIG)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8090, help="port to listen on (default 8090; 0: any)")
    parser.add_argument(
        "--scheduler-conf",
        help="volcano-scheduler.conf for deserved shares and what-ifs (default: the deployed ConfigMap "
        "volcano-system/volcano-scheduler-configmap, else the built-in default)",
    )
    parser.add_argument(
        "--scheduler-metrics",
        metavar="URL",
        help="the scheduler's /metrics URL, for its cycle time (e.g. http://volcano-scheduler-service."
        "volcano-system:8080/metrics)",
    )
    parser.add_argument(
        "--lease-namespace", default="volcano-system", help="namespace of the scheduler Lease"
    )
    parser.add_argument("--lease-name", default="vc-scheduler", help="name of the scheduler Lease")
    parser.add_argument(
        "--whatif-seconds",
        type=float,
        default=10.0,
        help="seconds one what-would-make-it-run search may take (default 10; the job page fills it in)",
    )
    parser.add_argument(
        "--forecast-seconds",
        type=float,
        default=10.0,
        help="seconds one position-and-estimated-start forecast may take (default 10; redone on changes)",
    )
    parser.add_argument(
        "--scheduler-name",
        action="append",
        dest="scheduler_names",
        metavar="NAME",
        help=f"the scheduler's name(s) (default: {c.SCHEDULER_NAME})",
    )
    parser.set_defaults(func=_run)


async def _serve(options: DashboardOptions) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    started: asyncio.Future[int] = loop.create_future()

    async def announce() -> None:
        port = await started
        print(f"dashboard: http://{options.host}:{port}/", flush=True)

    announcer = asyncio.ensure_future(announce())
    try:
        await run_dashboard(options, stop, started)
    finally:
        announcer.cancel()


def _run(args: argparse.Namespace) -> int:
    try:
        options = DashboardOptions(
            kubeconfig=args.kubeconfig,
            host=args.host,
            port=args.port,
            scheduler_conf=args.scheduler_conf,
            scheduler_metrics=args.scheduler_metrics,
            lease_namespace=args.lease_namespace,
            lease_name=args.lease_name,
            whatif_seconds=args.whatif_seconds,
            forecast_seconds=args.forecast_seconds,
            scheduler_names=tuple(args.scheduler_names or (c.SCHEDULER_NAME,)),
        )
        asyncio.run(_serve(options))
    except (ValueError, ConfError) as err:
        print(f"volcano-py dashboard: {err}", file=sys.stderr)
        return 2
    return 0
