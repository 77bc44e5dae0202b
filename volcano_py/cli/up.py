"""``volcano-py up``: the embedded default -- a local cluster, GPU nodes, our CRDs, controller and scheduler.

Phases: (1) start the local control plane (building its binaries on first use) with KWOK GPU nodes in
racks and spines, the ``volcano-system`` namespace, and the HyperNodes that describe the racks; (2) install
the CRDs generated from our models; (3) run the controller and the scheduler in this process; (4) with
``--demo``, apply the examples and print a live table of jobs until every one reaches a final phase.
``kubectl`` then works against ``$KUBECONFIG`` as on a real cluster. Ctrl-C stops everything and leaves
no process behind.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from volcano_py.api import constants as c
from volcano_py.api.controller_gates import (
    ALL_CONTROLLERS,
    DEFAULT_GATES,
    parse_controller_gates,
)
from volcano_py.api.crd import CRDS, render_crd
from volcano_py.api.features import FeatureGateError, parse_feature_gates
from volcano_py.api.objects import labels_of, name_of
from volcano_py.api.sharding_config import ShardingConfigError, parse_sharding_config
from volcano_py.cli.agent_scheduler import add_up_agent_arguments, run_agent_for_up
from volcano_py.cli.demo import run_demo
from volcano_py.cli.dev import DEFAULT_RUN_DIR
from volcano_py.cli.scheduler import add_feature_gates_argument, add_sharding_arguments
from volcano_py.devcluster import (
    BuildError,
    ClusterError,
    DevCluster,
    ToolchainMissing,
    Topology,
)
from volcano_py.devcluster.nodes import RACK_LABEL, SPINE_LABEL
from volcano_py.scheduler.core import VOLCANO_SHIPPED_CONF, with_actions, with_cpsat

# The local default: Volcano's shipped tiers with preemption and reclaim on, so the examples can show them
# (gang then votes on victims, so a victim gang goes whole or not at all), and CP-SAT gang placement.
UP_CONF = with_cpsat(
    with_actions(VOLCANO_SHIPPED_CONF, "enqueue, allocate, preempt, reclaim, backfill").replace(
        "  - name: gang\n    enablePreemptable: false\n", "  - name: gang\n"
    )
)

# An example Job says which phase it must reach, so `up --demo` and its test can check the promise.
EXPECTED_PHASE_ANNOTATION = "example.volcano-py.io/expected-phase"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "up",
        help="run everything locally: control plane, KWOK GPU nodes, CRDs, controller, scheduler",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--nodes", type=int, default=8, help="KWOK GPU nodes (default 8)")
    parser.add_argument("--gpus-per-node", type=int, default=8, help="nvidia.com/gpu per node (default 8)")
    parser.add_argument("--cpu", default="64", help="CPU per node (default 64)")
    parser.add_argument("--memory", default="512Gi", help="memory per node (default 512Gi)")
    parser.add_argument("--nodes-per-rack", type=int, default=4, help="tier-1 HyperNode size (default 4)")
    parser.add_argument("--run-dir", type=Path, default=Path(DEFAULT_RUN_DIR), help="state, logs, kubeconfig")
    parser.add_argument(
        "--scheduler-conf", help="a volcano-scheduler.conf (default: Volcano's tiers + preempt, reclaim)"
    )
    parser.add_argument(
        "--admission-conf",
        help="a volcano-admission.conf: its resourceGroups mutate new pods (default: none)",
    )
    parser.add_argument(
        "--dashboard-port", type=int, default=8090, help="port of the web dashboard (default 8090; 0: any)"
    )
    parser.add_argument(
        "--sharding",
        type=Path,
        metavar="FILE",
        help="a sharding.yaml (Volcano's format): put into the ConfigMap named by --sharding-configmap in "
        f"{c.VOLCANO_SYSTEM_NAMESPACE} and run the sharding controller on it",
    )
    parser.add_argument(
        "--sharding-configmap",
        default=c.SHARDING_CONFIGMAP,
        metavar="NAME",
        help=f"with --sharding: the ConfigMap's name (default {c.SHARDING_CONFIGMAP}; Volcano's chart "
        "names it <release>-sharding-configmap)",
    )
    add_up_agent_arguments(parser)
    parser.add_argument("--demo", action="store_true", help="submit the examples and show them until done")
    parser.add_argument("--examples", type=Path, default=Path("examples"), help="folder of example manifests")
    parser.add_argument("--exit-when-done", action="store_true", help="with --demo: stop once all finished")
    # Given to both the scheduler and admission (the controller), as Volcano's CI gives FEATURE_GATES to both.
    add_feature_gates_argument(parser)
    add_sharding_arguments(parser)
    parser.set_defaults(func=run)


def sharding_configmap(text: str, name: str = c.SHARDING_CONFIGMAP) -> dict[str, Any]:
    """The sharding controller's ConfigMap, as Volcano's chart makes it, holding ``text``."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": c.VOLCANO_SYSTEM_NAMESPACE},
        "data": {c.SHARDING_CONFIG_KEY: text},
    }


def hypernodes_for(nodes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tier-1 HyperNodes per rack label and tier-2 ones per spine label (Volcano's topology CRD)."""
    racks: dict[str, str] = {}
    for node in nodes:
        labels = labels_of(node)
        if RACK_LABEL in labels and SPINE_LABEL in labels:
            racks[labels[RACK_LABEL]] = labels[SPINE_LABEL]
    objects: list[dict[str, Any]] = []
    for rack in sorted(racks):
        objects.append(
            {
                "apiVersion": c.TOPOLOGY_API_VERSION,
                "kind": c.HYPERNODE_KIND,
                "metadata": {"name": rack},
                "spec": {
                    "tier": 1,
                    "members": [
                        {"type": "Node", "selector": {"labelMatch": {"matchLabels": {RACK_LABEL: rack}}}}
                    ],
                },
            }
        )
    for spine in sorted(set(racks.values())):
        members = [
            {"type": "HyperNode", "selector": {"exactMatch": {"name": rack}}}
            for rack in sorted(r for r, s in racks.items() if s == spine)
        ]
        objects.append(
            {
                "apiVersion": c.TOPOLOGY_API_VERSION,
                "kind": c.HYPERNODE_KIND,
                "metadata": {"name": spine},
                "spec": {"tier": 2, "members": members},
            }
        )
    return objects


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start_cluster(args: argparse.Namespace) -> DevCluster:
    run_dir = args.run_dir.resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    cluster = DevCluster(run_dir)
    began = time.monotonic()
    cluster.start()
    names = cluster.create_nodes(
        args.nodes,
        cpu=args.cpu,
        memory=args.memory,
        gpus=args.gpus_per_node,
        topology=Topology(nodes_per_rack=args.nodes_per_rack),
    )
    # The same GPUs as DRA devices of a fake driver (gpu.example.com), for ResourceClaims.
    cluster.publish_fake_gpus(names, args.gpus_per_node)
    with tempfile.TemporaryDirectory(prefix="volcano-py-crds-") as tmp:
        for info in CRDS:
            (Path(tmp) / f"{info.group}_{info.plural}.yaml").write_text(render_crd(info))
        cluster.apply_crds(Path(tmp))
    # Volcano installs into volcano-system and its examples put ConfigMaps there (the controller's
    # HyperNode discovery config among them): the local cluster has it as a real install does.
    cluster.create_namespace(c.VOLCANO_SYSTEM_NAMESPACE)
    nodes = cluster.get_json("/api/v1/nodes")["items"]
    hypernodes = hypernodes_for(nodes)
    if hypernodes:
        cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(hypernodes))
    if args.sharding is not None:
        configmap = sharding_configmap(args.sharding_text, args.sharding_configmap)
        cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(configmap))
    took = time.monotonic() - began
    print(f"volcano-py up: control plane, {args.nodes} GPU nodes and CRDs ready in {took:.1f}s")
    return cluster


def _has_queue(cluster: DevCluster, name: str) -> bool:
    try:
        queues = cluster.get_json(f"/apis/{c.SCHEDULING_API_VERSION}/queues")["items"]
    except ClusterError:  # e.g. 429 while the API server (re)initialises storage for a new CRD
        return False
    return any(name_of(q) == name for q in queues)


async def _serve(cluster: DevCluster, args: argparse.Namespace) -> None:
    from volcano_py.cli.scheduler import scheduler_core, sharding_from
    from volcano_py.controllers.operator import ControllerOptions, run_controller
    from volcano_py.dashboard import DashboardOptions, run_dashboard
    from volcano_py.scheduler.runtime.runner import SchedulerOptions, run_scheduler

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    kubeconfig = str(cluster.kubeconfig)
    conf_path = args.scheduler_conf
    if conf_path is None:
        conf_file = args.run_dir.resolve() / "volcano-scheduler.conf"
        await asyncio.to_thread(conf_file.write_text, UP_CONF)
        conf_path = str(conf_file)
    metrics_port = _free_port()
    scheduler_options = SchedulerOptions(
        kubeconfig=kubeconfig,
        scheduler_conf=conf_path,
        leader_elect=False,
        metrics_host="127.0.0.1",
        metrics_port=metrics_port,
        feature_gates=args.gates,
        sharding=sharding_from(args),
    )
    scheduler = asyncio.ensure_future(
        run_scheduler(scheduler_options, stop, core=scheduler_core(scheduler_options))
    )
    agent = (
        asyncio.ensure_future(run_agent_for_up(args, kubeconfig, _free_port(), stop))
        if args.agent_scheduler
        else None
    )
    # The scheduler creates the default and root queues; once the controller's admission webhooks are
    # installed, every Queue write goes through them, so let those two land first.
    while not scheduler.done() and not await asyncio.to_thread(_has_queue, cluster, c.ROOT_QUEUE):
        await asyncio.wait([scheduler], timeout=0.5)
    controller = asyncio.ensure_future(
        run_controller(
            ControllerOptions(
                kubeconfig=kubeconfig,
                leader_elect=False,
                metrics_port=0,
                webhook_port=_free_port(),
                webhook_addr="127.0.0.1",
                webhook_hosts=("127.0.0.1",),
                webhook_cert_dir=str(args.run_dir.resolve() / "webhook"),
                feature_gates=args.gates,
                admission_conf=args.admission_conf,
                controllers=(
                    parse_controller_gates(ALL_CONTROLLERS) if args.sharding is not None else DEFAULT_GATES
                ),
                sharding_configmap=args.sharding_configmap,
            ),
            stop,
        )
    )
    dashboard_port: asyncio.Future[int] = loop.create_future()
    dashboard = asyncio.ensure_future(
        run_dashboard(
            DashboardOptions(
                kubeconfig=kubeconfig,
                port=args.dashboard_port,
                scheduler_conf=conf_path,
                scheduler_metrics=f"http://127.0.0.1:{metrics_port}/metrics",
            ),
            stop,
            dashboard_port,
        )
    )
    print(f"export KUBECONFIG={kubeconfig}", flush=True)
    started: list[asyncio.Future[Any]] = [dashboard_port, dashboard]
    await asyncio.wait(started, return_when=asyncio.FIRST_COMPLETED)
    essential = [controller, scheduler, *([agent] if agent is not None else [])]
    tasks = list(essential)
    dashboard_url = ""
    if dashboard_port.done():
        dashboard_url = f"http://127.0.0.1:{dashboard_port.result()}/"
        print(f"dashboard: {dashboard_url}", flush=True)
        tasks.append(dashboard)
    else:
        # Not fatal: the cluster is still usable without it (e.g. the port is taken; see --dashboard-port).
        print(f"volcano-py up: the dashboard did not start: {dashboard.exception()}", file=sys.stderr)
    print("controller and scheduler running; Ctrl-C stops everything", file=sys.stderr, flush=True)
    if args.demo:
        demo = run_demo(
            cluster, args.example_files, stop, exit_when_done=args.exit_when_done, look=dashboard_url
        )
        tasks.append(asyncio.ensure_future(demo))
    watcher = asyncio.ensure_future(stop.wait())
    await asyncio.wait([*essential, watcher], return_when=asyncio.FIRST_COMPLETED)
    stop.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    watcher.cancel()
    failures = [
        r for r in results if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError)
    ]
    if failures:
        raise failures[0]


def run(args: argparse.Namespace) -> int:
    if args.nodes < 1:
        print(f"volcano-py up: --nodes {args.nodes}: must be at least 1", file=sys.stderr)
        return 2
    if args.agent_scheduler_workers < 1:
        print(
            f"volcano-py up: --agent-scheduler-workers {args.agent_scheduler_workers}: must be >= 1",
            file=sys.stderr,
        )
        return 2
    try:
        args.gates = parse_feature_gates(args.feature_gates)
    except FeatureGateError as err:
        print(f"volcano-py up: {err}", file=sys.stderr)
        return 2
    args.example_files = sorted(args.examples.glob("*.yaml")) if args.demo else []
    if args.admission_conf:
        from volcano_py.webhooks.admission_conf_file import AdmissionConfFile

        try:
            AdmissionConfFile(args.admission_conf)  # refused before a cluster is started for nothing
        except ValueError as err:
            print(f"volcano-py up: {err}", file=sys.stderr)
            return 2
    if args.sharding is not None:
        try:
            args.sharding_text = args.sharding.read_text(encoding="utf-8")
            parse_sharding_config(args.sharding_text)  # refused before a cluster is started for nothing
        except (OSError, ShardingConfigError) as err:
            print(f"volcano-py up: --sharding {args.sharding}: {err}", file=sys.stderr)
            return 2
    try:
        cluster = _start_cluster(args)
    except (ToolchainMissing, BuildError, ClusterError) as err:
        print(f"volcano-py up: {err}", file=sys.stderr)
        return 1
    try:
        asyncio.run(_serve(cluster, args))
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
        print("volcano-py up: stopped", file=sys.stderr)
    return 0
