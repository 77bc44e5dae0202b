"""Fake node manifests: capacity, GPUs and a zone/spine/rack topology that HyperNodes can be built over.

Nodes are numbered in order and packed into racks, racks into spines, spines into zones, so node ``i`` sits in
rack ``i // nodes_per_rack``. Rack, spine and zone names are global (``rack-3``, not ``spine-1/rack-1``), so a
label value alone identifies a group. The annotation ``kwok.x-k8s.io/node: fake`` is what makes KWOK manage a
node; the node carries no KWOK taint, so a scheduler places pods on it like on any node.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from volcano_py.api import constants as k
from volcano_py.resources import parse_quantity

ZONE_LABEL = "topology.kubernetes.io/zone"
SPINE_LABEL = "topology.volcano-py.io/spine"
RACK_LABEL = "topology.volcano-py.io/rack"
HOSTNAME_LABEL = "kubernetes.io/hostname"
GPU_RESOURCE = "nvidia.com/gpu"
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_NODE_VALUE = "fake"
# Volcano's KWOK benchmarks label their fake nodes this way; kept so its manifests' nodeSelectors work.
TYPE_LABEL = "type"
TYPE_VALUE = "kwok"
# Node InternalIPs are 10.192.0.0/12 + index: apart from the pod (10.244/16) and service (10.96/16) ranges.
NODE_IP_BASE = ipaddress.IPv4Address("10.192.0.1")
MAX_NODES = 1 << 20


@dataclass(frozen=True, slots=True)
class GpuSharing:
    """Make the node's GPUs shareable, as a GPU-sharing device plugin would report them.

    ``gpushare``: Volcano's gpushare plugin's capacity, ``volcano.sh/gpu-memory`` (all cards, MiB) and
    ``volcano.sh/gpu-number``. ``vgpu``: HAMi's ``volcano.sh/vgpu-number`` (cards x ``split``),
    ``vgpu-memory``, ``vgpu-cores`` (100 per card) and the ``volcano.sh/node-vgpu-register`` annotation
    with one healthy card entry each.
    """

    mode: str = "gpushare"
    memory_mib: int = 16384
    split: int = 10

    def __post_init__(self) -> None:
        if self.mode not in ("gpushare", "vgpu"):
            raise ValueError(f"GpuSharing.mode={self.mode!r}: use gpushare or vgpu")
        if self.memory_mib < 1 or self.split < 1:
            raise ValueError("GpuSharing.memory_mib and .split must be at least 1")

    def resources(self, gpus: int) -> dict[str, str]:
        if self.mode == "gpushare":
            return {k.GPU_MEMORY_RESOURCE: str(gpus * self.memory_mib), k.GPU_NUMBER_RESOURCE: str(gpus)}
        return {
            k.VGPU_NUMBER_RESOURCE: str(gpus * self.split),
            k.VGPU_MEMORY_RESOURCE: str(gpus * self.memory_mib),
            k.VGPU_CORES_RESOURCE: str(gpus * 100),
        }

    def annotations(self, node: str, gpus: int) -> dict[str, str]:
        if self.mode != "vgpu":
            return {}
        cards = ":".join(
            f"GPU-{node}-{i},{self.split},{self.memory_mib},NVIDIA-KWOK,true,hami-core" for i in range(gpus)
        )
        return {k.VGPU_NODE_REGISTER_KEY: cards + ":"}


@dataclass(frozen=True, slots=True)
class Topology:
    nodes_per_rack: int = 4
    racks_per_spine: int = 2
    spines_per_zone: int = 2

    def __post_init__(self) -> None:
        for field in ("nodes_per_rack", "racks_per_spine", "spines_per_zone"):
            if getattr(self, field) < 1:
                raise ValueError(f"Topology.{field}={getattr(self, field)}: must be at least 1")

    def place(self, index: int) -> tuple[int, int, int]:
        """(zone, spine, rack) numbers of the node with that index."""
        rack = index // self.nodes_per_rack
        spine = rack // self.racks_per_spine
        return spine // self.spines_per_zone, spine, rack


def _check_quantity(field: str, value: str) -> None:
    try:
        parse_quantity(value)
    except ValueError as err:
        raise ValueError(f"{field}={value!r}: {err}") from err


def node_manifests(
    count: int,
    *,
    prefix: str = "node-",
    cpu: str = "32",
    memory: str = "256Gi",
    ephemeral_storage: str = "1Ti",
    pods: int = 110,
    gpus: int = 8,
    labels: Mapping[str, str] | None = None,
    topology: Topology | None = None,
    start: int = 0,
    gpu_sharing: GpuSharing | None = None,
) -> list[dict[str, object]]:
    """``count`` Node objects named ``{prefix}{start}``, ``{prefix}{start + 1}``, ...

    ``status.capacity`` and ``allocatable`` are set on create; KWOK keeps them when it initialises the node.
    ``gpus=0`` leaves ``nvidia.com/gpu`` out altogether, as on a real CPU-only node. ``ephemeral-storage`` is
    there because every kubelet reports its node's disk, and manifests that request it (Volcano's
    PaddlePaddle example asks 22Gi) must fit as they would on a real node. ``gpu_sharing`` adds what a
    GPU-sharing device plugin reports for the node's ``gpus`` cards.
    """
    if count < 0:
        raise ValueError(f"count={count}: must be >= 0")
    if pods < 1:
        raise ValueError(f"pods={pods}: a node must admit at least one pod")
    if gpus < 0:
        raise ValueError(f"gpus={gpus}: must be >= 0")
    _check_quantity("cpu", cpu)
    _check_quantity("memory", memory)
    _check_quantity("ephemeral_storage", ephemeral_storage)
    layout = topology or Topology()
    resources: dict[str, str] = {
        "cpu": cpu,
        "memory": memory,
        "ephemeral-storage": ephemeral_storage,
        "pods": str(pods),
    }
    if gpus:
        resources[GPU_RESOURCE] = str(gpus)
        if gpu_sharing is not None:
            resources.update(gpu_sharing.resources(gpus))
    manifests: list[dict[str, object]] = []
    for index in range(start, start + count):
        name = f"{prefix}{index}"
        if index >= MAX_NODES:
            raise ValueError(f"node index {index}: at most {MAX_NODES} fake nodes fit the node IP range")
        zone, spine, rack = layout.place(index)
        node_labels = {
            HOSTNAME_LABEL: name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            TYPE_LABEL: TYPE_VALUE,
            ZONE_LABEL: f"zone-{zone}",
            SPINE_LABEL: f"spine-{spine}",
            RACK_LABEL: f"rack-{rack}",
        }
        node_labels.update(labels or {})
        manifests.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": node_labels,
                    "annotations": {
                        KWOK_NODE_ANNOTATION: KWOK_NODE_VALUE,
                        "node.alpha.kubernetes.io/ttl": "0",
                        **(gpu_sharing.annotations(name, gpus) if gpu_sharing and gpus else {}),
                    },
                },
                "status": {
                    "capacity": dict(resources),
                    "allocatable": dict(resources),
                    # kwok keeps addresses set on create; each node gets its own, as real nodes do.
                    "addresses": [
                        {"type": "InternalIP", "address": str(NODE_IP_BASE + index)},
                        {"type": "Hostname", "address": name},
                    ],
                },
            }
        )
    return manifests
