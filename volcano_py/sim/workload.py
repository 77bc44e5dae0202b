"""What arrives in a simulation: nodes, and jobs with their arrival time, duration and pod shape.

Two sources: ``synthetic`` (seeded, GPU-cluster-like: gang sizes, bursts, queues, Philly-like durations)
and ``openb`` (the Alibaba cluster-trace-gpu-v2023 CSVs: ``*_node_list_*.csv`` and ``*_pod_list_*.csv``).
"""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from volcano_py.api import constants as k
from volcano_py.api.scheduling import QueueState
from volcano_py.resources import CPU, GPU, MEMORY, Resource, to_canonical, unit_scale

# Per-card GPU memory the shared-GPU variant gives every card, so a fraction of a GPU is a number of MiB.
SHARED_CARD_MIB = 16384


def device_amount(request: Resource, name: str) -> int:
    """A device resource of ``request`` in its own unit (MiB of gpu-memory, cards of gpu-number)."""
    return request.amount(name) // unit_scale(name)


@dataclass(frozen=True, slots=True)
class SimNode:
    name: str
    allocatable: Resource
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SimJob:
    """A gang of ``replicas`` identical pods; ``min_available`` of them must start together."""

    name: str
    arrival: float
    duration: float
    replicas: int
    request: Resource
    min_available: int
    queue: str = "default"
    priority_class: str = ""
    # ``{"mode": "hard", "highestTierAllowed": 1}`` as a PodGroup's spec.networkTopology, or None.
    network_topology: dict[str, object] | None = None

    @property
    def gpus(self) -> int:
        """Milli-GPUs the whole job asks for."""
        return self.request.amount(GPU) * self.replicas


@dataclass(frozen=True, slots=True)
class Workload:
    nodes: tuple[SimNode, ...]
    jobs: tuple[SimJob, ...]
    # HyperNode objects (topology.volcano.sh) over the nodes, when the source has a topology.
    hypernodes: tuple[dict[str, object], ...] = ()
    queues: tuple[dict[str, object], ...] = ()
    name: str = ""
    # Further objects every session reads as the scheduler would (PriorityClasses, PodDisruptionBudgets,
    # ResourceQuotas of the simulator's namespace, Numatopologies of its nodes), unchanged by the simulation.
    priority_classes: tuple[dict[str, object], ...] = ()
    pdbs: tuple[dict[str, object], ...] = ()
    resource_quotas: tuple[dict[str, object], ...] = ()
    numatopologies: tuple[dict[str, object], ...] = ()


RACK_LABEL = "topology.volcano-py.io/rack"
SPINE_LABEL = "topology.volcano-py.io/spine"


def racked_nodes(
    count: int, *, gpus: int, cpu: str, memory: str, rack_size: int = 8, racks_per_spine: int = 8
) -> tuple[tuple[SimNode, ...], tuple[dict[str, object], ...]]:
    """``count`` identical GPU nodes in racks and spines, and HyperNodes: tier 1 racks, tier 2 spines."""
    nodes = []
    for i in range(count):
        rack_no, spine_no = i // rack_size, i // (rack_size * racks_per_spine)
        nodes.append(
            SimNode(
                name=f"node-{i:05d}",
                allocatable=Resource.of(cpu=cpu, memory=memory, pods=110, gpu=gpus),
                labels={RACK_LABEL: f"rack-{rack_no}", SPINE_LABEL: f"spine-{spine_no}"},
            )
        )
    racks = sorted({n.labels[RACK_LABEL] for n in nodes}, key=lambda r: int(r.split("-")[1]))
    spines = sorted({n.labels[SPINE_LABEL] for n in nodes}, key=lambda s: int(s.split("-")[1]))
    hypernodes: list[dict[str, object]] = []
    for rack in racks:
        hypernodes.append(_hypernode(rack, 1, "Node", {"labelMatch": {"matchLabels": {RACK_LABEL: rack}}}))
    for spine in spines:
        members = sorted({n.labels[RACK_LABEL] for n in nodes if n.labels[SPINE_LABEL] == spine})
        hypernodes.append(
            {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": {"name": spine},
                "spec": {
                    "tier": 2,
                    "members": [
                        {"type": "HyperNode", "selector": {"exactMatch": {"name": r}}} for r in members
                    ],
                },
            }
        )
    return tuple(nodes), tuple(hypernodes)


def _hypernode(name: str, tier: int, member_type: str, selector: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "members": [{"type": member_type, "selector": selector}]},
    }


def philly_durations(path: Path | None) -> list[float]:
    """Task runtimes in seconds from the Philly trace's runtime CSV (zero runtimes dropped), or a fallback."""
    if path is None or not path.exists():
        # Roughly Philly's shape: many short tasks, a long tail (median ~20 min).
        return [60.0, 300.0, 600.0, 1200.0, 1200.0, 2400.0, 3600.0, 7200.0, 14400.0, 86400.0]
    with path.open() as fh:
        values = [float(row["runtime"]) for row in csv.DictReader(fh) if row.get("runtime")]
    return [v for v in values if v > 0] or [600.0]


def synthetic(
    *,
    nodes: int = 64,
    gpus_per_node: int = 8,
    jobs: int = 200,
    seed: int = 0,
    mean_interarrival: float = 30.0,
    burst_every: int = 25,
    burst_size: int = 10,
    gang_sizes: Sequence[int] = (1, 1, 1, 2, 4, 8, 16),
    gpus_per_pod: Sequence[int] = (1, 1, 2, 4, 8),
    queues: Sequence[str] = ("default",),
    durations: Sequence[float] | None = None,
    topology_fraction: float = 0.0,
) -> Workload:
    """A seeded GPU workload: Poisson arrivals with periodic bursts, gangs of 1-16 pods, several queues."""
    rng = random.Random(seed)
    node_list, hypernodes = racked_nodes(nodes, gpus=gpus_per_node, cpu="96", memory="768Gi")
    runtimes = list(durations) if durations else philly_durations(None)
    out: list[SimJob] = []
    clock = 0.0
    for i in range(jobs):
        if burst_every and i % burst_every < burst_size and i >= burst_every:
            clock += rng.uniform(0.0, 1.0)  # a burst: many jobs within a second
        else:
            clock += rng.expovariate(1.0 / mean_interarrival)
        size = rng.choice(gang_sizes)
        gpus = min(rng.choice(gpus_per_pod), gpus_per_node)
        if size > 1:
            gpus = gpus_per_node if rng.random() < 0.5 else gpus  # big gangs mostly take whole nodes
        request = Resource.of(cpu=gpus * 8 or 4, memory=f"{max(gpus, 1) * 64}Gi", gpu=gpus)
        topology = (
            {"mode": "hard", "highestTierAllowed": 1}
            if size > 1 and size * gpus <= 8 * gpus_per_node and rng.random() < topology_fraction
            else None
        )
        out.append(
            SimJob(
                name=f"job-{i:05d}",
                arrival=round(clock, 3),
                duration=max(1.0, min(rng.choice(runtimes), 7 * 86400.0)),
                replicas=size,
                request=request,
                min_available=size,
                queue=queues[i % len(queues)],
                network_topology=topology,
            )
        )
    queue_objs = tuple(_queue(q) for q in queues if q != "default")
    return Workload(node_list, tuple(out), hypernodes, queue_objs, name="synthetic")


def _queue(name: str) -> dict[str, object]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "reclaimable": True},
        "status": {"state": QueueState.OPEN.value},
    }


def openb(
    node_csv: Path,
    pod_csv: Path,
    *,
    max_jobs: int | None = None,
    gang_variant: bool = False,
    seed: int = 0,
    arrival_scale: float = 1.0,
    shared_gpus: bool = False,
) -> Workload:
    """The openb trace: each pod becomes a one-pod job; with ``gang_variant`` every 8-GPU pod becomes a gang.

    A pod's duration is ``deletion_time - creation_time`` when the pod list has them, else drawn from a
    lifetime of 540 s (the trace's median). Fractional GPUs (``gpu_milli`` < 1000) are asked for in
    milli-GPUs; with ``shared_gpus`` they are asked as Volcano's GPU sharing does instead: a fraction of one
    card as ``volcano.sh/gpu-memory`` (cards of ``SHARED_CARD_MIB``) and whole GPUs as
    ``volcano.sh/gpu-number``, which the nodes advertise per card for the deviceshare plugin.
    """
    with node_csv.open() as fh:
        nodes = tuple(
            SimNode(
                name=row["sn"],
                allocatable=Resource(
                    {
                        CPU: int(row["cpu_milli"]),
                        MEMORY: int(row["memory_mib"]) * 2**20,
                        "pods": 110,
                        **_gpus(int(row["gpu"]), shared_gpus),
                    }
                ),
                labels={"gpu-model": row.get("model") or ""},
            )
            for row in csv.DictReader(fh)
        )
    rng = random.Random(seed)
    jobs: list[SimJob] = []
    with pod_csv.open() as fh:
        for row in csv.DictReader(fh):
            if max_jobs is not None and len(jobs) >= max_jobs:
                break
            num_gpu, gpu_milli = int(row["num_gpu"]), int(row["gpu_milli"] or 0)
            gpus = gpu_milli if num_gpu == 1 and 0 < gpu_milli < 1000 else num_gpu * 1000
            created = float(row.get("creation_time") or 0) if row.get("creation_time") else None
            deleted = float(row.get("deletion_time") or 0) if row.get("deletion_time") else None
            # The trace spans months at low load; a scale < 1 packs arrivals closer (durations stay).
            arrival = (created if created is not None else len(jobs) * 60.0) * arrival_scale
            duration = (deleted - created) if created is not None and deleted else rng.expovariate(1 / 540)
            if shared_gpus and not gpus:
                device = {}
            elif shared_gpus and gpus % 1000:
                device = {
                    k.GPU_MEMORY_RESOURCE: to_canonical(k.GPU_MEMORY_RESOURCE, gpus * SHARED_CARD_MIB // 1000)
                }
            elif shared_gpus:
                device = {k.GPU_NUMBER_RESOURCE: to_canonical(k.GPU_NUMBER_RESOURCE, gpus // 1000)}
            else:
                device = {GPU: gpus}
            request = Resource({CPU: int(row["cpu_milli"]), MEMORY: int(row["memory_mib"]) * 2**20, **device})
            replicas = 1
            if gang_variant and num_gpu == 8:
                replicas = rng.choice((2, 4))
            jobs.append(
                SimJob(
                    name=row["name"],
                    arrival=arrival,
                    duration=max(1.0, duration),
                    replicas=replicas,
                    request=request,
                    min_available=replicas,
                )
            )
    jobs.sort(key=lambda j: (j.arrival, j.name))
    name = f"openb:{pod_csv.name}" + (":gangs" if gang_variant else "") + (":shared" if shared_gpus else "")
    return Workload(nodes, tuple(jobs), name=name)


def _gpus(cards: int, shared: bool) -> dict[str, int]:
    if not shared:
        return {GPU: cards * 1000}
    if not cards:
        return {}
    return {
        k.GPU_MEMORY_RESOURCE: to_canonical(k.GPU_MEMORY_RESOURCE, cards * SHARED_CARD_MIB),
        k.GPU_NUMBER_RESOURCE: to_canonical(k.GPU_NUMBER_RESOURCE, cards),
    }
