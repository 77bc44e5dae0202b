"""Writes the scheduler makes, each one request with the smallest body that says it.

Status goes through the ``/status`` subresource so a status write can never clobber a user's spec edit, and
pod conditions use a strategic merge patch so only the condition of that type is replaced.
"""

from __future__ import annotations

from typing import Any

from volcano_py.api.common import now_time
from volcano_py.kube.client import STRATEGIC_MERGE_PATCH, KubeClient
from volcano_py.kube.kinds import PODS, ResourceKind


def condition(type_: str, status: str, reason: str, message: str, *, at: str | None = None) -> dict[str, str]:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": at or now_time(),
    }


async def set_pod_condition(client: KubeClient, namespace: str, name: str, cond: dict[str, str]) -> None:
    await client.patch(
        PODS.object_path(name, namespace, "status"),
        {"status": {"conditions": [cond]}},
        STRATEGIC_MERGE_PATCH,
    )


async def set_nominated_node(client: KubeClient, namespace: str, name: str, node: str) -> None:
    """``status.nominatedNodeName``: where a pipelined (preemptor) pod will go once room frees there."""
    await client.patch(
        PODS.object_path(name, namespace, "status"),
        {"status": {"nominatedNodeName": node}},
        STRATEGIC_MERGE_PATCH,
    )


async def remove_scheduling_gate(client: KubeClient, namespace: str, name: str, gate: str) -> None:
    """Take ``gate`` out of ``spec.schedulingGates`` and leave the others: the list merges by name, so a
    strategic merge patch can delete one entry without reading the pod (removing a gate that is already
    gone changes nothing)."""
    await client.patch(
        PODS.object_path(name, namespace),
        {"spec": {"schedulingGates": [{"name": gate, "$patch": "delete"}]}},
        STRATEGIC_MERGE_PATCH,
    )


async def delete_pod(
    client: KubeClient, namespace: str, name: str, uid: str, grace_seconds: int | None = None
) -> None:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
    if uid:
        body["preconditions"] = {"uid": uid}
    if grace_seconds is not None:
        body["gracePeriodSeconds"] = grace_seconds
    await client.delete(PODS.object_path(name, namespace), body)


async def patch_status(
    client: KubeClient,
    kind: ResourceKind,
    name: str,
    namespace: str | None,
    status: dict[str, Any],
    *,
    subresource: bool = True,
) -> dict[str, Any]:
    """Merge-patch ``status``, through the status subresource unless the CRD has none (Volcano's PodGroup)."""
    path = kind.object_path(name, namespace, "status" if subresource else None)
    return await client.patch(path, {"status": status})
