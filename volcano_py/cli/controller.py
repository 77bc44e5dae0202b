"""``volcano-py controller``: the operator process (Job, PodGroup, Queue, Command and TTL controllers,
HyperNode discovery, and the sharding controller when ``--controllers`` turns it on)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.controller_gates import DEFAULT_CONTROLLERS, OPTIONAL_CONTROLLERS, parse_controller_gates
from volcano_py.api.features import parse_feature_gates
from volcano_py.cli.scheduler import add_feature_gates_argument, add_lease_timing_arguments, lease_timing_from
from volcano_py.controllers.job.watch import INFORMER_WATCH, JOB_WATCHES
from volcano_py.controllers.operator import ControllerOptions, run_controller
from volcano_py.kube.eventloop import DEFAULT_EVENT_LOOP, EVENT_LOOPS, loop_factory
from volcano_py.webhooks.admission_conf_file import AdmissionConfFile
from volcano_py.webhooks.configurations import DEFAULT_TIMEOUT_SECONDS, FAILURE_POLICIES


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "controller", help="run the operator: Jobs to PodGroups and pods, Queues, Commands, TTL"
    )
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then $KUBECONFIG)")
    parser.add_argument(
        "--namespace",
        action="append",
        dest="namespaces",
        metavar="NS",
        help="watch only this namespace; repeatable (default: the whole cluster)",
    )
    parser.add_argument(
        "--scheduler-name",
        action="append",
        dest="scheduler_names",
        metavar="NAME",
        help=f"group plain pods with this schedulerName; repeatable (default: {c.SCHEDULER_NAME})",
    )
    parser.add_argument("--workers", type=int, default=16, help="Jobs reconciled in parallel (default 16)")
    parser.add_argument(
        "--create-concurrency",
        type=int,
        default=64,
        help="pod creations in flight at once, over all Jobs (default 64)",
    )
    parser.add_argument(
        "--metrics-port", type=int, default=8081, help="port for /metrics and /healthz (8081)"
    )
    parser.add_argument("--metrics-host", default="0.0.0.0", help="address to serve metrics on")
    parser.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="elect one active controller through a Lease; others stand by (default: on)",
    )
    parser.add_argument("--lease-namespace", default="volcano-system", help="namespace of the leader Lease")
    parser.add_argument("--lease-name", default="vc-controller-manager", help="name of the leader Lease")
    parser.add_argument("--identity", help="this candidate's name in the Lease (default: host-pid)")
    add_lease_timing_arguments(parser)
    parser.add_argument(
        "--webhook-port",
        type=int,
        default=9443,
        help="serve the admission webhooks on this port (default 9443; 0 turns them off)",
    )
    parser.add_argument("--webhook-addr", default="0.0.0.0", help="address the webhook server listens on")
    parser.add_argument(
        "--webhook-service",
        metavar="NAMESPACE/NAME",
        help="the Service the API server calls the webhooks through (in a cluster); default: 127.0.0.1",
    )
    parser.add_argument(
        "--webhook-cert-dir", help="where the generated webhook certificate is written (default: a temp dir)"
    )
    parser.add_argument(
        "--webhook-timeout",
        type=int,
        default=DEFAULT_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help=f"timeoutSeconds of each webhook, 1-30 (default {DEFAULT_TIMEOUT_SECONDS})",
    )
    parser.add_argument(
        "--webhook-failure-policy",
        choices=FAILURE_POLICIES,
        default="Fail",
        help="what the API server does when admission cannot be reached (default Fail: Volcano kinds wait)",
    )
    parser.add_argument(
        "--event-loop",
        choices=EVENT_LOOPS,
        default=DEFAULT_EVENT_LOOP,
        help="the operator's asyncio event loop: uvloop holds a silent connection to the webhook server in "
        f"a fraction of asyncio's memory (default {DEFAULT_EVENT_LOOP})",
    )
    add_feature_gates_argument(parser)
    parser.add_argument(
        "--admission-conf",
        metavar="FILE",
        help="a volcano-admission.conf whose resourceGroups mutate new pods (re-read when it changes); "
        "adds the pod mutating webhook (default: none, no pod is mutated)",
    )
    parser.add_argument(
        "--controllers",
        default=DEFAULT_CONTROLLERS,
        help="Volcano's controller gates: * for all, -NAME turns one off, +NAME on; volcano-py can turn "
        f"{' and '.join(OPTIONAL_CONTROLLERS)} on and off (default {DEFAULT_CONTROLLERS!r}: sharding off)",
    )
    parser.add_argument(
        "--sharding-configmap",
        default=c.SHARDING_CONFIGMAP,
        help=f"the sharding controller's ConfigMap, re-read on change (default {c.SHARDING_CONFIGMAP})",
    )
    parser.add_argument(
        "--sharding-configmap-namespace",
        default=c.VOLCANO_SYSTEM_NAMESPACE,
        help=f"its namespace (default {c.VOLCANO_SYSTEM_NAMESPACE})",
    )
    parser.add_argument(
        "--job-watch",
        choices=JOB_WATCHES,
        default=INFORMER_WATCH,
        help="how Jobs, their pods and PodGroups are watched: informers of our own (default), or Kopf event "
        "handlers (an experiment, slower to take over: docs/architecture.md)",
    )
    parser.set_defaults(func=_run)


def options_from(args: argparse.Namespace) -> ControllerOptions:
    if not 0 <= args.webhook_port <= 65535:
        raise ValueError(
            f"--webhook-port must be a port (1-65535) or 0 to turn webhooks off, got {args.webhook_port}"
        )
    if not 1 <= args.webhook_timeout <= 30:
        raise ValueError(
            f"--webhook-timeout must be 1-30 seconds (the API server's limits), got {args.webhook_timeout}"
        )
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    if args.create_concurrency < 1:
        raise ValueError(f"--create-concurrency must be at least 1, got {args.create_concurrency}")
    loop_factory(args.event_loop)  # a loop that cannot run stops us now, naming the flag
    if args.admission_conf:
        AdmissionConfFile(args.admission_conf)  # a bad conf stops us now, not after winning the Lease
    gates = parse_controller_gates(args.controllers)  # a ValueError naming the bad entry
    return ControllerOptions(
        kubeconfig=args.kubeconfig,
        namespaces=tuple(args.namespaces or ()),
        scheduler_names=tuple(args.scheduler_names or (c.SCHEDULER_NAME,)),
        workers=args.workers,
        create_concurrency=args.create_concurrency,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
        leader_elect=args.leader_elect,
        lease_namespace=args.lease_namespace,
        lease_name=args.lease_name,
        identity=args.identity or "",
        lease_timing=lease_timing_from(args),
        webhook_port=args.webhook_port or None,
        webhook_addr=args.webhook_addr,
        webhook_service=args.webhook_service,
        webhook_cert_dir=args.webhook_cert_dir,
        webhook_timeout_seconds=args.webhook_timeout,
        webhook_failure_policy=args.webhook_failure_policy,
        feature_gates=parse_feature_gates(args.feature_gates),
        admission_conf=args.admission_conf,
        event_loop=args.event_loop,
        controllers=gates,
        sharding_configmap=args.sharding_configmap,
        sharding_configmap_namespace=args.sharding_configmap_namespace,
        job_watch=args.job_watch,
    )


async def _serve(options: ControllerOptions) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await run_controller(options, stop)


def _run(args: argparse.Namespace) -> int:
    try:
        asyncio.run(_serve(options_from(args)))
    except ValueError as err:
        print(f"volcano-py controller: {err}", file=sys.stderr)
        return 2
    return 0
