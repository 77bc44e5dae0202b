"""The local cluster's fake DRA driver: its slices are what the scheduler reads; its class selects them."""

from __future__ import annotations

from volcano_py.api import dra
from volcano_py.api.dra_cel import evaluate
from volcano_py.devcluster.dra import fake_gpu_driver, gpu_slice
from volcano_py.scheduler.framework.dra import read_class, read_slice


def test_each_node_gets_a_complete_pool_of_its_gpus_that_the_class_selects() -> None:
    objects = fake_gpu_driver(["n1", "n2"], 3)
    assert [o["kind"] for o in objects] == ["DeviceClass", "ResourceSlice", "ResourceSlice"]
    klass = read_class(objects[0])
    assert klass.name == dra.EXAMPLE_GPU_CLASS
    for node, obj in zip(["n1", "n2"], objects[1:], strict=True):
        piece = read_slice(obj)
        assert (piece.node_name, piece.pool, piece.slice_count) == (node, node, 1)
        assert [d.id for d in piece.devices] == [(dra.EXAMPLE_GPU_DRIVER, node, f"gpu-{i}") for i in range(3)]
        for device in piece.devices:
            assert all(evaluate(expr, device.view).matches for expr in klass.selectors)


def test_nodes_without_gpus_get_no_driver_objects() -> None:
    assert fake_gpu_driver(["n1"], 0) == []


def test_a_node_of_mixed_gpus_has_each_devices_memory_and_model_for_selectors() -> None:
    piece = read_slice(gpu_slice("n1", ["40Gi", "80Gi"]))
    big = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'
    model = 'device.attributes["gpu.example.com"].model == "example-gpu-40g"'
    assert [evaluate(big, d.view).matches for d in piece.devices] == [False, True]
    assert [evaluate(model, d.view).matches for d in piece.devices] == [True, False]
