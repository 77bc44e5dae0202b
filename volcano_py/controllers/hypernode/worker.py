"""HyperNode discovery's shell: node labels and the controller ConfigMap in, HyperNode writes out; and every
HyperNode's ``status.nodeCount`` kept in step with its members as Volcano's HyperNode controller does.

Nodes come from an informer of our own that reads their metadata only (labels are all discovery reads; a
node's status heartbeats would otherwise be decoded whole, and through Kopf's index every node cost its
start-up gate a share that grows with the square of the nodes: seconds before a restarted controller at
thousands of nodes handled a new Job). HyperNodes, a few per rack, stay a Kopf index. Any node label change
(or a discovered HyperNode deleted by hand) queues one ``discover`` run, so a burst of node events makes
one run. The ConfigMap is read
with one GET per run and re-read every ``POLL_SECONDS`` (watching ConfigMaps would mean reading every
ConfigMap of the cluster). The decisions are ``controllers/hypernode/discovery``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

import kopf

from volcano_py.api import constants as c
from volcano_py.api.bodies.hypernode import hypernode_node_count
from volcano_py.api.objects import label_of, labels_of, name_of
from volcano_py.controllers.hypernode.discovery import (
    LABEL_SOURCE,
    discover,
    member_count,
    parse_config,
    reconcile,
)
from volcano_py.controllers.runtime.context import ControllerContext
from volcano_py.controllers.runtime.workqueue import KeyedQueue
from volcano_py.kube.client import ApiError
from volcano_py.kube.informer import Informer
from volcano_py.kube.kinds import HYPERNODES, NODES
from volcano_py.kube.store import Delta, EventType
from volcano_py.log import get_logger

_log = get_logger(__name__)

JSON = dict[str, Any]
HYPERNODE_INDEX = "vc_hypernodes"
POLL_SECONDS = 30.0
# Node events come in bursts (a rack relabelled, nodes joining): wait this long and run once.
DEBOUNCE_SECONDS = 0.5
CONFIGMAP_PATH = f"/api/v1/namespaces/{c.VOLCANO_SYSTEM_NAMESPACE}/configmaps/{c.CONTROLLER_CONFIGMAP}"
_KEY = "discover"
_COUNTS = "counts"


class TopologyDiscovery:
    def __init__(self, ctx: ControllerContext, *, configmap_path: str = CONFIGMAP_PATH) -> None:
        self.ctx = ctx
        self.configmap_path = configmap_path
        self.queue: KeyedQueue[str, str] = KeyedQueue(is_resync=lambda _r: True)
        self.indices: dict[str, Mapping[Any, Iterable[Any]]] = {}
        self._last_problems: list[str] = []
        self._labels: dict[str, dict[str, str]] = {}  # node name -> labels last seen
        self.nodes = Informer(
            ctx.client, NODES, self.node_changed, list_metadata_only=True, watch_metadata_only=True
        )

    def node_changed(self, delta: Delta) -> None:
        """The node informer's handler (no I/O): a label change queues a discovery run and a recount."""
        name = name_of(delta.new)
        if delta.type is EventType.DELETED:
            self._labels.pop(name, None)
        else:
            current = dict(labels_of(delta.new))
            if self._labels.get(name) == current:
                return  # status heartbeats: the topology cannot have changed
            self._labels[name] = current
        self.queue.add_after(DEBOUNCE_SECONDS, _KEY, "sync")
        self.queue.add_after(DEBOUNCE_SECONDS, _COUNTS, "sync")

    def register(self, registry: kopf.OperatorRegistry) -> None:
        hypernodes = (c.TOPOLOGY_GROUP, c.TOPOLOGY_VERSION, c.HYPERNODE_PLURAL)

        @kopf.index(*hypernodes, id=HYPERNODE_INDEX, registry=registry)
        def index_hypernode(body: kopf.Body, name: str, **_: Any) -> dict[Any, Any]:
            return {
                name: {k: body[k] for k in ("apiVersion", "kind", "metadata", "spec", "status") if k in body}
            }

        @kopf.on.startup(registry=registry)
        def capture_topology_indices(**kwargs: Any) -> None:
            self.indices[HYPERNODE_INDEX] = kwargs[HYPERNODE_INDEX]

        @kopf.on.event(*hypernodes, registry=registry)
        async def hypernode_event(event: kopf.RawEvent, labels: kopf.Labels, **_: Any) -> None:
            if event["type"] != "DELETED":
                self.queue.add_after(DEBOUNCE_SECONDS, _COUNTS, "sync")
            elif labels.get(c.NETWORK_TOPOLOGY_SOURCE_KEY) == LABEL_SOURCE:
                self.queue.add_after(DEBOUNCE_SECONDS, _KEY, "sync")  # one of ours went: make it again

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(self.nodes.run())
            group.create_task(self.queue.run(self._handle, 1))

    def _node_views(self) -> list[JSON]:
        return [{"metadata": {"name": name, "labels": labels}} for name, labels in self._labels.items()]

    async def _handle(self, key: str, _request: str) -> None:
        try:
            await (self.sync() if key == _KEY else self.sync_counts())
        except ApiError as exc:
            _log.warning("hypernode sync failed; retrying", what=key, error=str(exc))
            self.queue.add_after(2.0, key, "sync")

    async def sync_counts(self) -> None:
        """Patch ``status.nodeCount`` of every HyperNode whose member count changed."""
        await self.nodes.synced.wait()  # a partial list would count members away
        nodes = self._labels
        for hn in self._all(HYPERNODE_INDEX):
            count = member_count(hn, nodes)
            if hypernode_node_count(hn) != count:
                path = HYPERNODES.object_path(name_of(hn), None, "status")
                try:
                    await self.ctx.client.patch(path, {"status": {"nodeCount": count}})
                except ApiError as exc:
                    if not exc.not_found:
                        raise

    def _all(self, index: str) -> list[JSON]:
        return [item for store in (self.indices.get(index) or {}).values() for item in store]

    async def sync(self) -> None:
        # Poll the ConfigMap: the next run comes even when no node changes.
        self.queue.add_after(POLL_SECONDS, _KEY, "sync")
        try:
            configmap = await self.ctx.client.get(self.configmap_path)
        except ApiError as exc:
            if exc.not_found or exc.status == 403:
                return  # no discovery configured
            raise
        config = parse_config((configmap.get("data") or {}).get(c.CONTROLLER_CONFIG_KEY))
        if config.problems != self._last_problems:
            for problem in config.problems:
                self.ctx.recorder.record(configmap, "Warning", "InvalidDiscoveryConfig", problem)
                _log.warning("hypernode discovery config", problem=problem)
            self._last_problems = config.problems
        if config.label is None:
            return
        await self.nodes.synced.wait()  # a partial list would delete the HyperNodes of the nodes not yet seen
        existing = [
            h
            for h in self._all(HYPERNODE_INDEX)
            if label_of(h, c.NETWORK_TOPOLOGY_SOURCE_KEY) == LABEL_SOURCE
        ]
        wanted = discover(self._node_views(), config.label, existing)
        plan = reconcile(wanted, existing)
        for body in plan.create:
            try:
                await self.ctx.client.create(HYPERNODES.collection_path(), body)
            except ApiError as exc:
                if not exc.conflict:
                    raise
        for body in plan.update:
            await self.ctx.client.replace(HYPERNODES.object_path(name_of(body)), body)
        for name in plan.delete:
            try:
                await self.ctx.client.delete(HYPERNODES.object_path(name))
            except ApiError as exc:
                if not exc.not_found:
                    raise
        if plan.create or plan.update or plan.delete:
            _log.info("hypernodes discovered", created=len(plan.create), updated=len(plan.update),
                      deleted=len(plan.delete))  # fmt: skip
