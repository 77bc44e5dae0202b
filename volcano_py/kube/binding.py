"""The bind: one ``pods/binding`` POST naming the node, the last write of a pod's placement."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import PODS


def binding_body(
    namespace: str, name: str, uid: str, node: str, annotations: Mapping[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid:
        meta["uid"] = uid  # a pod deleted and recreated under the same name must not receive our bind
    if annotations:
        # The API server copies a Binding's annotations onto the pod as it sets nodeName, in one write, so
        # the device plugin never sees the pod on the node without its chosen GPU cards.
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": meta,
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


async def bind_pod(
    client: KubeClient,
    namespace: str,
    name: str,
    uid: str,
    node: str,
    annotations: Mapping[str, str] | None = None,
) -> None:
    await client.create(
        PODS.object_path(name, namespace, "binding"), binding_body(namespace, name, uid, node, annotations)
    )
