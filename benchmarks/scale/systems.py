"""The systems ``bench_scale`` compares, each started as processes of its own so that their CPU and RSS
are theirs: ``start_scheduler`` (the null binder, volcano-py, volcano-py's agent scheduler for one-pod jobs,
Volcano's vc-scheduler, YuniKorn's scheduler, kube-scheduler, scheduler-plugins' coscheduling),
``start_schedulers`` (that one, the sharded system's two, or KAI-Scheduler's scheduler and binder),
``start_controller`` (volcano-py's controller, Volcano's vc-controller-manager, KAI's pod-grouper). A system
joins the comparison here; ``Started.ready`` waits for the readiness it offers."""

from __future__ import annotations

import argparse
import functools
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.benchlib import peer_kai as kai
from benchmarks.benchlib import peer_kube
from benchmarks.benchlib import peer_yunikorn as yunikorn
from benchmarks.benchlib.sharded import SYSTEM as SHARDED
from benchmarks.benchlib.sharded import launch_sharded_schedulers, scheduler_names
from benchmarks.benchlib.systems import (
    REPO,
    launch_null_binder,
    launch_vc_controller_manager,
    launch_vc_scheduler,
    launch_volcano_py_agent,
    launch_volcano_py_controller,
    launch_volcano_py_scheduler,
    wait_first_cycle,
    wait_null_ready,
    wait_ready,
)
from benchmarks.scale.bench import JSON, Bench
from volcano_py.api import constants as c

# volcano-py's agent scheduler: plain pods with its schedulerName, one at a time, no PodGroup. It places
# one-pod jobs only (a gang is the batch scheduler's), as Volcano's agent scheduler does.
AGENT = "volcano-py-agent"


# The systems without gangs: they run one-pod jobs only.
ONE_POD_ONLY = (peer_kube.PLAIN, AGENT)


# ``--conf``: each Volcano scheduler with the conf built into it, or with the one its Helm chart installs
# (the built-in one plus ``binpack``; ours adds ``cpsat`` as well).
CONFS = ("builtin", "shipped")
VOLCANO_PY = ("volcano-py", SHARDED)  # the systems that run volcano-py's batch scheduler (and read its conf)
SHIPPED_CONF = REPO / "deploy" / "helm" / "volcano-py" / "config" / "volcano-scheduler.conf"
VOLCANO_SHIPPED_CONF = Path("installer/helm/chart/volcano/config/volcano-scheduler.conf")  # in its checkout


def scheduler_conf(conf: str, system: str, volcano_src: Path | None) -> Path | None:
    """The conf file ``system``'s scheduler reads under ``--conf conf`` (None: the one built into it; the
    peers of other families always run their own default)."""
    if conf != "shipped":
        return None
    if system == "volcano":
        if volcano_src is None:
            raise ValueError("--conf shipped with --system volcano needs --volcano-src")
        return volcano_src / VOLCANO_SHIPPED_CONF
    return SHIPPED_CONF if system in VOLCANO_PY else None


def supports(system: str, size: int) -> bool:
    """Whether ``system`` runs jobs of ``size`` pods."""
    return system not in ONE_POD_ONLY or size == 1


def in_own_terms(system: str, bodies: list[tuple[str, JSON]]) -> list[tuple[str, JSON]]:
    """The bench's ``(path, body)`` creates, written in Volcano's terms (PodGroups ``scheduling.volcano.sh``
    and pods), in ``system``'s: YuniKorn's task groups, KAI's PodGroups, Coscheduling's; the others' as
    they are, but for each peer's schedulerName."""
    if system == yunikorn.SYSTEM:
        return yunikorn.translate(bodies)
    if system == kai.SYSTEM:
        return kai.translate(bodies)
    return peer_kube.own_terms(system, bodies)


def pod_scheduler_names(system: str) -> tuple[str, ...]:
    """The ``schedulerName``s ``system``'s pods take in turn (the sharded system's two, the agent's own)."""
    return (c.AGENT_SCHEDULER_NAME,) if system == AGENT else scheduler_names(system)


def conf_flags(args: argparse.Namespace, system: str) -> list[str]:
    """volcano-py's ``--scheduler-conf``: ``--volcano-py-conf`` if given, else as ``--conf`` says."""
    conf = args.volcano_py_conf or scheduler_conf(args.conf, system, args.volcano_src)
    return ["--scheduler-conf", str(conf)] if conf else []


@dataclass
class Started:
    process: subprocess.Popen[bytes]
    ready: Callable[[float], None]  # blocks until ready, at most that many seconds
    metrics_url: str | None = None  # where the cycle histogram is served


def start_scheduler(bench: Bench, system: str) -> Started:
    args = bench.args
    if system == "null":
        binder = launch_null_binder(bench.kubeconfig, bench.log_file, bind_concurrency=args.bind_concurrency)
        return Started(binder, lambda _within: wait_null_ready(binder))
    if system == yunikorn.SYSTEM:
        yk = yunikorn.launch(args.yunikorn.scheduler, bench.kubeconfig, bench.log_file)
        return Started(yk, lambda within: yunikorn.wait_ready(yk, len(bench.node_names), within))
    if system in peer_kube.SYSTEMS:
        return Started(*peer_kube.launch(
            system, bench.kubeconfig, bench.log_file, scheduler_plugins=args.coscheduling_bin,
            qps=args.kube_scheduler_qps, burst=args.kube_scheduler_burst,
        ))  # fmt: skip
    if system == AGENT:
        agent, port = launch_volcano_py_agent(
            bench.kubeconfig, bench.log_file, workers=args.agent_workers, level=args.scheduler_log_level
        )
        return Started(agent, lambda within: wait_ready(port, agent, within))
    if system == "volcano":
        vc, port = launch_vc_scheduler(
            args.volcano_bin, bench.kubeconfig, bench.log_file, schedule_period=args.schedule_period,
            conf=scheduler_conf(args.conf, system, args.volcano_src),
        )  # fmt: skip
        return Started(
            vc, lambda within: wait_first_cycle(port, {"vc-scheduler": vc}, within),
            f"http://127.0.0.1:{port}/metrics",
        )  # fmt: skip
    ours, port = launch_volcano_py_scheduler(
        bench.kubeconfig, bench.log_file, level=args.scheduler_log_level,
        flags=["--schedule-period", str(args.schedule_period),
               "--bind-concurrency", str(args.bind_concurrency), *conf_flags(args, system)],
    )  # fmt: skip
    return Started(ours, lambda within: wait_ready(port, ours, within), f"http://127.0.0.1:{port}/metrics")


def start_schedulers(bench: Bench, system: str) -> dict[str, Started]:
    """Per scheduler process of ``system`` (one, the sharded system's two, KAI's two), its name and start."""
    if system == kai.SYSTEM:
        return start_kai(bench)
    if system != SHARDED:
        return {"scheduler": start_scheduler(bench, system)}
    args = bench.args
    launched = launch_sharded_schedulers(
        bench.kubeconfig, bench.log_file, level=args.scheduler_log_level,
        flags=["--schedule-period", str(args.schedule_period),
               "--bind-concurrency", str(args.bind_concurrency), *conf_flags(args, system)],
    )  # fmt: skip
    return {
        f"scheduler {name}": Started(
            process, functools.partial(wait_ready, port, process), f"http://127.0.0.1:{port}/metrics"
        )
        for name, (process, port) in launched.items()
    }


def start_kai(bench: Bench) -> dict[str, Started]:
    """KAI's scheduler and binder: the scheduler places, the binder binds what it asks for in BindRequests.
    KAI's cycle time is a gauge of the last cycle, not a histogram: no cycle quantiles."""
    args = bench.args
    scheduler, port = kai.launch_scheduler(
        args.kai_bin, bench.kubeconfig, bench.log_file, schedule_period=args.schedule_period
    )
    binder, binder_port = kai.launch_binder(args.kai_bin, bench.kubeconfig, bench.log_file)
    return {
        "scheduler": Started(scheduler, functools.partial(kai.wait_scheduler, port, scheduler)),
        "binder": Started(binder, functools.partial(kai.wait_binder, binder_port, binder)),
    }


def start_controller(bench: Bench, system: str) -> Started:
    if system == kai.SYSTEM:  # KAI's pod-grouper: it makes the PodGroups of pods without one
        grouper, probe = kai.launch_podgrouper(bench.args.kai_bin, bench.kubeconfig, bench.log_file)
        return Started(grouper, functools.partial(kai.wait_podgrouper, probe, grouper))
    if system == "volcano":
        vc = launch_vc_controller_manager(bench.args.volcano_bin, bench.kubeconfig, bench.log_file)
        # It serves no readiness here (--enable-healthz=false, as bench_e2e runs it): alive is ready.
        return Started(vc, lambda _within: None)
    ours, port = launch_volcano_py_controller(
        bench.kubeconfig, bench.log_file, level=bench.args.scheduler_log_level
    )
    return Started(ours, lambda within: wait_ready(port, ours, within))
