"""Dynamic Resource Allocation for the framework: a pod's claims, what they count against queues, and the
one door to the rest of DRA.

A pod with ``spec.resourceClaims`` fits a node only if every claim it uses can be satisfied there: a claim
already allocated pins the pod to the nodes its allocation names; unallocated ones are given devices
together by the allocator. The work is split by what it reads: ``dra_records`` turns DeviceClasses,
ResourceSlices and ResourceClaims into frozen records (and refuses what the allocator does not implement);
``dra_allocator`` chooses devices on a node and writes the allocation; this module resolves a pod's
``spec.resourceClaims`` to claims and counts their devices per queue. Readers import all of it from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.api import dra as api
from volcano_py.api.bodies.pod import pod_claim_statuses, pod_resource_claims
from volcano_py.api.objects import namespace_of, uid_of
from volcano_py.resources import Resource, to_canonical

from .dra_allocator import Chosen, MatchMemo, NoFit, allocation_body, choose_devices
from .dra_records import (
    Claim,
    ClassSpec,
    Constraint,
    DeviceEntry,
    DeviceId,
    RequestSpec,
    SliceDevices,
    complete_pools,
    read_claim,
    read_class,
    read_slice,
    read_slice_or_none,
)

__all__ = [
    "Chosen",
    "Claim",
    "ClassSpec",
    "Constraint",
    "DeviceEntry",
    "DeviceId",
    "MatchMemo",
    "NoFit",
    "PodClaim",
    "RequestSpec",
    "SliceDevices",
    "allocation_body",
    "choose_devices",
    "claim_devices",
    "claims_class_key",
    "complete_pools",
    "device_counts",
    "held_by_queues",
    "pod_claims",
    "quota_name",
    "read_claim",
    "read_class",
    "read_slice",
    "read_slice_or_none",
]


def quota_name(device_class: str) -> str:
    """The queue resource counting devices of ``device_class`` (Volcano's ``deviceclass/<class>``)."""
    return f"{api.DEVICE_CLASS_QUOTA_PREFIX}{device_class}"


def device_counts(claim: Claim) -> dict[str, int]:
    """Devices the claim asks for, per DeviceClass: ``ExactCount`` requests only (an ``All`` request's size
    is known only once allocated), as Volcano's capacity plugin counts them."""
    out: dict[str, int] = {}
    for request in claim.requests:
        if not request.all:
            out[request.device_class] = out.get(request.device_class, 0) + request.count
    return out


def claim_devices(claim: Claim) -> Resource:
    """``device_counts`` as queue resources (``deviceclass/<class>``)."""
    return Resource({quota_name(c): to_canonical(quota_name(c), n) for c, n in device_counts(claim).items()})


def held_by_queues(
    placed: Iterable[tuple[str, Mapping[str, Any]]], claims: Mapping[str, Claim]
) -> dict[str, Resource]:
    """Per queue, the devices the claims of its placed pods (queue, pod) ask for, each claim once."""
    seen: set[tuple[str, str]] = set()
    out: dict[str, Resource] = {}
    for queue, pod in placed:
        for ref in pod_claims(pod):
            claim = claims.get(ref.claim) if ref.claim else None
            if claim is None or (queue, claim.key) in seen:
                continue
            seen.add((queue, claim.key))
            counted = claim_devices(claim)
            if not counted.is_zero():
                out[queue] = out.get(queue, Resource()) + counted
    return out


# --- a pod's claims ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One entry of a pod's ``spec.resourceClaims``: the claim it resolves to (``namespace/name``), or why
    it does not resolve yet (``waiting``)."""

    entry: str
    claim: str = ""
    template: str = ""
    waiting: str = ""


def pod_claims(pod: Mapping[str, Any]) -> list[PodClaim]:
    """The pod's claims: a named claim as is; a template's through ``status.resourceClaimStatuses``, which
    the resourceclaim controller fills once it has made the pod's claim (until then the pod waits)."""
    namespace = namespace_of(pod) or "default"
    statuses = pod_claim_statuses(pod)
    out: list[PodClaim] = []
    for entry in pod_resource_claims(pod):
        name = str(entry.get("name") or "")
        if entry.get("resourceClaimName"):
            out.append(PodClaim(name, f"{namespace}/{entry['resourceClaimName']}"))
            continue
        template = str(entry.get("resourceClaimTemplateName") or "")
        if name not in statuses:
            waiting = (
                f"waits for the ResourceClaim of spec.resourceClaims[{name}] (template {template}) to be "
                "created by kube-controller-manager's resourceclaim controller"
            )
            out.append(PodClaim(name, template=template, waiting=waiting))
        elif statuses[name]:
            out.append(PodClaim(name, f"{namespace}/{statuses[name]}", template))
        # A status entry without a claim name: the controller decided that no claim is needed.
    return out


def claims_class_key(pod: Mapping[str, Any], claims: Mapping[str, Claim]) -> tuple[Any, ...]:
    """What of a pod's claims decides where it fits: pods whose claims are fresh copies of one template
    place alike; a claim allocated, shared or missing is the pod's own (its name)."""
    uid = uid_of(pod)
    out: list[Any] = []
    for ref in pod_claims(pod):
        claim = claims.get(ref.claim) if ref.claim else None
        fresh = (
            claim is not None
            and ref.template
            and claim.allocated is None
            and not claim.reserved_for
            and claim.owner_uid == uid
        )
        out.append(("template", ref.entry, ref.template) if fresh else ("claim", ref.entry, ref.claim or uid))
    return tuple(out)
