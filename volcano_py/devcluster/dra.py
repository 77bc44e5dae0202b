"""A fake DRA driver for the local cluster: the ResourceSlices a GPU driver would publish for each KWOK node.

``volcano-py up`` publishes, for every GPU node, one slice of driver ``gpu.example.com`` with the node's GPUs
as devices (attributes ``model``, ``index``; capacity ``memory``), and a DeviceClass of the same name that
selects the driver's devices, so a manifest with a ResourceClaimTemplate asking for ``gpu.example.com``
devices runs there (``examples/dra-gpu.yaml``). No kubelet plugin prepares them: KWOK runs no containers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from volcano_py.api import dra

FAKE_GPU_MEMORY = "80Gi"


def gpu_model(memory: str) -> str:
    """The fake model name of a GPU of ``memory`` (``example-gpu-80g`` for 80Gi)."""
    return f"example-gpu-{memory.lower().removesuffix('i')}"


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": dra.RESOURCE_API_VERSION,
        "kind": dra.DEVICE_CLASS_KIND,
        "metadata": {"name": dra.EXAMPLE_GPU_CLASS},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{dra.EXAMPLE_GPU_DRIVER}"'}}]},
    }


def gpu_slice(node: str, gpus: int | Sequence[str]) -> dict[str, Any]:
    """The slice of ``node``: its own pool, devices ``gpu-0`` .. ``gpu-<n-1>``. ``gpus``: how many, each
    of ``FAKE_GPU_MEMORY``; or each device's memory in turn (a node of mixed GPUs, for selectors on it)."""
    memories = [FAKE_GPU_MEMORY] * gpus if isinstance(gpus, int) else list(gpus)
    devices = [
        {
            "name": f"gpu-{i}",
            "attributes": {"model": {"string": gpu_model(memory)}, "index": {"int": i}},
            "capacity": {"memory": {"value": memory}},
        }
        for i, memory in enumerate(memories)
    ]
    return {
        "apiVersion": dra.RESOURCE_API_VERSION,
        "kind": dra.RESOURCE_SLICE_KIND,
        "metadata": {"name": f"{node}-{dra.EXAMPLE_GPU_DRIVER}"},
        "spec": {
            "driver": dra.EXAMPLE_GPU_DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def fake_gpu_driver(nodes: Sequence[str], gpus: int) -> list[dict[str, Any]]:
    """The DeviceClass and one slice per node (none when nodes have no GPUs)."""
    if gpus <= 0 or not nodes:
        return []
    return [device_class(), *(gpu_slice(node, gpus) for node in nodes)]
