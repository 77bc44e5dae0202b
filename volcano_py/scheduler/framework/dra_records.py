"""DRA's inputs as the allocator reads them: DeviceClasses, the devices of ResourceSlices, ResourceClaims.

Each API object is validated (by the models of ``api.dra``) into a small frozen record, so the device
search (``dra_allocator``) works on plain tuples and never re-reads JSON. A device's attributes and
capacities become the CEL view its selectors see; a slice keeps where its devices are (one node, nodes by
selector, or every node) and the generation of its pool.

Features of ``resource.k8s.io/v1`` the allocator does not implement are refused when a claim is read, naming
the claim and the field: prioritized lists (``firstAvailable``), ``adminAccess``, consumable capacity
(``capacity.requests``) and ``distinctAttribute``. Devices that draw on shared counters (partitionable
devices, alpha) and slices that choose nodes per device are not offered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pydantic import ValidationError

from volcano_py.api import dra as api
from volcano_py.api.dra_cel import AttributeValue, DeviceView, parse_semver
from volcano_py.api.dra_rules import claim_problems
from volcano_py.api.objects import name_of, namespace_of, status_of, uid_of
from volcano_py.log import get_logger
from volcano_py.resources import QuantityError, parse_quantity

log = get_logger(__name__)
# (driver, pool, device name): what an allocation result names.
DeviceId = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class DeviceEntry:
    id: DeviceId
    view: DeviceView
    # Attribute values by fully qualified name (``domain/name``), for ``matchAttribute``.
    attributes: Mapping[str, AttributeValue]


@dataclass(frozen=True, slots=True)
class ClassSpec:
    name: str
    selectors: tuple[str, ...]
    config: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class RequestSpec:
    name: str
    device_class: str
    selectors: tuple[str, ...]
    all: bool
    count: int


@dataclass(frozen=True, slots=True)
class Constraint:
    requests: frozenset[str] | None  # None: every request of the claim
    attribute: str  # fully qualified


@dataclass(frozen=True, slots=True)
class Claim:
    """A ResourceClaim as the allocator reads it. ``refused``: why it cannot be allocated ("" if it can)."""

    namespace: str
    name: str
    uid: str
    requests: tuple[RequestSpec, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    config: tuple[Mapping[str, Any], ...] = ()
    refused: str = ""
    # The devices of its allocation (None: not allocated), and the nodes the allocation is limited to.
    allocated: tuple[DeviceId, ...] | None = None
    node_selector: Mapping[str, Any] | None = None
    reserved_for: tuple[str, ...] = ()
    owner_uid: str = ""
    deleting: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def read_class(obj: Mapping[str, Any]) -> ClassSpec:
    dc = api.DeviceClass.model_validate(obj)
    selectors = tuple(s.cel.expression for s in dc.spec.selectors if s.cel is not None)
    config = tuple(c.to_dict() for c in dc.spec.config)
    return ClassSpec(dc.name, selectors, config)


def _attribute(value: api.DeviceAttribute) -> AttributeValue | None:
    if value.int is not None:
        return value.int
    if value.bool is not None:
        return value.bool
    if value.string is not None:
        return value.string
    if value.version is not None:
        try:
            return parse_semver(value.version)
        except ValueError:
            return None
    return None


def _device(driver: str, pool: str, device: api.Device) -> DeviceEntry:
    attrs: list[tuple[str, str, AttributeValue]] = []
    by_name: dict[str, AttributeValue] = {}
    for name, raw in sorted(device.attributes.items()):
        value = _attribute(raw)
        if value is None:
            continue
        domain, short = api.qualified(name, driver)
        attrs.append((domain, short, value))
        by_name[f"{domain}/{short}"] = value
    capacity: list[tuple[str, str, Fraction]] = []
    for name, cap in sorted(device.capacity.items()):
        try:
            amount = parse_quantity(cap.value)
        except QuantityError:
            continue
        domain, short = api.qualified(name, driver)
        capacity.append((domain, short, amount))
    return DeviceEntry((driver, pool, device.name), (driver, tuple(attrs), tuple(capacity)), by_name)


@dataclass(frozen=True, slots=True)
class SliceDevices:
    """The usable devices of one slice and where they are: one node, nodes by selector, or every node."""

    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str | None
    node_selector: Mapping[str, Any] | None
    all_nodes: bool
    devices: tuple[DeviceEntry, ...]


def read_slice(obj: Mapping[str, Any]) -> SliceDevices:
    rs = api.ResourceSlice.model_validate(obj)
    spec = rs.spec
    devices: tuple[DeviceEntry, ...] = ()
    if not spec.per_device_node_selection:
        devices = tuple(
            _device(spec.driver, spec.pool.name, d) for d in spec.devices if not d.consumes_counters
        )
    return SliceDevices(
        spec.driver,
        spec.pool.name,
        spec.pool.generation,
        spec.pool.resource_slice_count,
        spec.node_name,
        spec.node_selector,
        bool(spec.all_nodes),
        devices,
    )


def read_slice_or_none(obj: Mapping[str, Any]) -> SliceDevices | None:
    """``read_slice``, or None for a slice that does not read (the session goes on without it)."""
    try:
        return read_slice(obj)
    except ValidationError as err:
        log.warning(
            "ResourceSlice unreadable; its devices are not offered", name=name_of(obj), error=str(err)[:200]
        )
        return None


def complete_pools(slices: Iterable[SliceDevices]) -> list[SliceDevices]:
    """The slices of the newest generation of each pool, for pools whose slices are all published (a pool
    being rewritten by its driver is left alone until it is whole again, as kube-scheduler does)."""
    newest: dict[tuple[str, str], list[SliceDevices]] = {}
    for s in slices:
        key = (s.driver, s.pool)
        have = newest.get(key)
        if have is None or s.generation > have[0].generation:
            newest[key] = [s]
        elif s.generation == have[0].generation:
            have.append(s)
    return [s for group in newest.values() if len(group) >= group[0].slice_count for s in group]


def _refusal(key: str, claim: api.ResourceClaim) -> str:
    problems = claim_problems(claim.spec.devices, "spec.devices")
    return f"ResourceClaim {key} {problems[0]}" if problems else ""


def read_claim(obj: Mapping[str, Any]) -> Claim:
    namespace, name = namespace_of(obj), name_of(obj)
    key = f"{namespace}/{name}"
    try:
        claim = api.ResourceClaim.model_validate(obj)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        # Unreadable, yet the devices its allocation names stay held.
        results = ((status_of(obj).get("allocation") or {}).get("devices") or {}).get("results")
        held = tuple(
            (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
            for r in results or ()
            if isinstance(r, Mapping)
        )
        return Claim(
            namespace,
            name,
            uid_of(obj),
            refused=f"ResourceClaim {key}: {where}: {first['msg']}",
            allocated=held if results is not None else None,
        )
    owner = next((o for o in claim.metadata.owner_references if o.controller), None)
    allocation = claim.status.allocation
    allocated: tuple[DeviceId, ...] | None = None
    node_selector = None
    if allocation is not None:
        allocated = tuple(
            (r.driver, r.pool, r.device) for r in allocation.devices.results if not r.admin_access
        )
        node_selector = allocation.node_selector
    requests: list[RequestSpec] = []
    refused = _refusal(key, claim)
    if not refused:
        for request in claim.spec.devices.requests:
            exact = request.exactly
            assert exact is not None  # checked by _refusal
            requests.append(
                RequestSpec(
                    request.name,
                    exact.device_class_name,
                    tuple(s.cel.expression for s in exact.selectors if s.cel is not None),
                    exact.allocation_mode is api.AllocationMode.ALL,
                    exact.count,
                )
            )
    constraints = tuple(
        Constraint(
            frozenset(c.requests) if c.requests else None,
            c.match_attribute or "",
        )
        for c in claim.spec.devices.constraints
        if c.match_attribute
    )
    return Claim(
        namespace,
        name,
        claim.metadata.uid or "",
        tuple(requests),
        constraints,
        tuple(c.to_dict() for c in claim.spec.devices.config),
        refused,
        allocated,
        node_selector,
        tuple(r.uid for r in claim.status.reserved_for),
        owner.uid if owner is not None else "",
        claim.metadata.deletion_timestamp is not None,
    )
