"""GPUs per HyperNode for the metrics: capacity, allocated, and stranded against the pods waiting now."""

from __future__ import annotations

from typing import Any

from volcano_py.scheduler.solver.gpu_report import HyperNodeGpus, hypernode_gpus


def _node(name: str, rack: str, gpus: int = 8) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"rack": rack}},
        "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": str(gpus)}},
    }


def _pod(gpus: int, node: str = "", phase: str = "Running") -> dict[str, Any]:
    resources = {"requests": {"cpu": "1", "nvidia.com/gpu": str(gpus)}}
    return {
        "metadata": {"name": f"p-{node}-{gpus}"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": resources}]},
        "status": {"phase": phase},
    }


def _rack(name: str) -> dict[str, Any]:
    selector = {"labelMatch": {"matchLabels": {"rack": name}}}
    return {
        "metadata": {"name": name},
        "spec": {"tier": 1, "members": [{"type": "Node", "selector": selector}]},
    }


SPINE = {
    "metadata": {"name": "spine"},
    "spec": {
        "tier": 2,
        "members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": n}}} for n in ("r1", "r2")],
    },
}
NODES = [_node("a", "r1"), _node("b", "r1"), _node("c", "r2")]


def test_capacity_allocated_and_stranded_per_hypernode() -> None:
    # Node a holds 6 of 8 GPUs, so 2 are free beside a running pod; a waiting 4-GPU pod cannot use them.
    pods = [_pod(6, "a"), _pod(8, "c"), _pod(4), _pod(1, "b", phase="Succeeded")]
    got = hypernode_gpus(NODES, pods, [_rack("r1"), _rack("r2"), SPINE])
    assert got == {
        "r1": HyperNodeGpus(capacity=16, allocated=6, stranded=2),
        "r2": HyperNodeGpus(capacity=8, allocated=8, stranded=0),
        "spine": HyperNodeGpus(capacity=24, allocated=14, stranded=2),
    }


def test_free_gpus_are_not_stranded_when_a_waiting_pod_fits_them_or_nothing_waits() -> None:
    hypernodes = [_rack("r1")]
    assert hypernode_gpus(NODES, [_pod(6, "a"), _pod(2)], hypernodes)["r1"].stranded == 0
    assert hypernode_gpus(NODES, [_pod(6, "a")], hypernodes)["r1"].stranded == 0


def test_no_hypernodes_or_a_broken_tree_reports_nothing() -> None:
    assert hypernode_gpus(NODES, [], []) == {}
    twice = [_rack("r1"), _rack("r1")]
    assert hypernode_gpus(NODES, [], twice) == {}
