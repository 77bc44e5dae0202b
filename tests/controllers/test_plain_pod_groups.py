"""Plain pods get their PodGroup from an informer of our own, one create and one patch per pod.

Through Kopf every event of every pod cost the controller about 4 ms of CPU, and a plain pod's later events
(its bind, its status), seen before the annotation came back, created its group and patched it again:
1.5 creates and 2 patches per pod at 5,000 plain pods. These pin that pods are not a Kopf-watched kind, that
a pod is queued once however many events it gets before it is handled, and that once annotated it is not
written again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from volcano_py.api import constants as c
from volcano_py.controllers.handlers import build_registry
from volcano_py.controllers.podgroup.worker import PlainPodGroups
from volcano_py.controllers.runtime.context import ControllerContext, ControllerOptions
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.kube.kinds import PODS, REPLICASETS
from volcano_py.kube.store import Delta, EventType


class RecordingClient:
    """Records the writes the handler makes; answers as an API server that accepts them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("create", path))
        return body

    async def patch(self, path: str, body: dict[str, Any], content_type: str) -> dict[str, Any]:
        self.calls.append(("patch", path))
        return body

    async def delete(self, path: str) -> dict[str, Any]:
        self.calls.append(("delete", path))
        return {}


def context(client: Any = None) -> ControllerContext:
    ctx = ControllerContext(
        options=ControllerOptions(),
        client=client,
        recorder=None,
        metrics=ControllerMetrics(),  # type: ignore[arg-type]
    )
    return ctx


def pod(name: str = "p", *, node: str | None = None, group: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    if group:
        meta["annotations"] = {c.KUBE_GROUP_NAME_KEY: group}
    spec: dict[str, Any] = {
        "schedulerName": "volcano",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {}}


def test_no_kopf_handler_watches_pods() -> None:
    registry = build_registry(context())
    watched = {selector.any_name for selector in registry._watching.get_all_selectors()}
    indexed = {selector.any_name for selector in registry._indexing.get_all_selectors()}
    assert "pods" not in watched | indexed, watched | indexed
    assert {"queues", "commands"} <= watched  # the registry was read, not empty


def test_one_informer_per_scheduler_name_selected_by_the_server() -> None:
    ctx = context()
    ctx.options = ControllerOptions(scheduler_names=("volcano", "batch"))
    informers = PlainPodGroups(ctx).informers(["a", None])
    assert {(i.namespace, i.field_selector) for i in informers if i.kind is PODS} == {
        (ns, f"spec.schedulerName={name}") for ns in ("a", None) for name in ("batch", "volcano")
    }
    assert {i.namespace for i in informers if i.kind is REPLICASETS} == {"a", None}


def test_a_pod_is_queued_once_however_many_events_come_before_it_is_handled() -> None:
    groups = PlainPodGroups(context())
    groups.changed(Delta(EventType.ADDED, "ns/p", None, pod()))
    groups.changed(Delta(EventType.MODIFIED, "ns/p", pod(), pod(node="n1")))
    assert groups.queue.depth() == 1
    assert groups.waiting[("ns", "p")]["spec"]["nodeName"] == "n1"  # the newest body is the one handled


def test_one_create_and_one_patch_per_pod_and_none_for_its_later_events() -> None:
    client = RecordingClient()
    groups = PlainPodGroups(context(client))
    groups.changed(Delta(EventType.ADDED, "ns/p", None, pod()))
    asyncio.run(groups.handle(("ns", "p"), None))
    queued = groups.queue.depth()
    assert client.calls == [
        ("create", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups"),
        ("patch", "/api/v1/namespaces/ns/pods/p"),
    ]
    # The bind and the kubelet's status arrive before the watch shows the annotation: nothing more is queued.
    groups.changed(Delta(EventType.MODIFIED, "ns/p", pod(), pod(node="n1")))
    assert groups.queue.depth() == queued and not groups.waiting
    # Once the annotation is seen, the pod is forgotten; nothing is kept per grouped pod.
    groups.changed(Delta(EventType.MODIFIED, "ns/p", pod(node="n1"), pod(node="n1", group="pg")))
    assert not groups.annotated and not groups.waiting


def test_an_event_that_arrives_while_the_pod_is_being_grouped_writes_nothing_more() -> None:
    client = RecordingClient()
    groups = PlainPodGroups(context(client))
    groups.changed(Delta(EventType.ADDED, "ns/p", None, pod()))
    original = client.patch

    async def patch_while_the_bind_arrives(path: str, body: dict[str, Any], content_type: str) -> Any:
        groups.changed(Delta(EventType.MODIFIED, "ns/p", pod(), pod(node="n1")))
        return await original(path, body, content_type)

    client.patch = patch_while_the_bind_arrives  # type: ignore[method-assign]
    asyncio.run(groups.handle(("ns", "p"), None))
    asyncio.run(groups.handle(("ns", "p"), None))  # the queued second look
    assert [verb for verb, _ in client.calls] == ["create", "patch"]


def test_an_existing_group_is_not_created_again_and_a_deleted_pod_is_forgotten() -> None:
    client = RecordingClient()
    ctx = context(client)
    ctx.podgroups_by_key[("ns", "podgroup-uid-p")] = {"metadata": {"name": "podgroup-uid-p"}}
    groups = PlainPodGroups(ctx)
    groups.changed(Delta(EventType.ADDED, "ns/p", None, pod()))
    asyncio.run(groups.handle(("ns", "p"), None))
    assert [verb for verb, _ in client.calls] == ["patch"]
    groups.changed(Delta(EventType.DELETED, "ns/p", pod(), pod()))
    assert not groups.annotated and not groups.waiting


def listed(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as a metadata-only list shows it."""
    return {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": body["metadata"]}


class ReadingClient(RecordingClient):
    """Also answers a pod's GET with ``pod``."""

    def __init__(self, pod: dict[str, Any]) -> None:
        super().__init__()
        self.pod = pod

    async def get(self, path: str, **_: Any) -> dict[str, Any]:
        self.calls.append(("get", path))
        return self.pod


def test_the_informer_lists_pods_metadata_only() -> None:
    informers = PlainPodGroups(context()).informers([None])
    assert [i.list_metadata_only for i in informers if i.kind is PODS] == [True]


def test_a_listed_pod_without_a_group_is_read_whole_then_grouped() -> None:
    client = ReadingClient(pod())
    groups = PlainPodGroups(context(client))
    groups.changed(Delta(EventType.ADDED, "ns/p", None, listed(pod())))
    asyncio.run(groups.handle(("ns", "p"), None))
    assert client.calls == [
        ("get", "/api/v1/namespaces/ns/pods/p"),
        ("create", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups"),
        ("patch", "/api/v1/namespaces/ns/pods/p"),
    ]


def test_a_listed_pod_in_a_group_is_not_read_and_one_grouped_since_is_not_written() -> None:
    client = ReadingClient(pod(group="pg"))
    groups = PlainPodGroups(context(client))
    groups.changed(Delta(EventType.ADDED, "ns/q", None, listed(pod("q", group="pg"))))
    assert groups.queue.depth() == 0 and not groups.waiting
    groups.changed(Delta(EventType.ADDED, "ns/p", None, listed(pod())))
    asyncio.run(groups.handle(("ns", "p"), None))
    assert client.calls == [("get", "/api/v1/namespaces/ns/pods/p")]


def replicaset(uid: str, replicas: int) -> dict[str, Any]:
    return {"metadata": {"name": f"rs-{uid}", "namespace": "ns", "uid": uid}, "spec": {"replicas": replicas}}


def test_a_replicaset_scaled_to_zero_gives_its_podgroup_back_once() -> None:
    # A Deployment's rollout: the old ReplicaSet goes to 0 replicas and stays (revision history).
    client = RecordingClient()
    ctx = context(client)
    ctx.podgroups_by_key[("ns", "podgroup-old")] = {"metadata": {"name": "podgroup-old"}}
    groups = PlainPodGroups(ctx)
    groups.replicaset_changed(
        Delta(EventType.MODIFIED, "ns/rs-old", replicaset("old", 2), replicaset("old", 1))
    )
    assert groups.retiring.depth() == 0
    groups.replicaset_changed(
        Delta(EventType.MODIFIED, "ns/rs-old", replicaset("old", 1), replicaset("old", 0))
    )
    groups.replicaset_changed(Delta(EventType.ADDED, "ns/rs-gone", None, replicaset("gone", 0)))
    assert groups.retiring.depth() == 2
    asyncio.run(groups.retire(("ns", "podgroup-old"), None))
    asyncio.run(groups.retire(("ns", "podgroup-gone"), None))  # no group of its own: no API call
    assert client.calls == [
        ("delete", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/podgroup-old")
    ]
