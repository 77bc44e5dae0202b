"""``resource.k8s.io/v1``, Kubernetes' Dynamic Resource Allocation, as far as the scheduler reads it.

Drivers publish the devices of each node (or of many nodes) in ResourceSlices; a DeviceClass names a kind of
device by CEL selectors; a pod asks for devices through ResourceClaims, its own (made from a
ResourceClaimTemplate by kube-controller-manager's resourceclaim controller) or shared ones. The scheduler
picks the devices, writes them in the claim's ``status.allocation`` and reserves the claim for the pod
(``status.reservedFor``) before it binds the pod, as kube-scheduler does. Only the fields read here are
modelled; every other field the server sends is kept (``VolcanoModel`` allows extras).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Self

from pydantic import Field, StrictBool, StrictInt, model_validator

from volcano_py.api.common import VolcanoModel
from volcano_py.api.meta import KubeObject

RESOURCE_GROUP: Final = "resource.k8s.io"
RESOURCE_VERSION: Final = "v1"
RESOURCE_API_VERSION: Final = f"{RESOURCE_GROUP}/{RESOURCE_VERSION}"
DEVICE_CLASS_KIND: Final = "DeviceClass"
DEVICE_CLASS_PLURAL: Final = "deviceclasses"
RESOURCE_SLICE_KIND: Final = "ResourceSlice"
RESOURCE_SLICE_PLURAL: Final = "resourceslices"
RESOURCE_CLAIM_KIND: Final = "ResourceClaim"
RESOURCE_CLAIM_PLURAL: Final = "resourceclaims"
RESOURCE_CLAIM_TEMPLATE_KIND: Final = "ResourceClaimTemplate"

# The node field an allocation's node selector pins a claim with (kube-scheduler writes the same).
NODE_NAME_FIELD: Final = "metadata.name"
# A reservation names the pod: ``reservedFor`` entries of the core group's ``pods``.
RESERVED_FOR_PODS: Final = "pods"
# kube-scheduler's limit on ``status.reservedFor`` (ResourceClaimReservedForMaxSize).
RESERVED_FOR_MAX: Final = 256
# Volcano's queue resource name for a count of devices of one DeviceClass (``deviceclass/<class>``), which a
# Queue's capability, deserved and guarantee may list (its capacity plugin's DRA quota).
DEVICE_CLASS_QUOTA_PREFIX: Final = "deviceclass/"
# The driver and the class of ``volcano-py up``'s fake GPUs (examples/dra-gpu.yaml asks for them).
EXAMPLE_GPU_DRIVER: Final = "gpu.example.com"
EXAMPLE_GPU_CLASS: Final = "gpu.example.com"


class AllocationMode(StrEnum):
    EXACT_COUNT = "ExactCount"
    ALL = "All"


class CELSelector(VolcanoModel):
    expression: str


class DeviceSelector(VolcanoModel):
    cel: CELSelector | None = None


class OpaqueConfig(VolcanoModel):
    driver: str = ""
    parameters: Any = None


class DeviceClassConfig(VolcanoModel):
    opaque: OpaqueConfig | None = None


class DeviceClassSpec(VolcanoModel):
    selectors: list[DeviceSelector] = Field(default_factory=list)
    config: list[DeviceClassConfig] = Field(default_factory=list)
    # Read by no one here (the API server drops it while its feature gate is off); modelled so that it is
    # not reported as an unknown field.
    extended_resource_name: str | None = None


class DeviceClass(KubeObject):
    api_version: str = RESOURCE_API_VERSION
    kind: str = DEVICE_CLASS_KIND
    spec: DeviceClassSpec = Field(default_factory=DeviceClassSpec)


class DeviceAttribute(VolcanoModel):
    """Exactly one of the four is set."""

    int: StrictInt | None = None
    bool: StrictBool | None = None
    string: str | None = None
    version: str | None = None


class DeviceCapacity(VolcanoModel):
    value: str


class Device(VolcanoModel):
    """One device of a slice (``v1`` has the attributes and capacity on the device itself)."""

    name: str
    attributes: dict[str, DeviceAttribute] = Field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = Field(default_factory=dict)
    # Partitionable devices (alpha in 1.34): draw on counters shared with other devices of the slice.
    consumes_counters: list[dict[str, Any]] = Field(default_factory=list)
    # Per-device node selection (with the slice's ``perDeviceNodeSelection``, alpha).
    node_name: str | None = None
    all_nodes: StrictBool | None = None
    node_selector: dict[str, Any] | None = None


class ResourcePool(VolcanoModel):
    name: str
    generation: StrictInt = 0
    resource_slice_count: StrictInt = 1


class ResourceSliceSpec(VolcanoModel):
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: dict[str, Any] | None = None
    all_nodes: StrictBool | None = None
    per_device_node_selection: StrictBool | None = None
    devices: list[Device] = Field(default_factory=list)


class ResourceSlice(KubeObject):
    api_version: str = RESOURCE_API_VERSION
    kind: str = RESOURCE_SLICE_KIND
    spec: ResourceSliceSpec


class CapacityRequirements(VolcanoModel):
    requests: dict[str, str] = Field(default_factory=dict)


class ExactDeviceRequest(VolcanoModel):
    device_class_name: str
    selectors: list[DeviceSelector] = Field(default_factory=list)
    allocation_mode: AllocationMode = AllocationMode.EXACT_COUNT
    count: StrictInt = 1
    admin_access: StrictBool | None = None
    tolerations: list[dict[str, Any]] = Field(default_factory=list)
    capacity: CapacityRequirements | None = None

    @model_validator(mode="after")
    def _default_count(self) -> Self:
        # The API server's default: an ExactCount request written with count 0 (or none) asks for one device.
        if self.allocation_mode is AllocationMode.EXACT_COUNT and self.count == 0:
            self.count = 1
        return self


class DeviceRequest(VolcanoModel):
    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: list[dict[str, Any]] = Field(default_factory=list)


class DeviceConstraint(VolcanoModel):
    # None: every request of the claim.
    requests: list[str] | None = None
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(VolcanoModel):
    requests: list[str] = Field(default_factory=list)
    opaque: OpaqueConfig | None = None


class DeviceClaim(VolcanoModel):
    requests: list[DeviceRequest] = Field(default_factory=list)
    constraints: list[DeviceConstraint] = Field(default_factory=list)
    config: list[DeviceClaimConfiguration] = Field(default_factory=list)


class ResourceClaimSpec(VolcanoModel):
    devices: DeviceClaim = Field(default_factory=DeviceClaim)


class DeviceRequestAllocationResult(VolcanoModel):
    request: str
    driver: str
    pool: str
    device: str
    admin_access: StrictBool | None = None


class DeviceAllocationResult(VolcanoModel):
    results: list[DeviceRequestAllocationResult] = Field(default_factory=list)


class AllocationResult(VolcanoModel):
    devices: DeviceAllocationResult = Field(default_factory=DeviceAllocationResult)
    node_selector: dict[str, Any] | None = None


class ResourceClaimConsumerReference(VolcanoModel):
    api_group: str | None = None
    resource: str
    name: str
    uid: str


class ResourceClaimStatus(VolcanoModel):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = Field(default_factory=list)


class ResourceClaim(KubeObject):
    api_version: str = RESOURCE_API_VERSION
    kind: str = RESOURCE_CLAIM_KIND
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = Field(default_factory=ResourceClaimStatus)


def qualified(name: str, driver: str) -> tuple[str, str]:
    """(domain, name) of an attribute or capacity name: an unqualified one belongs to the device's driver."""
    domain, sep, short = name.rpartition("/")
    return (domain, short) if sep else (driver, name)
