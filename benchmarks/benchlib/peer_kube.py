"""bench_scale's kube-scheduler peers: upstream kube-scheduler (``kube-scheduler``: the control plane's own
v1.34 binary run a second time, for one-pod jobs; it has no gangs) and kubernetes-sigs/scheduler-plugins'
scheduler with its Coscheduling plugin (``coscheduling``, built by ``build_scheduler_plugins.py``).

Each runs as a process of its own with a KubeSchedulerConfiguration whose one profile has a schedulerName of
its own, so the control plane's kube-scheduler (``default-scheduler``) never takes their pods. The bench
builds its bodies as Volcano's (PodGroups ``scheduling.volcano.sh`` and the pod annotation naming the
group); ``own_terms`` turns them into each peer's own: for ``coscheduling`` a PodGroup
``scheduling.x-k8s.io/v1alpha1`` of the same minMember and the pod label ``scheduling.x-k8s.io/pod-group``;
for ``kube-scheduler`` plain pods. The pods are the same otherwise (names, requests, annotations), so every
system does the same work.
"""

from __future__ import annotations

import argparse
import copy
import json
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchmarks.benchlib.systems import LogFile
from volcano_py.api import constants as c
from volcano_py.devcluster import DevCluster
from volcano_py.devcluster.ports import free_ports
from volcano_py.devcluster.versions import KUBE_SCHEDULER
from volcano_py.home import cache_dir
from volcano_py.kube.kinds import ResourceKind

JSON = dict[str, Any]
PLAIN, COSCHEDULING = "kube-scheduler", "coscheduling"
SYSTEMS = (PLAIN, COSCHEDULING)
# Each profile's schedulerName: neither is default-scheduler, the control plane's own kube-scheduler's.
SCHEDULER_NAMES = {PLAIN: "kube-scheduler-peer", COSCHEDULING: "coscheduling"}
X_PODGROUPS = ResourceKind("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", namespaced=True)
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
CRD = Path("manifests/crds/scheduling.x-k8s.io_podgroups.yaml")  # in the scheduler-plugins tree
# Volcano's vc-scheduler talks to the API server at 2,000 QPS, burst 2,000, by default; kube-scheduler's
# own default (50, burst 100) would hold it near 50 binds/s whatever its algorithm costs, so by default the
# peers get Volcano's allowance.
QPS, BURST = 2000.0, 2000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scheduler-plugins-src",
        type=Path,
        help="a kubernetes-sigs/scheduler-plugins checkout (v0.34.x), for --system coscheduling",
    )
    parser.add_argument(
        "--kube-scheduler-qps",
        type=float,
        default=QPS,
        help="the API client's QPS of kube-scheduler and coscheduling (kube-scheduler's own default: 50)",
    )
    parser.add_argument(
        "--kube-scheduler-burst",
        type=int,
        default=BURST,
        help="their API client's burst (kube-scheduler's own default: 100)",
    )


def install(cluster: DevCluster, systems: Iterable[str], scheduler_plugins_src: Path | None) -> None:
    """What the peers among ``systems`` need on the cluster: coscheduling's PodGroup CRD, from its tree."""
    if COSCHEDULING in systems and scheduler_plugins_src is not None:
        cluster.apply_crds(scheduler_plugins_src / CRD)


# -- the workload in each peer's own terms -------------------------------------------------------------------


def namespace_of(path: str) -> str:
    """The namespace of a namespaced collection path (``.../namespaces/<ns>/<plural>``)."""
    parts = path.split("/")
    return parts[parts.index("namespaces") + 1]


def own_pod(system: str, body: JSON) -> JSON:
    """The pod ``body`` with the peer's schedulerName, its group named by the peer's label (coscheduling)."""
    pod = copy.deepcopy(body)
    metadata = pod.setdefault("metadata", {})
    group = (metadata.get("annotations") or {}).pop(c.KUBE_GROUP_NAME_KEY, None)
    if group is not None and system == COSCHEDULING:
        metadata.setdefault("labels", {})[POD_GROUP_LABEL] = group
    pod["spec"]["schedulerName"] = SCHEDULER_NAMES[system]
    return pod


def own_group(body: JSON) -> JSON:
    """Coscheduling's PodGroup for Volcano's PodGroup ``body``: the same name and minMember."""
    return {
        "apiVersion": X_PODGROUPS.api_version,
        "kind": X_PODGROUPS.kind,
        "metadata": {"name": body["metadata"]["name"]},
        "spec": {"minMember": int(body["spec"]["minMember"])},
    }


def own_terms(system: str, objects: Iterable[tuple[str, JSON]]) -> list[tuple[str, JSON]]:
    """``(path, body)`` to create, Volcano's PodGroups and pods, in ``system``'s own terms (unchanged for a
    system that is not one of these peers). ValueError for a gang given to plain kube-scheduler."""
    if system not in SYSTEMS:
        return list(objects)
    out: list[tuple[str, JSON]] = []
    for path, body in objects:
        if body.get("kind") != c.PODGROUP_KIND:
            out.append((path, own_pod(system, body)))
        elif system == COSCHEDULING:
            out.append((X_PODGROUPS.collection_path(namespace_of(path)), own_group(body)))
        elif int(body["spec"]["minMember"]) > 1:
            raise ValueError(f"{PLAIN} has no gangs: PodGroup {body['metadata']['name']}")
    return out


# -- the process ---------------------------------------------------------------------------------------------


def scheduler_config(system: str, kubeconfig: Path, qps: float, burst: int) -> JSON:
    """The KubeSchedulerConfiguration: one profile under the peer's schedulerName; for coscheduling, the
    plugin enabled as its README says (queueSort replaced, every other point added to the defaults)."""
    profile: JSON = {"schedulerName": SCHEDULER_NAMES[system]}
    if system == COSCHEDULING:
        profile["plugins"] = {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        }
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": qps, "burst": burst},
        "profiles": [profile],
    }


def binary(system: str, scheduler_plugins: Path | None) -> Path:
    """kube-scheduler: the control plane's own build; coscheduling: scheduler-plugins' (built beforehand)."""
    if system == PLAIN:
        return KUBE_SCHEDULER.binary(cache_dir())
    if scheduler_plugins is None:
        raise ValueError(f"{COSCHEDULING} needs scheduler-plugins' binary (build_scheduler_plugins.py)")
    return scheduler_plugins


def launch(
    system: str,
    kubeconfig: Path,
    log_file: LogFile,
    *,
    scheduler_plugins: Path | None,
    qps: float = QPS,
    burst: int = BURST,
) -> tuple[subprocess.Popen[bytes], Callable[[float], None]]:
    """The peer's scheduler process, and what blocks until it is ready (its /readyz: informers synced),
    at most that many seconds. Its config is written beside the kubeconfig (the cluster's run folder)."""
    config = kubeconfig.parent / f"{system}-scheduler-config.json"
    config.write_text(json.dumps(scheduler_config(system, kubeconfig, qps, burst), indent=2))
    (port,) = free_ports(1)
    process = subprocess.Popen(
        [str(binary(system, scheduler_plugins)), f"--config={config}",
         f"--secure-port={port}", "--bind-address=127.0.0.1",
         # Anonymous reads of /readyz and /metrics: there is no delegated authentication here.
         "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"],
        stderr=log_file, stdout=log_file,
    )  # fmt: skip
    return process, lambda within: wait_readyz(port, process, within)


def wait_readyz(port: int, process: subprocess.Popen[bytes], within: float) -> None:
    """Until the process's /readyz (HTTPS, its own self-signed certificate) answers 200."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the scheduler exited with code {process.returncode}; see --scheduler-log")
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", timeout=1, context=context) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the scheduler not ready within {within}s (:{port}/readyz); see --scheduler-log")
