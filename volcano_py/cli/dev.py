"""``volcano-py dev``: build, start and stop the local control plane (see ``volcano_py.devcluster``)."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from volcano_py.devcluster import (
    BuildError,
    ClusterError,
    DevCluster,
    ToolchainMissing,
    ensure_plan,
    restarts,
)
from volcano_py.devcluster.cluster import COMPONENTS
from volcano_py.devcluster.nodes import GpuSharing, node_manifests
from volcano_py.devcluster.processes import stop_recorded
from volcano_py.devcluster.versions import build_plan

DEFAULT_RUN_DIR = ".devcluster"


class _Terminated(Exception):
    """SIGTERM (from ``dev down`` or a process manager) turned into an exception so cleanup runs."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def register(subparsers: Any) -> None:
    dev = subparsers.add_parser(
        "dev", help="a local control plane: etcd, kube-apiserver, KCM, kube-scheduler and KWOK"
    )
    commands = dev.add_subparsers(dest="dev_command", metavar="ACTION", required=True)

    up = commands.add_parser(
        "up", help="start the control plane with fake nodes; runs until Ctrl-C or `dev down`"
    )
    up.add_argument("--nodes", type=int, default=4, help="fake nodes to create (default 4)")
    up.add_argument("--gpus-per-node", type=int, default=8, help="nvidia.com/gpu per node (default 8)")
    up.add_argument(
        "--gpu-sharing",
        choices=("gpushare", "vgpu"),
        help="also advertise the GPUs as shareable: gpushare (volcano.sh/gpu-memory, gpu-number) or vgpu "
        "(volcano.sh/vgpu-*, node-vgpu-register), for the deviceshare plugin",
    )
    up.add_argument("--gpu-memory", type=int, default=16384, help="MiB per GPU with --gpu-sharing (16384)")
    up.add_argument("--cpu", default="32", help="CPU per node (default 32)")
    up.add_argument("--memory", default="256Gi", help="memory per node (default 256Gi)")
    up.add_argument("--pods", type=int, default=110, help="pods per node (default 110)")
    up.add_argument(
        "--run-dir",
        type=Path,
        default=Path(DEFAULT_RUN_DIR),
        help="state, logs, kubeconfig (default .devcluster)",
    )
    up.set_defaults(func=_up)

    down = commands.add_parser("down", help="stop the control plane started by `dev up`")
    down.add_argument("--run-dir", type=Path, default=Path(DEFAULT_RUN_DIR), help="as given to `dev up`")
    down.set_defaults(func=_down)

    restart = commands.add_parser(
        "restart",
        help="restart one component of a running `dev up` in place (the others keep running)",
    )
    restart.add_argument("component", choices=COMPONENTS, help="which process to restart")
    restart.add_argument(
        "--down-seconds", type=float, default=0.0, help="keep it stopped this long first (default 0)"
    )
    restart.add_argument("--hard", action="store_true", help="SIGKILL it (a crash) instead of SIGTERM")
    restart.add_argument("--run-dir", type=Path, default=Path(DEFAULT_RUN_DIR), help="as given to `dev up`")
    restart.set_defaults(func=_restart)

    build = commands.add_parser(
        "build",
        help="build (or find cached) what `volcano-py up` runs: etcd, kube-apiserver, "
        "kube-controller-manager, kube-scheduler, kubectl, KWOK",
    )
    build.add_argument(
        "--with-test-tools",
        action="store_true",
        help="also the tools only tests use (helm, promtool, prometheus; the tests build them on first use)",
    )
    build.set_defaults(func=_build)


def _build(args: argparse.Namespace) -> int:
    try:
        paths = ensure_plan(build_plan(with_test_tools=args.with_test_tools))
    except ToolchainMissing as err:
        print(f"volcano-py dev build: {err}", file=sys.stderr)
        return 2
    except BuildError as err:
        print(f"volcano-py dev build: {err}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0


def _up(args: argparse.Namespace) -> int:
    if args.nodes < 0:
        print(f"volcano-py dev up: --nodes {args.nodes}: must be >= 0", file=sys.stderr)
        return 2
    # Bad node sizes are refused before the start-up, not after it.
    checks: list[tuple[str, dict[str, Any]]] = [
        ("--cpu", {"cpu": args.cpu}),
        ("--memory", {"memory": args.memory}),
        ("--pods", {"pods": args.pods}),
        ("--gpus-per-node", {"gpus": args.gpus_per_node}),
    ]
    for flag, value in checks:
        try:
            node_manifests(0, **value)
        except ValueError as err:
            print(f"volcano-py dev up: {flag}: {err}", file=sys.stderr)
            return 2
    try:
        sharing = GpuSharing(args.gpu_sharing, args.gpu_memory) if args.gpu_sharing else None
    except ValueError as err:
        print(f"volcano-py dev up: --gpu-memory: {err}", file=sys.stderr)
        return 2
    run_dir = args.run_dir.resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, _on_sigterm)
    restart_requested: list[bool] = []
    signal.signal(restarts.SIGNAL, lambda signum, frame: restart_requested.append(True))
    cluster = DevCluster(run_dir)
    began = time.monotonic()
    try:
        cluster.start()
        cluster.create_nodes(
            args.nodes,
            cpu=args.cpu,
            memory=args.memory,
            pods=args.pods,
            gpus=args.gpus_per_node,
            gpu_sharing=sharing,
        )
        print(f"control plane ready in {time.monotonic() - began:.1f}s: {cluster.server}, {args.nodes} nodes")
        print(f"kubeconfig: {cluster.kubeconfig}")
        print(f"export KUBECONFIG={cluster.kubeconfig}", flush=True)
        print("Ctrl-C or `volcano-py dev down` stops it.", file=sys.stderr, flush=True)
        while True:
            # A restart asked for with `dev restart` stops a component on purpose: serve it before checking
            # that everything runs, so the supervisor never mistakes it for a crash.
            if restart_requested:
                restart_requested.clear()
                _serve_restart(cluster, run_dir)
            if not cluster.running:
                break
            time.sleep(0.2)
        print(f"a control-plane process exited; logs are in {cluster.layout.logs}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, _Terminated):
        return 0
    except (ToolchainMissing, BuildError, ClusterError) as err:
        print(f"volcano-py dev up: {err}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(restarts.SIGNAL, signal.SIG_IGN)
        cluster.stop()
        print("control plane stopped", file=sys.stderr)


def _serve_restart(cluster: DevCluster, run_dir: Path) -> None:
    try:
        request = restarts.take_request(run_dir)
    except ClusterError as err:
        print(f"volcano-py dev up: {err}", file=sys.stderr)
        return
    if request is None:
        return
    try:
        seconds = cluster.restart(request.component, down_seconds=request.down_seconds, hard=request.hard)
    except ClusterError as err:
        restarts.answer(run_dir, restarts.RestartResult(request.id, request.component, error=str(err)))
        return
    print(f"restarted {request.component} ({seconds:.1f}s down)", file=sys.stderr, flush=True)
    restarts.answer(
        run_dir,
        restarts.RestartResult(
            request.id, request.component, cluster.pid(request.component), round(seconds, 2)
        ),
    )


def _restart(args: argparse.Namespace) -> int:
    try:
        request = restarts.new_request(args.component, down_seconds=args.down_seconds, hard=args.hard)
        result = restarts.request_restart(args.run_dir.resolve(), request)
    except ValueError as err:
        print(f"volcano-py dev restart: {err}", file=sys.stderr)
        return 2
    except ClusterError as err:
        print(f"volcano-py dev restart: {err}", file=sys.stderr)
        return 1
    if result.error:
        print(f"volcano-py dev restart: {result.error}", file=sys.stderr)
        return 1
    print(f"restarted {result.component}: pid {result.pid}, {result.seconds:.1f}s down")
    return 0


def _down(args: argparse.Namespace) -> int:
    run_dir = args.run_dir.resolve()
    try:
        stopped = stop_recorded(run_dir)
    except ValueError as err:
        print(f"volcano-py dev down: {err}", file=sys.stderr)
        return 1
    if not stopped:
        print(f"no control plane running from {run_dir}")
        return 0
    print(f"stopped {', '.join(stopped)}")
    return 0
