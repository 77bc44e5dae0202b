"""``volcano-py agent-scheduler``: the agent scheduler process (see ``volcano_py.scheduler.runtime.agent``),
with Volcano's ``vc-agent-scheduler`` flags where they apply."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.features import parse_feature_gates
from volcano_py.api.shard import ShardingMode
from volcano_py.cli.scheduler import (
    add_feature_gates_argument,
    add_lease_timing_arguments,
    add_sharding_arguments,
    lease_timing_from,
    sharding_from,
)
from volcano_py.kube import eventloop
from volcano_py.kube.eventloop import DEFAULT_EVENT_LOOP, EVENT_LOOPS
from volcano_py.scheduler.core import Sharding
from volcano_py.scheduler.runtime.agent import BATCH_LIMIT, AgentOptions, run_agent_scheduler
from volcano_py.scheduler.runtime.heap import freeze_heap, tune_collector
from volcano_py.scheduler.runtime.runner import default_identity


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "agent-scheduler",
        help="run the agent scheduler: place latency-bound pods one by one as they arrive",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then $KUBECONFIG)")
    parser.add_argument(
        "--scheduler-conf",
        help="an agent scheduler conf (Volcano's format: allocate; predicates, nodeorder and the queue "
        "plugins); re-read when it changes (default: predicates, nodeorder, capacity)",
    )
    parser.add_argument(
        "--scheduler-name",
        default=c.AGENT_SCHEDULER_NAME,
        help=f"place pods whose spec.schedulerName is this (default {c.AGENT_SCHEDULER_NAME})",
    )
    parser.add_argument(
        "--scheduler-worker-count",
        type=int,
        default=1,
        help="workers deciding in parallel, each on its own view (default 1)",
    )
    parser.add_argument(
        "--percentage-nodes-to-find",
        type=int,
        default=None,
        help="percentage of feasible nodes to score per pod; <= 0 decides by the cluster's size (default 0)",
    )
    parser.add_argument(
        "--minimum-percentage-nodes-to-find",
        type=int,
        default=None,
        help="the least percentage of nodes scored when it is decided by size (default 5)",
    )
    parser.add_argument(
        "--minimum-feasible-nodes",
        type=int,
        default=None,
        help="the least number of feasible nodes scored per pod (default 100)",
    )
    parser.add_argument(
        "--batch-limit",
        type=int,
        default=BATCH_LIMIT,
        help=f"active pods one decision takes at most (default {BATCH_LIMIT})",
    )
    parser.add_argument("--metrics-port", type=int, default=8080, help="port for /metrics, /healthz, /readyz")
    parser.add_argument("--metrics-host", default="0.0.0.0", help="address to serve metrics on")
    parser.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="elect one active agent scheduler through a Lease; others stand by (default: on)",
    )
    parser.add_argument(
        "--lock-object-namespace",
        "--lease-namespace",
        dest="lease_namespace",
        default=c.VOLCANO_SYSTEM_NAMESPACE,
        help=f"namespace of the leader Lease (default {c.VOLCANO_SYSTEM_NAMESPACE})",
    )
    parser.add_argument(
        "--lease-name", default="", help="name of the leader Lease (default: the scheduler name)"
    )
    parser.add_argument("--identity", help="this candidate's name in the Lease (default: host_pid_random)")
    add_lease_timing_arguments(parser)
    parser.add_argument("--bind-concurrency", type=int, default=64, help="bind requests in flight at once")
    parser.add_argument("--event-loop", choices=EVENT_LOOPS, default=DEFAULT_EVENT_LOOP, help="asyncio loop")
    add_feature_gates_argument(parser)
    add_sharding_arguments(parser, default_name=c.AGENT_SCHEDULER_NAME)
    parser.set_defaults(func=_run)


def options_from(args: argparse.Namespace) -> AgentOptions:
    return AgentOptions(
        kubeconfig=args.kubeconfig,
        scheduler_conf=args.scheduler_conf,
        scheduler_name=args.scheduler_name,
        worker_count=args.scheduler_worker_count,
        batch_limit=args.batch_limit,
        percentage_of_nodes=args.percentage_nodes_to_find,
        min_percentage_of_nodes=args.minimum_percentage_nodes_to_find,
        min_nodes=args.minimum_feasible_nodes,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
        leader_elect=args.leader_elect,
        lease_namespace=args.lease_namespace,
        lease_name=args.lease_name,
        identity=args.identity or default_identity(),
        lease_timing=lease_timing_from(args),
        bind_concurrency=args.bind_concurrency,
        feature_gates=parse_feature_gates(args.feature_gates),
        sharding=sharding_from(args),
    )


async def _serve(options: AgentOptions) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    tune_collector()
    # The collector back on, the listed cluster frozen out of its reach, once the caches are synced (as the
    # batch scheduler): otherwise it stays off until ``heap.OFF_AT_MOST`` and then scans the whole mirror.
    await run_agent_scheduler(options, stop, started=freeze_heap)


def _run(args: argparse.Namespace) -> int:
    try:
        options = options_from(args)
        options.load_conf(_read(options.scheduler_conf))  # a bad conf is refused before anything starts
        eventloop.run(_serve(options), args.event_loop)
    except ValueError as err:
        print(f"volcano-py agent-scheduler: {err}", file=sys.stderr)
        return 2
    return 0


def _read(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as err:
        raise ValueError(f"--scheduler-conf {path}: cannot read it ({err.strerror})") from None


def add_up_agent_arguments(parser: argparse.ArgumentParser) -> None:
    """``volcano-py up``'s agent scheduler switches (Volcano's chart values ``agent_scheduler_*``)."""
    parser.add_argument(
        "--agent-scheduler",
        action="store_true",
        help=f"run the agent scheduler too (pods with schedulerName {c.AGENT_SCHEDULER_NAME}, placed one by "
        "one as they arrive; Volcano's chart value agent_scheduler_enable)",
    )
    parser.add_argument(
        "--agent-scheduler-sharding-mode",
        choices=[mode.value for mode in ShardingMode],
        default=ShardingMode.NONE.value,
        help=f"with --agent-scheduler: what NodeShard {c.AGENT_SCHEDULER_NAME} means to it (none, soft, "
        "hard; agent_scheduler_sharding_mode; default none)",
    )
    parser.add_argument(
        "--agent-scheduler-workers",
        type=int,
        default=1,
        help="with --agent-scheduler: its workers (agent_scheduler_worker_count; default 1)",
    )


async def run_agent_for_up(args: argparse.Namespace, kubeconfig: str, port: int, stop: asyncio.Event) -> None:
    """The agent scheduler ``volcano-py up --agent-scheduler`` runs beside the others, in its process."""
    options = AgentOptions(
        kubeconfig=kubeconfig,
        leader_elect=False,
        metrics_host="127.0.0.1",
        metrics_port=port,
        worker_count=args.agent_scheduler_workers,
        feature_gates=args.gates,
        sharding=Sharding(ShardingMode(args.agent_scheduler_sharding_mode), c.AGENT_SCHEDULER_NAME),
    )
    await run_agent_scheduler(options, stop)
