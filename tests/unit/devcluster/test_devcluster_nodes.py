"""Fake node manifests: resources, GPUs and the zone/spine/rack labels."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.devcluster.nodes import (
    GPU_RESOURCE,
    RACK_LABEL,
    SPINE_LABEL,
    ZONE_LABEL,
    GpuSharing,
    Topology,
    node_manifests,
)


def _labels(node: dict[str, Any]) -> dict[str, str]:
    labels: dict[str, str] = node["metadata"]["labels"]
    return labels


def test_nodes_carry_capacity_and_gpus_and_are_managed_by_kwok() -> None:
    nodes = node_manifests(2, prefix="gpu-", cpu="64", memory="512Gi", pods=50, gpus=8)
    assert [n["metadata"]["name"] for n in nodes] == ["gpu-0", "gpu-1"]  # type: ignore[index]
    for node in nodes:
        status: dict[str, Any] = node["status"]  # type: ignore[assignment]
        expected = {
            "cpu": "64",
            "memory": "512Gi",
            "ephemeral-storage": "1Ti",
            "pods": "50",
            GPU_RESOURCE: "8",
        }
        assert status["capacity"] == expected
        assert status["allocatable"] == expected
        assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"  # type: ignore[index]
        assert "spec" not in node  # no kwok NoSchedule taint: schedulers place pods normally


def test_each_node_has_its_own_internal_ip() -> None:
    nodes = node_manifests(3, start=254)
    ips = [n["status"]["addresses"][0] for n in nodes]  # type: ignore[index]
    assert ips == [
        {"type": "InternalIP", "address": "10.192.0.255"},
        {"type": "InternalIP", "address": "10.192.1.0"},
        {"type": "InternalIP", "address": "10.192.1.1"},
    ]


def test_cpu_only_nodes_have_no_gpu_resource() -> None:
    (node,) = node_manifests(1, gpus=0)
    assert GPU_RESOURCE not in node["status"]["capacity"]  # type: ignore[index]


def test_topology_packs_nodes_into_racks_spines_zones() -> None:
    nodes = node_manifests(9, topology=Topology(nodes_per_rack=2, racks_per_spine=2, spines_per_zone=2))
    placed = [(_labels(n)[ZONE_LABEL], _labels(n)[SPINE_LABEL], _labels(n)[RACK_LABEL]) for n in nodes]
    assert placed[0] == ("zone-0", "spine-0", "rack-0")
    assert placed[1] == ("zone-0", "spine-0", "rack-0")
    assert placed[2] == ("zone-0", "spine-0", "rack-1")
    assert placed[4] == ("zone-0", "spine-1", "rack-2")
    assert placed[8] == ("zone-1", "spine-2", "rack-4")


def test_start_continues_numbering_and_topology() -> None:
    (node,) = node_manifests(1, start=8)
    assert node["metadata"]["name"] == "node-8"  # type: ignore[index]
    assert _labels(node)[RACK_LABEL] == "rack-2"


def test_extra_labels_are_added_and_can_override() -> None:
    (node,) = node_manifests(1, labels={"pool": "a", ZONE_LABEL: "us-east-1a"})
    assert _labels(node)["pool"] == "a"
    assert _labels(node)[ZONE_LABEL] == "us-east-1a"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"cpu": "lots"}, "cpu='lots'"),
        ({"memory": "1 GB"}, "memory='1 GB'"),
        ({"pods": 0}, "pods=0"),
        ({"gpus": -1}, "gpus=-1"),
    ],
)
def test_bad_values_name_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        node_manifests(1, **kwargs)


def test_topology_sizes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="nodes_per_rack=0"):
        Topology(nodes_per_rack=0)


def test_shared_gpu_nodes_are_read_by_the_scheduler_as_cards() -> None:
    # What the fake node advertises is exactly what deviceshare's bookkeeping reads.
    from volcano_py.scheduler.framework.node import NodeInfo

    (share,) = node_manifests(1, gpus=4, gpu_sharing=GpuSharing("gpushare", memory_mib=16000))
    gpus = NodeInfo.from_node(share).gpus
    assert gpus is not None and [c.memory for c in gpus.cards.values()] == [16000] * 4
    (vgpu,) = node_manifests(1, prefix="v-", gpus=2, gpu_sharing=GpuSharing("vgpu", memory_mib=8000, split=5))
    gpus = NodeInfo.from_node(vgpu).gpus
    assert gpus is not None
    assert [(c.uuid, c.split, c.memory) for c in gpus.cards.values()] == [
        ("GPU-v-0-0", 5, 8000),
        ("GPU-v-0-1", 5, 8000),
    ]


def test_gpu_sharing_refuses_unknown_modes() -> None:
    with pytest.raises(ValueError, match="use gpushare or vgpu"):
        GpuSharing("mig")
