"""ResourceClaim writes of the bind: allocate a claim and reserve it for the pod, or take that back.

kube-scheduler writes a claim's ``status.allocation`` and adds the pod to ``status.reservedFor`` before it
binds the pod (the kubelet prepares only devices of a claim reserved for the pod), and removes the
reservation, and the allocation it made when no other pod holds the claim, when the bind fails. Both are a
read then an update of the status with the claim's resourceVersion, read again on a conflict (another pod of
the same shared claim may be written at the same moment).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api import dra
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import RESOURCE_CLAIMS

_TRIES: Final = 5


class ClaimError(RuntimeError):
    """The claim cannot be allocated or reserved as decided (it changed meanwhile); the message names it."""


def _results(allocation: Mapping[str, Any] | None) -> list[Any]:
    return list(((allocation or {}).get("devices") or {}).get("results") or [])


async def reserve_claim(
    client: KubeClient,
    namespace: str,
    name: str,
    uid: str,
    allocation: Mapping[str, Any] | None,
    pod_name: str,
    pod_uid: str,
) -> bool:
    """Make the claim allocated as ``allocation`` (None: it must be allocated already) and reserved for the
    pod. True when this call wrote the allocation (so an undo removes it)."""
    key = f"{namespace}/{name}"
    path = RESOURCE_CLAIMS.object_path(name, namespace)
    for _ in range(_TRIES):
        claim = await client.get(path)
        if uid and (claim.get("metadata") or {}).get("uid") != uid:
            raise ClaimError(f"ResourceClaim {key} was deleted and made again since the scheduler read it")
        status = dict(claim.get("status") or {})
        current = status.get("allocation")
        wrote = False
        if current is None:
            if allocation is None:
                raise ClaimError(f"ResourceClaim {key} is no longer allocated")
            status["allocation"] = dict(allocation)
            wrote = True
        elif allocation is not None and _results(current) != _results(allocation):
            raise ClaimError(f"ResourceClaim {key} was allocated other devices meanwhile")
        reserved = list(status.get("reservedFor") or [])
        if any(r.get("uid") == pod_uid for r in reserved):
            if not wrote:
                return False
        else:
            if len(reserved) >= dra.RESERVED_FOR_MAX:
                raise ClaimError(f"ResourceClaim {key} is reserved for {len(reserved)} pods, the most it may")
            reserved.append({"resource": dra.RESERVED_FOR_PODS, "name": pod_name, "uid": pod_uid})
        status["reservedFor"] = reserved
        try:
            await client.replace(
                RESOURCE_CLAIMS.object_path(name, namespace, "status"), {**claim, "status": status}
            )
        except ApiError as exc:
            if exc.conflict:
                continue
            raise
        return wrote
    raise ClaimError(f"ResourceClaim {key} kept changing while it was being reserved ({_TRIES} tries)")


async def unreserve_claim(
    client: KubeClient, namespace: str, name: str, uid: str, pod_uid: str, *, deallocate: bool
) -> None:
    """Remove the pod's reservation; with ``deallocate``, also the allocation once no pod holds the claim."""
    path = RESOURCE_CLAIMS.object_path(name, namespace)
    for _ in range(_TRIES):
        try:
            claim = await client.get(path)
        except ApiError as exc:
            if exc.not_found:
                return
            raise
        if uid and (claim.get("metadata") or {}).get("uid") != uid:
            return
        status = dict(claim.get("status") or {})
        reserved = [r for r in status.get("reservedFor") or [] if r.get("uid") != pod_uid]
        if reserved:
            status["reservedFor"] = reserved
        else:
            status.pop("reservedFor", None)
            if deallocate:
                status.pop("allocation", None)
        if status == (claim.get("status") or {}):
            return
        try:
            await client.replace(
                RESOURCE_CLAIMS.object_path(name, namespace, "status"), {**claim, "status": status}
            )
        except ApiError as exc:
            if exc.conflict:
                continue
            if exc.not_found:
                return
            raise
        return
    raise ClaimError(f"ResourceClaim {namespace}/{name} kept changing while its reservation was removed")
