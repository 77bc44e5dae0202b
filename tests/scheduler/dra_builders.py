"""Builders for resource.k8s.io objects (DeviceClass, ResourceSlice, ResourceClaim) as the API gives them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api import dra

DRIVER = dra.EXAMPLE_GPU_DRIVER


def make_class(name: str = DRIVER, *selectors: str, driver: str = DRIVER) -> dict[str, Any]:
    exprs = [f'device.driver == "{driver}"', *selectors]
    return {
        "apiVersion": dra.RESOURCE_API_VERSION,
        "kind": dra.DEVICE_CLASS_KIND,
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in exprs]},
    }


def gpu(name: str, memory: str = "80Gi", model: str = "a100", **attributes: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {"model": {"string": model}}
    for key, value in attributes.items():
        kind = "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "string"
        attrs[key] = {kind: value}
    return {"name": name, "attributes": attrs, "capacity": {"memory": {"value": memory}}}


def make_slice(
    node: str | None,
    devices: Sequence[Mapping[str, Any]],
    *,
    driver: str = DRIVER,
    pool: str | None = None,
    generation: int = 0,
    count: int = 1,
    name: str | None = None,
    all_nodes: bool = False,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool or node or "shared", "generation": generation, "resourceSliceCount": count},
        "devices": [dict(d) for d in devices],
    }
    if all_nodes:
        spec["allNodes"] = True
    else:
        spec["nodeName"] = node
    return {
        "apiVersion": dra.RESOURCE_API_VERSION,
        "kind": dra.RESOURCE_SLICE_KIND,
        "metadata": {"name": name or f"{node or 'shared'}-{driver}-{generation}"},
        "spec": spec,
    }


def gpus(node: str, count: int, **kwargs: Any) -> dict[str, Any]:
    return make_slice(node, [gpu(f"gpu-{i}", **kwargs) for i in range(count)])


def request(
    name: str = "gpus",
    count: int = 1,
    *selectors: str,
    device_class: str = DRIVER,
    mode: str | None = None,
) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class, "count": count}
    if mode is not None:
        exactly["allocationMode"] = mode
        if mode == "All":
            exactly.pop("count")
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": exactly}


def make_claim(
    name: str,
    requests: Sequence[Mapping[str, Any]] = (),
    *,
    namespace: str = "default",
    owner_pod: str | None = None,
    constraints: Sequence[Mapping[str, Any]] = (),
    allocated: Sequence[tuple[str, str, str]] | None = None,
    node: str | None = None,
    reserved_for: Sequence[str] = (),
) -> dict[str, Any]:
    """``owner_pod``: the pod the claim was made for from a template (its uid as ``make_pod`` gives it)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"claim-uid-{name}"}
    if owner_pod is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": owner_pod,
                "uid": f"uid-{namespace}-{owner_pod}",
                "controller": True,
            }
        ]
    devices: dict[str, Any] = {"requests": [dict(r) for r in requests or [request()]]}
    if constraints:
        devices["constraints"] = [dict(c) for c in constraints]
    status: dict[str, Any] = {}
    if allocated is not None:
        status["allocation"] = {
            "devices": {
                "results": [
                    {"request": "gpus", "driver": driver, "pool": pool, "device": device}
                    for driver, pool, device in allocated
                ]
            }
        }
        if node:
            status["allocation"]["nodeSelector"] = {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            }
    if reserved_for:
        status["reservedFor"] = [
            {"resource": "pods", "name": p, "uid": f"uid-{namespace}-{p}"} for p in reserved_for
        ]
    return {
        "apiVersion": dra.RESOURCE_API_VERSION,
        "kind": dra.RESOURCE_CLAIM_KIND,
        "metadata": meta,
        "spec": {"devices": devices},
        "status": status,
    }
