"""``volcano-py scheduler``: the batch scheduler process (see ``volcano_py.scheduler.runtime.runner``)."""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import sys
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.features import FLAG as FEATURE_GATES_FLAG
from volcano_py.api.features import KNOWN as KNOWN_FEATURE_GATES
from volcano_py.api.features import parse_feature_gates
from volcano_py.api.shard import DEFAULT_SHARD_NAME, ShardingMode
from volcano_py.forecast import backfill_shadow
from volcano_py.home import cache_dir
from volcano_py.kube import eventloop
from volcano_py.kube.eventloop import DEFAULT_EVENT_LOOP, EVENT_LOOPS
from volcano_py.kube.leader import LeaseTiming
from volcano_py.scheduler.core import BURST_QUIET_SECONDS, Sharding
from volcano_py.scheduler.runtime.cycle import DefaultCore, default_core
from volcano_py.scheduler.runtime.heap import freeze_heap, tune_collector
from volcano_py.scheduler.runtime.runner import SchedulerOptions, default_identity, run_scheduler
from volcano_py.scheduler.runtime.scheduled import SCHEDULED_EVENT_BURST, SCHEDULED_EVENT_QPS

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(text: str) -> float:
    """Seconds (``1``, ``0.5``) or a Go duration, as Volcano's ``--schedule-period`` (``1s``, ``500ms``)."""
    seconds = _seconds(text)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the period must be more than zero")
    return seconds


def quiet_seconds(text: str) -> float:
    """As ``duration_seconds``, but 0 is allowed (it turns the feature off)."""
    seconds = _seconds(text)
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the quiet time cannot be negative (0 turns it off)")
    return seconds


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        parts = _DURATION_PART.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a duration; write seconds (1, 0.5) or a Go duration (1s, 500ms, 1m30s)"
            ) from None
        seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
    return seconds


def add_lease_timing_arguments(parser: argparse.ArgumentParser) -> None:
    """Volcano's (client-go's) leader-election durations, for the scheduler and the controller alike."""
    default = LeaseTiming()
    parser.add_argument(
        "--leader-elect-lease-duration",
        type=duration_seconds,
        default=float(default.lease_duration),
        help="how long a standby waits, after the leader's last renewal it saw, before taking the Lease: "
        f"whole seconds (default {default.lease_duration}s)",
    )
    parser.add_argument(
        "--leader-elect-renew-deadline",
        type=duration_seconds,
        default=default.renew_deadline,
        help="the leader steps down, and writes nothing more, once it has not renewed for this long "
        f"(default {default.renew_deadline:g}s)",
    )
    parser.add_argument(
        "--leader-elect-retry-period",
        type=duration_seconds,
        default=default.retry_period,
        help=f"time between attempts to take or renew the Lease (default {default.retry_period:g}s)",
    )


def lease_timing_from(args: argparse.Namespace) -> LeaseTiming:
    duration = args.leader_elect_lease_duration
    if duration != int(duration):
        raise ValueError(
            f"--leader-elect-lease-duration must be whole seconds (a Lease stores an integer), "
            f"got {duration:g}s"
        )
    return LeaseTiming(int(duration), args.leader_elect_renew_deadline, args.leader_elect_retry_period)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scheduler", help="run the scheduler: watch the cluster, place pods and gangs, bind them"
    )
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then $KUBECONFIG)")
    parser.add_argument(
        "--scheduler-conf",
        help="Volcano scheduler conf (actions + plugin tiers); re-read when it changes (default: Volcano's)",
    )
    parser.add_argument(
        "--scheduler-name",
        action="append",
        dest="scheduler_names",
        metavar="NAME",
        help=f"schedule pods whose spec.schedulerName is NAME; repeatable (default: {c.SCHEDULER_NAME})",
    )
    parser.add_argument(
        "--schedule-period",
        type=duration_seconds,
        default=1.0,
        help="time between scheduling cycles: seconds or a Go duration such as 1s or 500ms (default 1s)",
    )
    parser.add_argument(
        "--burst-quiet",
        type=quiet_seconds,
        default=BURST_QUIET_SECONDS,
        help="start the next cycle before the period is up once new pending pods have stopped arriving "
        f"for this long; 0 waits out every period, as Volcano does (default {BURST_QUIET_SECONDS:g}s)",
    )
    parser.add_argument(
        "--metrics-port", type=int, default=8080, help="port for /metrics, /healthz, /readyz (default 8080)"
    )
    parser.add_argument("--metrics-host", default="0.0.0.0", help="address to serve metrics on")
    parser.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="elect one active scheduler through a Lease; others stand by (default: on)",
    )
    parser.add_argument("--lease-namespace", default="volcano-system", help="namespace of the leader Lease")
    parser.add_argument("--lease-name", default="vc-scheduler", help="name of the leader Lease")
    parser.add_argument("--identity", help="this candidate's name in the Lease (default: host_pid_random)")
    add_lease_timing_arguments(parser)
    parser.add_argument(
        "--bind-concurrency",
        type=int,
        default=64,
        help="bind requests in flight at once, over all gangs (default 64)",
    )
    parser.add_argument(
        "--scheduled-event-qps",
        type=float,
        default=SCHEDULED_EVENT_QPS,
        help=f"bound pods per second that get a Scheduled Event of their own; a gang's pods beyond it are "
        f"told in one Event on its PodGroup, as kube-scheduler's Events are held to its client's "
        f"{SCHEDULED_EVENT_QPS:g}/s; 0 gives every pod its own (default {SCHEDULED_EVENT_QPS:g})",
    )
    parser.add_argument(
        "--scheduled-event-burst",
        type=int,
        default=SCHEDULED_EVENT_BURST,
        help=f"pods bound at once that all get their own Scheduled Event (default {SCHEDULED_EVENT_BURST})",
    )
    parser.add_argument(
        "--event-loop",
        choices=EVENT_LOOPS,
        default=DEFAULT_EVENT_LOOP,
        help=f"the asyncio event loop: uvloop costs less CPU per watch event and request "
        f"(default {DEFAULT_EVENT_LOOP})",
    )
    parser.add_argument(
        "--mirror-dir",
        default=str(cache_dir() / "mirror"),
        help="save the cluster's mirror here every 30 s, so a restart resumes its watches instead of listing "
        "every pod again; in a pod, a volume that outlives the container (default: $VOLCANO_PY_CACHE/mirror, "
        "~/.cache/volcano-py/mirror)",
    )
    parser.add_argument(
        "--no-mirror",
        dest="mirror_dir",
        action="store_const",
        const="",
        help="keep no mirror on disk: every start lists the cluster",
    )
    add_feature_gates_argument(parser)
    add_sharding_arguments(parser)
    parser.set_defaults(func=_run)


def add_sharding_arguments(parser: argparse.ArgumentParser, default_name: str = DEFAULT_SHARD_NAME) -> None:
    """Volcano's ``--scheduler-sharding-mode`` and ``--scheduler-sharding-name``."""
    parser.add_argument(
        "--scheduler-sharding-mode",
        dest="sharding_mode",
        choices=[mode.value for mode in ShardingMode],
        default=ShardingMode.NONE.value,
        help="what the NodeShard named by --scheduler-sharding-name means to this scheduler: none ignores "
        "shards, soft tries its nodes first and the others when none fits, hard uses only its nodes "
        "(default none)",
    )
    parser.add_argument(
        "--scheduler-sharding-name",
        dest="sharding_name",
        default=default_name,
        metavar="NAME",
        help=f"the NodeShard this scheduler reads and whose status it writes (default {default_name})",
    )


def sharding_from(args: argparse.Namespace) -> Sharding:
    return Sharding(ShardingMode(args.sharding_mode), args.sharding_name)


def add_feature_gates_argument(parser: argparse.ArgumentParser) -> None:
    """Volcano's ``--feature-gates``, checked when the options are built, so a bad one is refused at start."""
    parser.add_argument(
        FEATURE_GATES_FLAG,
        dest="feature_gates",
        default="",
        metavar="NAME=BOOL,...",
        help="Volcano's feature gates, as Kubernetes writes them (Name=true,Other=false); known: "
        + ", ".join(sorted(KNOWN_FEATURE_GATES)),
    )


def options_from(args: argparse.Namespace) -> SchedulerOptions:
    return SchedulerOptions(
        kubeconfig=args.kubeconfig,
        scheduler_conf=args.scheduler_conf,
        scheduler_names=tuple(args.scheduler_names or (c.SCHEDULER_NAME,)),
        schedule_period=args.schedule_period,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
        leader_elect=args.leader_elect,
        lease_namespace=args.lease_namespace,
        lease_name=args.lease_name,
        identity=args.identity or default_identity(),
        lease_timing=lease_timing_from(args),
        bind_concurrency=args.bind_concurrency,
        burst_quiet=args.burst_quiet,
        scheduled_event_qps=args.scheduled_event_qps,
        scheduled_event_burst=args.scheduled_event_burst,
        feature_gates=parse_feature_gates(args.feature_gates),
        mirror_dir=args.mirror_dir or None,
        sharding=sharding_from(args),
    )


def scheduler_core(options: SchedulerOptions) -> DefaultCore:
    """The scheduling core the process runs: the built-in actions and plugins, and the forecast's
    simulation for a blocked fifo head's backfill (the forecast sits above the scheduler, so it is handed in
    here)."""
    return default_core(
        options.scheduler_names, options.feature_gates, head_shadow=backfill_shadow, sharding=options.sharding
    )


async def _serve(options: SchedulerOptions) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    tune_collector()
    await run_scheduler(options, stop, core=scheduler_core(options), started=freeze_heap)


def _run(args: argparse.Namespace) -> int:
    try:
        options = options_from(args)
        eventloop.run(_serve(options), args.event_loop)
    except ValueError as err:
        print(f"volcano-py scheduler: {err}", file=sys.stderr)
        return 2
    return 0
