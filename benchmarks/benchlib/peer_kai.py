"""bench_scale's ``kai`` system: NVIDIA KAI-Scheduler's scheduler, binder and pod-grouper (built by
``build_kai.py``), each a process of its own against the bench's API server through its kubeconfig, without
KAI's operator or Helm chart. ``install`` puts on the cluster what the chart and the operator would: KAI's
CRDs from the source tree, the chart's PriorityClasses and namespaces, a parent and a child Queue whose quota
is the whole cluster; the scheduler's config is the one the operator writes for the default shard.

How each shape is expressed, as KAI's users express it:

- a one-pod job is a bare pod with KAI's schedulerName and queue label; the pod-grouper gives it a PodGroup
  of minMember 1 (priority ``train``), as it does for any pod without an owner;
- a gang is a ``scheduling.run.ai/v2alpha2`` PodGroup with minMember and the queue, and pods annotated
  ``pod-group-name`` (KAI's manual-PodGroup form: the pod-grouper leaves an owner-less pod that carries the
  annotation alone). The pod-grouper makes a gang only from a workload owner it knows (PyTorchJob, MPIJob,
  JobSet, ...), none of which this control plane runs; a batch/v1 Job gets minMember 1;
- a workload built in Volcano's terms (``translate``: the trace mode's GPU pods) keeps its pods' requests,
  each PodGroup becoming KAI's of the same minMember.

What runs differs from the chart's deployment only where a setting would throttle KAI on its client rather
than on its work: the scheduler and binder talk to the API server at Volcano's scheduler defaults (2,000 QPS,
burst 2,000) where the operator gives the binder 20 and 100, and the binder reconciles 100 BindRequests at
a time, as KAI's own scale tests set it (``hack/setup-scale-test-env.sh``). The admission webhook (GPU
sharing and runtime-class rules, for GPU pods), the queue and PodGroup status controllers and the node-scale
adjuster do not run: nothing the scheduler reads comes from them.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Iterable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

from prometheus_client.parser import text_string_to_metric_families

from benchmarks.benchlib.objects import api_pod
from benchmarks.benchlib.peer_kube import namespace_of
from benchmarks.benchlib.systems import LogFile, wait_until
from volcano_py.api import constants as c
from volcano_py.devcluster import DevCluster
from volcano_py.devcluster.ports import free_ports
from volcano_py.kube.kinds import ResourceKind
from volcano_py.resources.quantities import GPU, parse_quantity

JSON = dict[str, Any]
SYSTEM: Final = "kai"
SCHEDULER_NAME: Final = "kai-scheduler"
NAMESPACE: Final = "kai-scheduler"  # the chart's release namespace: the scheduler's leases and events
RESERVATION_NAMESPACE: Final = "kai-resource-reservation"  # the binder's GPU-sharing reservation pods
QUEUE_LABEL: Final = "kai.scheduler/queue"
GROUP_ANNOTATION: Final = "pod-group-name"
PARENT_QUEUE, QUEUE = "default-parent-queue", "default-queue"  # the chart's defaultQueue names
PRIORITY: Final = "train"  # what the pod-grouper gives an owner-less pod; user PodGroups say it too
CRDS: Final = Path("deployments/kai-scheduler/crds")  # inside the KAI source tree
PODGROUPS: Final = ResourceKind("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", namespaced=True)
QUEUES: Final = ResourceKind("scheduling.run.ai", "v2", "queues", "Queue", namespaced=False)

# The chart's PriorityClasses (templates/priorityclasses): name -> value.
PRIORITY_CLASSES: Final = {"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}
# The operator's default shard (SchedulingShardSpec.SetDefaultsWhereNeeded, placement binpack): plugin ->
# priority, run highest first; gpuspread is off under binpack. Actions likewise.
PLUGIN_PRIORITIES: Final = {
    "predicates": 1900, "proportion": 1800, "priority": 1700, "nodeavailability": 1600,
    "resourcetype": 1500, "podaffinity": 1400, "elastic": 1300, "kubeflow": 1200, "ray": 1100,
    "subgrouporder": 1000, "taskorder": 900, "nominatednode": 800, "dynamicresources": 700,
    "minruntime": 600, "topology": 500, "snapshot": 400, "gpupack": 300, "nodeplacement": 200,
    "gpusharingorder": 100,
}  # fmt: skip
ACTIONS: Final = ("allocate", "consolidation", "reclaim", "preempt", "stalegangeviction")
PLACEMENT: Final = "binpack"

API_QPS: Final = 2000  # Volcano's vc-scheduler default (--kube-api-qps, --kube-api-burst)
BINDER_RECONCILES: Final = 100
SCHEDULER_GOGC: Final = "400"  # the operator's default for the scheduler's container
CYCLE_GAUGE: Final = (
    "kai_e2e_scheduling_latency_milliseconds"  # the last cycle's length: a gauge, not a histogram
)
BIND_CONTROLLER: Final = "bindrequest"


# -- what goes on the cluster --------------------------------------------------------------------------------


def scheduler_conf() -> JSON:
    """The scheduler's config, as the operator writes it into its ConfigMap for the default shard."""
    plugins: list[JSON] = []
    for name, _ in sorted(PLUGIN_PRIORITIES.items(), key=lambda kv: (-kv[1], kv[0])):
        plugin: JSON = {"name": name}
        if name == "nodeplacement":
            plugin["arguments"] = {"cpu": PLACEMENT, "gpu": PLACEMENT}
        plugins.append(plugin)
    return {"actions": ", ".join(ACTIONS), "tiers": [{"plugins": plugins}]}


def cluster_quota(nodes: list[JSON]) -> dict[str, int]:
    """The whole cluster's allocatable in a KAI Queue's units: millicpus, megabytes of memory, GPUs."""
    total: dict[str, Fraction] = {"cpu": Fraction(0), "memory": Fraction(0), GPU: Fraction(0)}
    for node in nodes:
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        for name in total:
            if name in allocatable:
                total[name] += parse_quantity(allocatable[name])
    return {
        "cpu": int(total["cpu"] * 1000),
        "memory": int(total["memory"] / 1_000_000),
        "gpu": int(total[GPU]),
    }


def queues(quota: Mapping[str, int]) -> list[JSON]:
    """A parent Queue and its child, each guaranteed ``quota`` (no limit): the run is never held by quota."""

    def queue(name: str, parent: str | None) -> JSON:
        spec: JSON = {
            "resources": {
                resource: {"quota": amount, "limit": -1, "overQuotaWeight": 1}
                for resource, amount in quota.items()
            }
        }
        if parent:
            spec["parentQueue"] = parent
        return {"apiVersion": QUEUES.api_version, "kind": "Queue", "metadata": {"name": name}, "spec": spec}

    return [queue(PARENT_QUEUE, None), queue(QUEUE, PARENT_QUEUE)]


def cluster_objects(quota: Mapping[str, int]) -> list[JSON]:
    """What the chart creates besides the CRDs and the operator: namespaces, PriorityClasses, the queues."""
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        for name in (NAMESPACE, RESERVATION_NAMESPACE)
    ]
    priorities = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
         "value": value}
        for name, value in PRIORITY_CLASSES.items()
    ]  # fmt: skip
    return [*namespaces, *priorities, *queues(quota)]


def install(cluster: DevCluster, kai_src: Path) -> None:
    """KAI's CRDs, namespaces, PriorityClasses and queues on ``cluster``; run once per cluster, after its
    nodes exist (the queues' quota is their sum)."""
    cluster.apply_crds(kai_src / CRDS)
    quota = cluster_quota(cluster.get_json("/api/v1/nodes").get("items") or [])
    listed = {"apiVersion": "v1", "kind": "List", "items": cluster_objects(quota)}
    cluster.kubectl("apply", "-f", "-", input=json.dumps(listed))


# -- the workload --------------------------------------------------------------------------------------------


def podgroup(name: str, size: int) -> JSON:
    """A gang of ``size``: KAI's own PodGroup."""
    return {
        "apiVersion": PODGROUPS.api_version,
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": size, "queue": QUEUE, "priorityClassName": PRIORITY},
    }


def pod(name: str, group: str | None) -> JSON:
    """The benchmarks' pod (same container and requests: every system does the same work) addressed to
    KAI: its schedulerName, the queue label, and its PodGroup, if any, by KAI's annotation."""
    return own_pod(api_pod(name).group(group).obj())


def own_pod(body: JSON) -> JSON:
    """A pod of the bench's (its PodGroup, if any, named by Volcano's annotation) as KAI's: a copy with
    KAI's schedulerName and queue label, its group by KAI's annotation; containers and requests kept."""
    out = copy.deepcopy(body)
    meta = out["metadata"]
    group = (meta.get("annotations") or {}).pop(c.KUBE_GROUP_NAME_KEY, None)
    if group:
        meta["annotations"][GROUP_ANNOTATION] = group
    meta.setdefault("labels", {})[QUEUE_LABEL] = QUEUE
    out["spec"]["schedulerName"] = SCHEDULER_NAME
    return out


def translate(bodies: Iterable[tuple[str, JSON]]) -> list[tuple[str, JSON]]:
    """The bench's ``(path, body)`` creates in Volcano's terms (PodGroups ``scheduling.volcano.sh`` and
    pods) in KAI's: each PodGroup KAI's own of the same name and minMember, in the same namespace; each pod
    ``own_pod``."""
    out: list[tuple[str, JSON]] = []
    for path, body in bodies:
        if body.get("kind") == c.PODGROUP_KIND:
            group = podgroup(body["metadata"]["name"], int(body["spec"]["minMember"]))
            out.append((PODGROUPS.collection_path(namespace_of(path)), group))
        else:
            out.append((path, own_pod(body)))
    return out


# -- the processes -------------------------------------------------------------------------------------------


def _environment(kubeconfig: Path, **extra: str) -> dict[str, str]:
    # Each binary finds the API server through controller-runtime's GetConfigOrDie, which reads KUBECONFIG.
    return {**os.environ, "KUBECONFIG": str(kubeconfig), **extra}


def launch_scheduler(
    kai_bin: Path, kubeconfig: Path, log_file: LogFile, *, schedule_period: float = 1.0
) -> tuple[subprocess.Popen[bytes], int]:
    """KAI's scheduler with the default shard's config, and the port of its /metrics."""
    conf = kubeconfig.parent / "kai-scheduler.yaml"
    conf.write_text(json.dumps(scheduler_conf(), indent=2))  # YAML's superset: the scheduler reads it
    metrics_port, plugin_port = free_ports(2)
    process = subprocess.Popen(
        [str(kai_bin / "scheduler"), f"--scheduler-conf={conf}", f"--scheduler-name={SCHEDULER_NAME}",
         f"--namespace={NAMESPACE}", f"--queue-label-key={QUEUE_LABEL}",
         f"--schedule-period={schedule_period}s", "--leader-elect=false",
         f"--listen-address=127.0.0.1:{metrics_port}", f"--plugin-server-port={plugin_port}",
         f"--qps={API_QPS}", f"--burst={API_QPS}"],
        stderr=log_file, stdout=log_file, env=_environment(kubeconfig, GOGC=SCHEDULER_GOGC),
    )  # fmt: skip
    return process, metrics_port


def launch_binder(kai_bin: Path, kubeconfig: Path, log_file: LogFile) -> tuple[subprocess.Popen[bytes], int]:
    """KAI's binder (it binds what the scheduler asks for in BindRequests), and the port of its /metrics."""
    metrics_port, probe_port = free_ports(2)
    process = subprocess.Popen(
        [str(kai_bin / "binder"), f"--scheduler-name={SCHEDULER_NAME}",
         f"--resource-reservation-namespace={RESERVATION_NAMESPACE}",
         f"--max-concurrent-reconciles={BINDER_RECONCILES}", f"--qps={API_QPS}", f"--burst={API_QPS}",
         f"--metrics-bind-address=127.0.0.1:{metrics_port}",
         f"--health-probe-bind-address=127.0.0.1:{probe_port}"],
        stderr=log_file, stdout=log_file, env=_environment(kubeconfig),
    )  # fmt: skip
    return process, metrics_port


def launch_podgrouper(
    kai_bin: Path, kubeconfig: Path, log_file: LogFile
) -> tuple[subprocess.Popen[bytes], int]:
    """KAI's pod-grouper with the chart's arguments, and the port of its /readyz."""
    metrics_port, probe_port = free_ports(2)
    process = subprocess.Popen(
        [str(kai_bin / "podgrouper"), f"--scheduler-name={SCHEDULER_NAME}",
         f"--queue-label-key={QUEUE_LABEL}",
         f"--metrics-bind-address=127.0.0.1:{metrics_port}",
         f"--health-probe-bind-address=127.0.0.1:{probe_port}"],
        stderr=log_file, stdout=log_file, env=_environment(kubeconfig),
    )  # fmt: skip
    return process, probe_port


def ran_a_cycle(metrics: str) -> bool:
    """The scheduler has run a cycle: it runs none before its caches have synced."""
    return any(
        sample.name == CYCLE_GAUGE and sample.value > 0
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
    )


def binds(metrics: str) -> bool:
    """The binder's BindRequest controller has started (controller-runtime counts its workers from then on;
    its watches sync in the moment after, well before the scheduler's first cycle, which waits for more)."""
    return any(
        sample.labels.get("controller") == BIND_CONTROLLER
        for family in text_string_to_metric_families(metrics)
        if family.name == "controller_runtime_active_workers"
        for sample in family.samples
    )


def wait_scheduler(port: int, process: subprocess.Popen[bytes], within: float) -> None:
    wait_until(f"http://127.0.0.1:{port}/metrics", ran_a_cycle, {"kai scheduler": process}, within)


def wait_binder(port: int, process: subprocess.Popen[bytes], within: float) -> None:
    wait_until(f"http://127.0.0.1:{port}/metrics", binds, {"kai binder": process}, within)


def wait_podgrouper(port: int, process: subprocess.Popen[bytes], within: float) -> None:
    wait_until(f"http://127.0.0.1:{port}/readyz", lambda _text: True, {"kai podgrouper": process}, within)
